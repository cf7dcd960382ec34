/**
 * The standalone server (`npm start`: demo agent, durable inbox) for the durability and scale
 * phases. Storage: `DATABASE_URL` when set (the scale phase passes a PostgreSQL schema of its
 * own), else a fresh LibSQL file in a temporary folder, removed at exit. `REDIS_URL` and
 * `REDIS_PREFIX`, when set, turn on the shared mode (docs/scaling.md). `BRIDGE_DIR` names the
 * checkout whose server runs (default this one): a baseline checkout must share this one's
 * `node_modules` (a symlink), so that both load the same Mastra.
 *
 * Prints `READY <port>` and answers `{ cmd: 'exit' }` over IPC, as the other bench servers do.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../lib/fixtures.js';

type Standalone = typeof import('../../src/server/standalone.js');
type Env = typeof import('../../src/server/env.js');

const dir = process.env.BRIDGE_DIR ?? REPO_ROOT;
const load = <T>(file: string) => import(pathToFileURL(join(dir, file)).href) as Promise<T>;
const [{ startServer }, { readServerEnv }] = await Promise.all([load<Standalone>('src/server/standalone.ts'), load<Env>('src/server/env.ts')]);
// The telemetry phase's traced server: the SDK as `npm start` starts it (before the bridge).
if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT)
  await (await load<typeof import('../../src/server/tracing.js')>('src/server/tracing.ts')).startTracing(process.env);

// An empty variable counts as unset: the phases pass `''` so that a shell's own DATABASE_URL or
// REDIS_URL never reaches a server meant to run on a LibSQL file.
const given = (name: string) => process.env[name] || undefined;
const data = given('DATABASE_URL') ? undefined : mkdtempSync(join(tmpdir(), 'bench-libsql-'));
const server = await startServer(
  readServerEnv({
    PORT: '0',
    DATABASE_URL: data ? `file:${join(data, 'bridge.db')}` : given('DATABASE_URL'),
    DEMO_DELAY_MS: process.env.DEMO_DELAY_MS ?? '0',
    // `BENCH_AS_STARTED=1`: `npm start`'s own limits and request log (the load must then come from
    // many resources). Else the load generator is one resource with thousands of streams and
    // requests a minute: no caps, and warnings only, as Mastra's server (logger off) and the other
    // bench servers log nothing per request.
    ...(process.env.BENCH_AS_STARTED !== '1' && {
      RATE_LIMIT_PER_MINUTE: '0',
      MAX_STREAMS_PER_RESOURCE: '0',
      MAX_STREAMS: '0',
      MAX_RUNS_PER_RESOURCE: '0',
      LOG_LEVEL: 'warn',
    }),
    ...(given('REDIS_URL') && { REDIS_URL: given('REDIS_URL'), REDIS_PREFIX: given('REDIS_PREFIX') }),
    ...(given('MASTRA_SPANS') && { MASTRA_SPANS: given('MASTRA_SPANS') }),
    ...(given('WEBHOOK_URLS') && { WEBHOOK_URLS: given('WEBHOOK_URLS'), WEBHOOK_SECRET: given('WEBHOOK_SECRET') }),
  }),
);

async function exit(): Promise<never> {
  await server.close().catch(() => {});
  if (data) rmSync(data, { recursive: true, force: true });
  process.exit(0);
}
process.on('message', (message: { cmd?: string }) => void (message.cmd === 'exit' && exit()));
process.on('disconnect', () => void exit());
console.log(`READY ${new URL(server.url).port}`);
