import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import type { Browser, Page } from 'playwright-core';

const require = createRequire(import.meta.url);

/** Debian's chromium: the browser tests drive it with playwright-core (no bundled browser download). */
export const CHROMIUM_PATH = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM_PATH);

/** Launches headless chromium with the flags that keep it quiet and offline. */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** axe-core's WCAG 2.0 / 2.1 A and AA findings on the page as it is now: rule, why, and where. */
export async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated, not added as a <script>: a Content-Security-Policy may refuse inline scripts.
  await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  return page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(
            context: Document,
            options: object,
          ): Promise<{ violations: Array<{ id: string; help: string; nodes: Array<{ target: string[]; failureSummary?: string }> }> }>;
        };
      }
    ).axe;
    // Every rule axe runs by default: WCAG 2.x A and AA, and its best practices.
    const result = await axe.run(document, {});
    return result.violations.flatMap((v) =>
      v.nodes.map((n) => `${v.id}: ${n.target.join(' ')}: ${(n.failureSummary ?? v.help).split('\n').slice(1).join(' ').trim()}`),
    );
  });
}

/** The head of one HTTP request that went through the proxy. */
export interface ProxiedRequest {
  method: string;
  /** Path and query, as sent. */
  path: string;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  /** Which client connection carried it (1, 2, …). */
  connection: number;
}

/**
 * A TCP proxy in front of the server that can sever connections: a real network drop, as a
 * client sees one (its socket is reset mid-response) and as the server sees one (its socket
 * closes). It reads the request heads going through, so a test can check what a reconnect sent.
 * Shared by the client and browser tests.
 */
export interface CutProxy {
  /** `http://127.0.0.1:<port>`: use it in place of the server's origin. */
  origin: string;
  /** Every request head seen, in order. */
  readonly requests: ProxiedRequest[];
  /**
   * Resets every open connection whose latest request matches (default: any thread event stream).
   * Returns how many it cut.
   */
  cut(match?: (request: ProxiedRequest) => boolean): number;
  /** Resolves with the first request (seen or still to come, after index `from`) that matches. */
  waitForRequest(match: (request: ProxiedRequest) => boolean, from?: number): Promise<ProxiedRequest>;
  close(): Promise<void>;
}

const REQUEST_LINE = /^(GET|POST|PUT|PATCH|DELETE|OPTIONS|HEAD) (\S+) HTTP\/1\.[01]\r\n/;
export const isEventStream = (request: ProxiedRequest) => request.method === 'GET' && /\/threads\/[^/]+\/events(\?|$)/.test(request.path);

/** Starts a cuttable proxy to `target` (an `http://host:port…` URL; only its host and port are used). */
export async function startCutProxy(target: string): Promise<CutProxy> {
  const { hostname, port } = new URL(target);
  const requests: ProxiedRequest[] = [];
  const open = new Map<number, { client: net.Socket; upstream: net.Socket; latest?: ProxiedRequest }>();
  let waiters: Array<{ match: (r: ProxiedRequest) => boolean; from: number; resolve: (r: ProxiedRequest) => void }> = [];
  let connections = 0;

  const server = net.createServer((client) => {
    const id = ++connections;
    const upstream = net.connect({ host: hostname, port: Number(port) });
    const entry: { client: net.Socket; upstream: net.Socket; latest?: ProxiedRequest } = { client, upstream };
    open.set(id, entry);
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      const line = REQUEST_LINE.exec(text);
      if (line) {
        const headers: Record<string, string> = {};
        for (const row of text.slice(line[0].length, text.indexOf('\r\n\r\n')).split('\r\n')) {
          const colon = row.indexOf(':');
          if (colon > 0) headers[row.slice(0, colon).trim().toLowerCase()] = row.slice(colon + 1).trim();
        }
        const request = { method: line[1], path: line[2], headers, connection: id };
        entry.latest = request;
        requests.push(request);
        const index = requests.length - 1;
        waiters = waiters.filter((w) => (index >= w.from && w.match(request) ? (w.resolve(request), false) : true));
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    const end = () => {
      open.delete(id);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', () => {});
    upstream.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: proxyPort } = server.address() as net.AddressInfo;

  return {
    origin: `http://127.0.0.1:${proxyPort}`,
    requests,
    cut: (match = isEventStream) => {
      let count = 0;
      for (const [id, { client, upstream, latest }] of open) {
        if (!latest || !match(latest)) continue;
        open.delete(id);
        client.resetAndDestroy();
        upstream.destroy();
        count++;
      }
      return count;
    },
    waitForRequest: (match, from = 0) => {
      const seen = requests.find((r, i) => i >= from && match(r));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ match, from, resolve }));
    },
    close: async () => {
      for (const { client, upstream } of open.values()) {
        client.destroy();
        upstream.destroy();
      }
      open.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
