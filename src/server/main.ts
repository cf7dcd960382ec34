import { helpText, mintToken, packageVersion, parseCli, UsageError } from './cli.js';
import { readServerEnv } from './env.js';
import { startedByNpm, watchParent } from './parent.js';
import { redactedUrl } from '../text.js';
import { serverLogger } from './server-logger.js';
import { startTracing } from './tracing.js';

/** The process that started this one, read before anything else (see `watchParent`). */
const parent = process.ppid;

/** The package's bin: `--help`, `--version`, `token …`, or (no argument) the server. */
async function main(): Promise<void> {
  const command = parseCli(process.argv.slice(2));
  if (command.kind === 'help') return void console.log(helpText());
  if (command.kind === 'version') return void console.log(packageVersion());
  if (command.kind === 'token') return void console.log(await mintToken(readServerEnv(), command.sub, command.ttl));
  await serve();
}

/** `npm start` / the bin with no argument: the standalone bridge on the embedded default. */
async function serve(): Promise<void> {
  const env = readServerEnv();
  // Loaded only to serve: `--help`, `--version` and `token` answer without the server's modules.
  if (env.MODEL) {
    const missing = (await import('./model-key.js')).missingModelKey(env.MODEL, process.env);
    if (missing) throw new Error(`Invalid environment: ${missing}`);
  }
  // Before the bridge: its spans (and Mastra's) go to the provider this registers.
  const stopTracing = await startTracing(process.env);
  const { startServer } = await import('./standalone.js');
  const log = serverLogger(env);
  const server = await startServer(env, {}, { log });
  const model = env.MODEL ?? `the scripted demo model (DEMO_DELAY_MS=${env.DEMO_DELAY_MS})`;
  const storage = redactedUrl(env.DATABASE_URL);
  const shared = env.REDIS_URL ? `, shared through ${redactedUrl(env.REDIS_URL)} as ${env.REDIS_PREFIX}` : '';
  // The message keeps the words scripts and tests look for (`listening on <url> (pid <n>`).
  log.info(
    { url: server.url, agent: 'demo', model, storage },
    `mastra-agui-bridge listening on ${server.url} (pid ${process.pid}, agent "demo", ${model}, storage ${storage}${shared})`,
  );
  log.info({ url: new URL('/', server.url).href }, 'demo page');
  log.info(
    {
      example: `curl -N ${server.url}/run -H 'content-type: application/json' -d '{"threadId":"t1","runId":"r1","messages":[{"id":"m1","role":"user","content":"hello"}]}'`,
    },
    'try the demo agent',
  );
  let stopping = false;
  const stop = (reason: string) => {
    if (stopping) return;
    stopping = true;
    // SIGTERM is a replacement (a deploy, a scale-in): the runs in flight may finish first. SIGINT
    // and a vanished parent are someone at a terminal, or nobody: close at once.
    const drain = reason === 'SIGTERM';
    log.info({ reason }, drain ? `${reason}: draining (runs in flight may finish), then closing…` : `${reason}: closing open streams and storage…`);
    const closed = drain ? server.drainAndClose() : server.close();
    // The last spans go out first (an unreachable collector holds the exit for the export timeout).
    const flushed = closed.then(() => stopTracing?.().catch((error: unknown) => log.warn({ err: error }, 'traces: the last export failed')));
    flushed.then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // Started by npm (`npm start`, `npx`), the server does not outlive it: if npm goes away without
  // passing a signal on (killed, or a shell between dropped it), shut down rather than serve on as
  // an orphan. Whoever read stdout may be gone too: a failed write must not crash the shutdown.
  if (startedByNpm()) {
    watchParent(() => {
      for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});
      stop(`parent process ${parent} exited`);
    }, parent);
  }
}

// A bad command line: the reason and usage hint on stderr, exit 2. Any other failure to start: one
// plain line on stderr, no stack, terminal or not (a person reads a container's log too), exit 1.
main().catch((error: unknown) => {
  const usage = error instanceof UsageError;
  process.stderr.write(`mastra-agui-bridge: ${error instanceof Error ? error.message : String(error)}\n${usage ? "Try 'mastra-agui-bridge --help'.\n" : ''}`);
  process.exit(usage ? 2 : 1);
});
