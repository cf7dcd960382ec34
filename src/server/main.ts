import { readServerEnv } from './env.js';
import { startServer } from './standalone.js';

/** `npm start` / the package's bin: the standalone bridge on the embedded default. */
async function main(): Promise<void> {
  const env = readServerEnv();
  const server = await startServer(env);
  const model = env.MODEL ?? `the scripted demo model (DEMO_DELAY_MS=${env.DEMO_DELAY_MS})`;
  console.log(`mastra-agui-bridge listening on ${server.url} (agent "demo", ${model}, storage ${env.DATABASE_URL})`);
  console.log(`Demo page: ${new URL('/', server.url).href}`);
  console.log(`Try:\n  curl -N ${server.url}/run -H 'content-type: application/json' \\\n    -d '{"threadId":"t1","runId":"r1","messages":[{"id":"m1","role":"user","content":"hello"}]}'`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: closing open streams and storage…`);
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
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
