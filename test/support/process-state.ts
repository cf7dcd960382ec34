import { afterAll, beforeAll, vi } from 'vitest';

// Test files share their worker's modules (`isolate: false` in vitest.config.ts): what one file
// changes of the process (its environment, fake timers, stubs) is put back when it ends, so that
// the next file in the worker starts from the same process.

let env: NodeJS.ProcessEnv = {};

beforeAll(() => {
  env = { ...process.env };
});

afterAll(() => {
  for (const name of Object.keys(process.env)) if (!(name in env)) delete process.env[name];
  Object.assign(process.env, env);
  vi.useRealTimers();
  vi.unstubAllGlobals();
  vi.unstubAllEnvs();
});
