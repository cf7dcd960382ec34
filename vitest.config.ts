import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * Files that mostly wait (sweeps of a timing window over real processes, little CPU) start first,
 * beside the files that keep the cores busy, instead of trailing at the end of a run on a fresh
 * clone, where vitest, knowing no durations, starts the largest files first. The rest keep
 * vitest's order.
 */
const WAITING_FILES = ['test/scale-out-finishing-run.test.ts', 'test/signals-finishing-run.test.ts'];

class WaitingFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const waits = (file: TestSpecification) => WAITING_FILES.some((name) => file.moduleId.endsWith(name));
    return [...sorted.filter(waits), ...sorted.filter((file) => !waits(file))];
  }
}

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
    sequence: { sequencer: WaitingFirst },
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
