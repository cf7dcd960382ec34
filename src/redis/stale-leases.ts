import type { BridgeLogger } from '../logger.js';

export interface HeldLeases {
  heldLeases(): Array<{ key: string; owner: string }>;
  releaseLease(key: string, owner: string): Promise<void>;
}

/** When each run of this process was over (completed, failed, aborted, discarded), if it was. */
export interface RunsOver {
  overSince(runId: string): number | undefined;
}

const CHECK_EVERY_MS = 1000;
/** How long a run may hold its thread's lease after it was over: Mastra hands it on or lets it go within milliseconds. */
const STALE_AFTER_MS = 5000;

/**
 * Lets go of a thread's lease that a run of this process still holds well after it was over. Mastra
 * renews a run's lease until the run hands the thread on or gives it up; when a run's end races
 * with messages sent into it (1 thread in ~100 in a soak test), it may do neither and renew an
 * ended run's lease for good: every later input is refused, or goes into a run that never reads it.
 * Let go of, the thread takes input again, and the durable inbox's sweep answers what that run
 * never read. A suspended run (stopped on an interrupt) is not over: its lease is left alone.
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
