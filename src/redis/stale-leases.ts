import type { BridgeLogger } from '../logger.js';

/** What the watch needs of the leases: those this process holds, and letting one go. */
export interface HeldLeases {
  heldLeases(): Array<{ key: string; owner: string }>;
  releaseLease(key: string, owner: string): Promise<void>;
}

/** When each run of this process was over (completed, failed, aborted, discarded), if it was. */
export interface RunsOver {
  overSince(runId: string): number | undefined;
}

/** How often the held leases are looked at. */
const CHECK_EVERY_MS = 1000;
/** How long a run may hold its thread's lease after it was over: Mastra hands it on or lets it go within milliseconds. */
const STALE_AFTER_MS = 5000;

/**
 * Lets go of a thread's lease that a run of this process still holds well after it was over.
 * Mastra renews a run's lease until the run hands the thread on or gives it up; in a race of a run's
 * end with messages sent into it (seen under the soak, 1 thread in ~100), it did neither and
 * renewed the lease of an ended run for good: every later input on the thread was refused or
 * delivered into a run that would never read it. Let go of, the thread takes input again, and the
 * messages that run never read are answered by the durable inbox's sweep (unseen, on a thread no
 * run holds). A run stopped on an interrupt (suspended) is not over: its lease is left alone.
 *
 * @example
 * const watch = new StaleLeases(pubsub, runs, logger);
 * watch.start(); // … watch.stop();
 */
export class StaleLeases {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly leases: HeldLeases,
    private readonly runs: RunsOver,
    private readonly logger: BridgeLogger,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.check(), CHECK_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One look: every lease held by a run over for `STALE_AFTER_MS` is let go. */
  async check(now = Date.now()): Promise<void> {
    for (const { key, owner } of this.leases.heldLeases()) {
      const over = this.runs.overSince(owner);
      if (over === undefined || now - over < STALE_AFTER_MS) continue;
      this.logger.warn(
        `Thread ${key.slice(key.indexOf('\0') + 1)}: run ${owner} was over ${Math.round((now - over) / 1000)} s ago and still held the thread; let go`,
      );
      await this.leases.releaseLease(key, owner).catch((error: unknown) => this.logger.warn(`Thread lease of ${owner} could not be let go: ${String(error)}`));
    }
  }
}
