import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest, slowest first (a run of `.ci/run` on Node 20: 180, 150, 116, 69 and
 * 53 s; docs/performance.md). With two workers, a long file started last runs alone at the end.
 */
const SLOWEST = [
  'test/scale-out-failover.test.ts',
  'test/consumer.test.ts',
  'test/crash-loop.test.ts',
  'test/browser.test.ts',
  'test/scale-out-finishing-run.test.ts',
];

const rank = (spec: TestSpecification) => {
  const at = SLOWEST.findIndex((file) => spec.moduleId.endsWith(file));
  return at === -1 ? SLOWEST.length : at;
};

/**
 * vitest's own order (by the durations of the last run it remembers; on a fresh clone, by file
 * size) with the slowest files first: a fresh clone, as in CI, remembers nothing.
 */
export class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return sorted
      .map((spec, at) => ({ spec, at }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.at - b.at)
      .map(({ spec }) => spec);
  }
}
