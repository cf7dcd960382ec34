const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];
const LOOPBACK_BINDS = new Set(['127.0.0.1', '::1', 'localhost']);

/** Whether a server bound to `host` (`HOST`) is reachable from this machine only. */
export const isLoopback = (host: string) => LOOPBACK_BINDS.has(host);

/**
 * Whether a request's `Host` is one this server answers to, so a page on another site resolving to
 * 127.0.0.1 (DNS rebinding) cannot read and steer a loopback server's threads from a victim's
 * browser. Bound to loopback: `localhost`, `127.0.0.1`, `[::1]` and `allowed`; elsewhere, only
 * `allowed` if given (else `undefined`: any host). Ports are not compared (proxies change them).
 *
 * @example
 * const accepts = hostCheck({ bind: '127.0.0.1', allowed: ['bridge.internal'] });
 * accepts?.(request.headers.get('host')); // false for 'evil.example:4111'
 */
export function hostCheck(options: { bind: string; allowed?: readonly string[] }): ((host: string | null | undefined) => boolean) | undefined {
  const allowed = (options.allowed ?? []).map((h) => h.toLowerCase());
  const loopback = isLoopback(options.bind);
  if (!loopback && allowed.length === 0) return undefined;
  const accepted = new Set(loopback ? [...LOOPBACK_HOSTS, ...allowed] : allowed);
  return (host) => {
    const name = hostName(host);
    return name !== undefined && accepted.has(name);
  };
}

/** The name part of a `Host` header, lower-cased: `[::1]:4111` → `[::1]`, `Example.com:80` → `example.com`. */
function hostName(header: string | null | undefined): string | undefined {
  if (!header) return undefined;
  const host = header.trim().toLowerCase();
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1) || undefined;
  const colon = host.indexOf(':');
  return colon < 0 ? host : host.slice(0, colon);
}
