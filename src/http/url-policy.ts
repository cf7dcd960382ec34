import type { Message } from '@ag-ui/core';
import type { ErrorDetail } from '../errors.js';

/**
 * Which URLs in input messages the server may be made to fetch.
 *
 * Mastra (through the AI SDK) downloads every `image`/`file` part whose value parses as a URL,
 * whatever the AG-UI source type says, unless the model takes that URL itself: a caller could
 * make the server request internal addresses (SSRF: cloud metadata, admin ports). So any value
 * that parses as a URL is refused unless it is a `data:` URL (inline bytes, nothing fetched) or an
 * `http(s)` URL on an allowed host. Values that are not URLs (base64, provider file ids such as
 * `file-abc123`) are not fetched and pass.
 *
 * @example
 * const policy = createUrlPolicy(['cdn.example.com', '*.images.example.com']);
 * policy.problem('https://cdn.example.com/a.png'); // undefined (allowed)
 * policy.problem('http://169.254.169.254/latest'); // 'URL host "169.254.169.254" is not allowed …'
 * policy.problem('iVBORw0KGgo='); // undefined (base64, not a URL)
 */
export interface UrlPolicy {
  /** Why the server must not fetch `value`, or `undefined` when it may (or `value` is no URL). */
  problem(value: string): string | undefined;
}

/**
 * A policy over `allowedUrlHosts`: exact host names (case-insensitive), or `*.example.com` for any
 * subdomain of `example.com` (at any depth; not `example.com` itself). Ports are not part of the
 * match. An empty list (the default) allows no remote URL at all.
 */
export function createUrlPolicy(allowedHosts: readonly string[]): UrlPolicy {
  const exact = new Set<string>();
  const suffixes: string[] = [];
  for (const host of allowedHosts.map((h) => h.toLowerCase())) {
    if (host.startsWith('*.')) suffixes.push(host.slice(1));
    else exact.add(host);
  }
  const allowed = (host: string) => exact.has(host) || suffixes.some((suffix) => host.endsWith(suffix));
  return {
    problem(value) {
      const url = parseUrl(value);
      if (!url || url.protocol === 'data:') return undefined;
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        return `URL scheme "${url.protocol}" is not allowed: send the bytes inline (base64 or a data: URL)`;
      if (!allowed(url.hostname)) return `URL host "${url.hostname}" is not allowed (allowedUrlHosts): send the bytes inline (base64 or a data: URL)`;
      return undefined;
    },
  };
}

/** `new URL` as Mastra and the AI SDK apply it to part values: what parses is fetched as a URL. */
function parseUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/**
 * The refused URLs in AG-UI messages, one detail per part (`messages.0.content.1.source.value`).
 * Only `user` content parts reach Mastra as image/file parts; tool message media with a URL
 * source becomes text (`translate/messages.ts`) and is never fetched.
 *
 * @example
 * messageUrlDetails([{ id: 'u', role: 'user', content: [{ type: 'image', source: { type: 'url', value: 'http://10.0.0.1/' } }] }], policy);
 * // [{ path: 'messages.0.content.0.source.value', message: 'URL host "10.0.0.1" is not allowed …' }]
 */
export function messageUrlDetails(messages: readonly Message[], policy: UrlPolicy): ErrorDetail[] {
  return messages.flatMap((message, m) => {
    if (message.role !== 'user' || typeof message.content === 'string') return [];
    return message.content.flatMap((part, p) => {
      const problem = part.type === 'text' ? undefined : policy.problem(part.source.value);
      return problem ? [{ path: `messages.${m}.content.${p}.source.value`, message: problem }] : [];
    });
  });
}

/** A signal's contents as the signal routes take them: text, or text and file parts. */
type SignalContents = string | ReadonlyArray<{ type: string; data?: string }>;

/**
 * The refused URLs in a signal's `file` parts (Mastra turns them into message file parts, which
 * it downloads like any other), one detail per part under `at` (e.g. `message.contents`).
 *
 * @example
 * contentsUrlDetails([{ type: 'file', data: 'http://10.0.0.1/', mediaType: 'image/png' }], 'contents', policy);
 * // [{ path: 'contents.0.data', message: 'URL host "10.0.0.1" is not allowed …' }]
 */
export function contentsUrlDetails(contents: SignalContents, at: string, policy: UrlPolicy): ErrorDetail[] {
  if (typeof contents === 'string') return [];
  return contents.flatMap((part, i) => {
    const problem = part.type === 'file' && part.data !== undefined ? policy.problem(part.data) : undefined;
    return problem ? [{ path: `${at}.${i}.data`, message: problem }] : [];
  });
}
