import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A load balancer the test owns: round robin over `backends`, which the test may change. */
export interface Balancer {
  /** `http://127.0.0.1:<port>`: the balancer's origin. */
  origin: string;
  backends: string[];
  /** Requests answered by a backend other than the first one tried (a 503 or a refused connection). */
  retried: number;
  close(): Promise<void>;
}

/**
 * Round robin over backend origins, as a balancer in front of several bridge processes does
 * during a rolling deploy: a backend that refuses the connection or answers `503` (a process
 * draining) is skipped and the request goes to the next, so the client sees neither. Answers are
 * piped, so event streams flow.
 *
 * @example
 * const lb = await startBalancer([a.origin, b.origin]);
 * lb.backends = [a2.origin, b.origin]; // after a restart
 */
export async function startBalancer(backends: string[]): Promise<Balancer> {
  let next = 0;
  const balancer: Balancer = { origin: '', backends, retried: 0, close: async () => {} };
  const server = http.createServer((req, res) => void route(req, res));
  async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const order = balancer.backends.map((_, i) => balancer.backends[(next + i) % balancer.backends.length]);
    next++;
    for (const [i, backend] of order.entries()) {
      // A backend that is down: the next one is tried, as a load balancer does.
      const answer = await forward(backend, req, body).catch(() => undefined);
      if (!answer || (answer.statusCode === 503 && i < order.length - 1)) {
        answer?.resume();
        continue;
      }
      if (i > 0) balancer.retried++;
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      res.on('close', () => answer.destroy());
      // The backend went away mid-answer (a process that exited): the client's connection breaks too.
      answer.on('aborted', () => res.destroy());
      return;
    }
    res.writeHead(502).end();
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  balancer.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  balancer.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return balancer;
}

function forward(backend: string, req: http.IncomingMessage, body: Buffer): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(backend);
    const upstream = http.request({ hostname, port, path: req.url, method: req.method, headers: { ...req.headers, host: `${hostname}:${port}` } }, resolve);
    upstream.on('error', reject);
    upstream.end(body);
  });
}
