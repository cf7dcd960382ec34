import { setTimeout as delay } from 'node:timers/promises';
import { injectable } from 'inversify';

/**
 * When each run of this process has wound down: its output read to the end, by which time Mastra
 * has stored what it answered (a cut run's partial answer too). Mastra lets go of the run a little
 * before that store, so an abort that must see the answer stored (`untilEnded`) waits here.
 *
 * @example
 * endings.track(runId, pipeTheOutput());          // where the run's output is read
 * await endings.ended(runId, Date.now() + 5000);  // in an abort that waits for the run
 */
@injectable()
export class RunEndings {
  private readonly ends = new Map<string, Promise<void>>();

  /** `ended` settles (either way) when run `runId` has wound down. */
  track(runId: string, ended: Promise<unknown>): void {
    const settled = ended.then(
      () => undefined,
      () => undefined,
    );
    this.ends.set(runId, settled);
    void settled.then(() => {
      if (this.ends.get(runId) === settled) this.ends.delete(runId);
    });
  }

  /** Resolves once run `runId` has wound down here, or at `deadline` (ms since the epoch); at once for a run this process does not run. */
  async ended(runId: string, deadline: number): Promise<void> {
    const settled = this.ends.get(runId);
    if (!settled) return;
    const timeout = new AbortController();
    await Promise.race([settled, delay(Math.max(0, deadline - Date.now()), undefined, { signal: timeout.signal }).catch(() => undefined)]);
    timeout.abort();
  }
}
