import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration files each start a real server; two workers match the two cores of CI.
    maxWorkers: 2,
    // A worker keeps its modules from one file to the next: importing Mastra and the bridge afresh
    // for every file was a fifth of the suite's work (docs/performance.md, "The suite, fourth
    // look"). What a file changes of the process is put back when it ends (process-state.ts).
    isolate: false,
    setupFiles: ['test/support/process-state.ts'],
    // The real server processes the tests start run the build, made first when it is stale.
    globalSetup: ['test/support/built-server.ts'],
    // Type-level tests (`*.test-d.ts`, `expectTypeOf`) run in `npm test` too: vitest runs `tsc
    // --noEmit` on tsconfig.json and fails each `it` whose types do not hold. Type errors elsewhere
    // are `npm run typecheck`'s to report, not a failure of these tests.
    typecheck: {
      enabled: true,
      include: ['test/**/*.test-d.ts'],
      tsconfig: 'tsconfig.json',
      ignoreSourceErrors: true,
    },
  },
});
