import { readServerEnv } from './env.js';
import { startedByNpm, watchParent } from './parent.js';
import { startServer } from './standalone.js';

/** The process that started this one, read before anything else (see `watchParent`). */
const parent = process.ppid;

/** A connection URL fit for a log line: its password masked. */
function redacted(url: string): string {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (!parsed?.password) return url;
  parsed.password = '***';
  return parsed.href;
}

/** `npm start` / the package's bin: the standalone bridge on the embedded default. */
async function main(): Promise<void> {
  const env = readServerEnv();
  const server = await startServer(env);
  const model = env.MODEL ?? `the scripted demo model (DEMO_DELAY_MS=${env.DEMO_DELAY_MS})`;
  const shared = env.REDIS_URL ? `, shared through ${redacted(env.REDIS_URL)} as ${env.REDIS_PREFIX}` : '';
  console.log(`mastra-agui-bridge listening on ${server.url} (pid ${process.pid}, agent "demo", ${model}, storage ${redacted(env.DATABASE_URL)}${shared})`);
  console.log(`Demo page: ${new URL('/', server.url).href}`);
  console.log(`Try:\n  curl -N ${server.url}/run -H 'content-type: application/json' \\\n    -d '{"threadId":"t1","runId":"r1","messages":[{"id":"m1","role":"user","content":"hello"}]}'`);
  let stopping = false;
  const stop = (reason: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${reason}: closing open streams and storage…`);
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // Started by npm (`npm start`, `npx mastra-agui-bridge`), the server does not outlive it: if npm
  // goes away without passing a signal on (it was killed, or a shell between them dropped the
  // signal), shut down as on SIGTERM instead of serving on as an orphan. Whoever read stdout may be
  // gone too: a failed write must not crash the shutdown.
  if (startedByNpm()) {
    watchParent(() => {
      for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});
      stop(`parent process ${parent} exited`);
    }, parent);
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
