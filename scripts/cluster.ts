/**
 * `npm run cluster`: several standalone bridge processes behind one port, as a load balancer
 * would put them, to try the shared mode locally. Needs `REDIS_URL` and a PostgreSQL
 * `DATABASE_URL` (every process must share both). `INSTANCES` (default 2) processes listen on
 * `PORT + 1`, `PORT + 2`, …; a round-robin proxy listens on `PORT` (default 4111) and sends each
 * request, streams included, to the next one.
 *
 * @example
 * REDIS_URL=redis://127.0.0.1:6379 DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run cluster
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const port = Number(process.env.PORT ?? 4111);
const instances = Number(process.env.INSTANCES ?? 2);

function fail(message: string): never {
  console.error(`cluster: ${message}`);
  process.exit(1);
}

if (!process.env.REDIS_URL) fail('set REDIS_URL (and a PostgreSQL DATABASE_URL): the instances share threads through them');
if (!/^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '')) fail('set DATABASE_URL to a postgres:// URL: every instance must see the same threads');
if (!Number.isInteger(instances) || instances < 1 || instances > 16) fail('INSTANCES must be 1–16');

const children: ChildProcess[] = [];

/** Starts one instance; resolves once it listens. */
function startInstance(instancePort: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server/main.ts'], {
    cwd: ROOT,
    // As under `npm start`: an instance whose parent is gone stops by itself.
    env: { ...process.env, PORT: String(instancePort), npm_lifecycle_event: process.env.npm_lifecycle_event ?? 'cluster' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (chunk.includes('listening on')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`instance on port ${instancePort} exited (${code}) before listening`)));
  });
}

/** Each request to the next instance in turn; bodies and answers are piped, so SSE streams flow. */
function proxy(ports: number[]): http.Server {
  let next = 0;
  return http.createServer((req, res) => {
    const target = ports[next++ % ports.length];
    const upstream = http.request({ host: '127.0.0.1', port: target, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `instance on port ${target}: ${error.message}`, code: 'BAD_GATEWAY' }));
    });
    // A client that leaves closes the instance's stream too.
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
}

const ports = Array.from({ length: instances }, (_, i) => port + 1 + i);
try {
  await Promise.all(ports.map(startInstance));
} catch (error) {
  for (const child of children) child.kill('SIGTERM');
  fail((error as Error).message);
}
const server = proxy(ports).listen(port, '127.0.0.1', () => {
  console.log(`cluster listening on http://127.0.0.1:${port}/agui (round robin over ${ports.map((p) => `:${p}`).join(', ')})`);
});
const stop = () => {
  server.close();
  for (const child of children) child.kill('SIGTERM');
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
