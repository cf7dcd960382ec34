import { EventType, type Event, type Interrupt } from '@ag-ui/core';
import { topLevelRunId, type MastraChunk } from '../translate/chunks.js';

/** How long a new feed waits, at most, for Mastra's replay of the thread's stopped run (it comes at once). */
export const REPLAY_MS = 2000;

/**
 * What an agent's thread waits on, as its feed saw it, and Mastra's replay of it. A run stopped on
 * an interrupt stays Mastra's active run, and a new subscription gets it again from its `start`:
 * its followers were told its end already and a snapshot holds what it said, so the feed reads that
 * replay (its translator learns the calls) and sends nothing of it. A snapshot bracket ends with
 * the interrupts the latest bracket ended on, as that run did, while the calls still wait.
 */
export class PausedRun {
  private replay?: { runId: string; started: boolean; done: () => void };
  private interrupts: Interrupt[] = [];
  private replayEnded?: Promise<void>;

  /** Mastra will replay run `runId` (stopped on an interrupt) to the subscription about to start. */
  expectReplay(runId: string | undefined): void {
    if (runId === undefined) return;
    this.replayEnded = new Promise((done) => (this.replay = { runId, started: false, done }));
  }

  /** Resolves once the replay was read (or, within `REPLAY_MS`, did not come); at once when none was expected. */
  async replayRead(): Promise<void> {
    if (!this.replayEnded) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, REPLAY_MS)));
    return Promise.race([this.replayEnded, late]).finally(() => {
      clearTimeout(timer);
      this.endReplay();
    });
  }

  /**
   * Whether the chunk is part of the replay: the stopped run's chunks from its `start`. Any other
   * chunk, or that run's going on without a `start` (it was resumed before the replay came), ends it.
   */
  replaying(chunk: MastraChunk): boolean {
    const replay = this.replay;
    if (!replay) return false;
    if (topLevelRunId(chunk) === replay.runId && (replay.started || chunk.type === 'start')) return (replay.started = true);
    this.endReplay();
    return false;
  }

  /** What a translated batch says of the pause: a bracket that starts waits on nothing yet; one that ends on interrupts waits on them. */
  note(events: readonly Event[], bracketOpen: boolean): void {
    if (events[0]?.type === EventType.RUN_STARTED) this.interrupts = [];
    const last = events.at(-1);
    if (last?.type === EventType.RUN_FINISHED && last.outcome?.type === 'interrupt') this.interrupts = last.outcome.interrupts;
    // The replay is the stopped run up to its pause: its bracket closes there.
    if (this.replay?.started && !bracketOpen) this.endReplay();
  }

  /** The interrupts the thread waits on, of those its latest bracket ended with: `waiting` says which ids still wait. */
  async waitingOn(waiting: () => Promise<ReadonlySet<string>>): Promise<Interrupt[]> {
    if (this.interrupts.length === 0) return [];
    const ids = await waiting();
    return this.interrupts.filter((i) => ids.has(i.id));
  }

  private endReplay(): void {
    this.replay?.done();
    this.replay = undefined;
  }
}
