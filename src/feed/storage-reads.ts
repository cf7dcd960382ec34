import type { Event } from '@ag-ui/core';
import type { StateEvents } from '../state/state-events.js';
import type { MastraChunk } from '../translate/chunks.js';
import { beforeTerminal, blockedStep, type CutStep } from '../translate/retraction.js';
import { withStoredRunEnd } from '../translate/run-end.js';
import type { ThreadTranslator } from '../translate/thread-translator.js';
import { errorMessage } from '../text.js';
import type { FeedOptions } from './feed-options.js';
import type { RunsInLog } from './runs-in-log.js';

/** What the reads around a run's end use of the feed's options: its wind-down, and what the thread keeps of a blocked or cut step. */
export type StorageReadOptions = Pick<FeedOptions, 'threadId' | 'loadHistory' | 'runEnded' | 'dropBlockedStep' | 'keepCutStep' | 'logger'>;

/**
 * Publishes a feed's translated batches with what storage must add to them: the state events (read
 * at a run's start and after a working-memory update), and the thread as stored before the terminal
 * event of a run whose answer was retracted or cut. Batches go out in the order they were
 * translated, whichever stream they came from: one needing no read waits only for earlier reads.
 *
 * @example
 * reads.publish(chunk, translator.push(chunk)); // at once, or after the read it needs
 * await reads.settled(); // a shutdown lets what waits for a read go out first
 */
export class StorageReads {
  /** Batches waiting for a read (their state events, a retraction), in order, and how many wait. */
  private reads: Promise<void> = Promise.resolve();
  private waitingForRead = 0;
  /** When this feed last opened a bracket of its own (ms): what a cut run stored came after. */
  private bracketOpenedAt = Date.now();

  constructor(
    private readonly runs: RunsInLog,
    private readonly translator: ThreadTranslator,
    /** The thread's state events, for an agent with working memory. */
    private readonly state: StateEvents | undefined,
    private readonly options: StorageReadOptions,
  ) {}

  /** Resolves once every batch that waited for a read has gone out. */
  settled(): Promise<void> {
    return this.reads;
  }

  /** Events of a run the bridge streams itself (a workflow's): they go out as they are, after any batch still waiting for a read. */
  publishRun(events: Event[]): void {
    if (this.waitingForRead === 0) return this.runs.append(events);
    this.reads = this.reads.then(() => this.runs.append(events));
  }

  publish(chunk: MastraChunk, events: Event[]): void {
    const { state } = this;
    const concerned = state?.concerns(chunk, events) === true;
    const retracting = this.translator.endedRetracting;
    const cut = this.translator.endedCut;
    if (chunk.type === 'start') this.bracketOpenedAt = Date.now();
    // Most chunks need no read: they go out at once, unless a batch before them still waits.
    if (!concerned && !retracting && !cut && this.waitingForRead === 0) return this.runs.append(events);
    // Waited for before the terminal batch goes out, in order with the batches after it.
    const ended = cut?.runId ?? retracting;
    const woundDown = ended === undefined ? undefined : this.options.runEnded?.(ended);
    this.waitingForRead++;
    this.reads = this.reads
      .then(async () => {
        const withState = concerned && state ? await state.around(chunk, events) : events;
        this.runs.append(retracting ? await this.retracted(chunk, withState, woundDown) : cut ? await this.afterCut(cut, withState, woundDown) : withState);
      })
      .catch((error: unknown) => {
        // The run's own events still go out; only what the read adds is missing until the next bracket.
        this.options.logger.warn(`Thread feed ${this.options.threadId}: storage could not be read: ${errorMessage(error)}`);
        this.runs.append(events);
      })
      .finally(() => this.waitingForRead--);
  }

  /**
   * A run's terminal batch after the answer a guardrail blocked is forgotten, with the thread as
   * stored before its end. Once the run has wound down here its `/run` has kept how it ended, in
   * words this stream cannot read (a blocked step's reason): its run-end message says what history does.
   */
  private async retracted(chunk: MastraChunk, events: Event[], woundDown?: Promise<void>): Promise<Event[]> {
    await woundDown;
    const step = blockedStep(chunk);
    if (step) await this.options.dropBlockedStep?.(step);
    const history = await this.options.loadHistory();
    return beforeTerminal(withStoredRunEnd(events, history), history);
  }

  /**
   * The terminal batch of a run an abort cut (docs/api.md "After a cut, live == history"): once the run
   * has wound down here, the reasoning its cut step showed is kept under the live ids (as its
   * `/run` does, whichever comes first), and the thread as stored goes before its end.
   */
  private async afterCut({ step }: { runId: string; step?: CutStep }, events: Event[], woundDown?: Promise<void>): Promise<Event[]> {
    await woundDown;
    if (step) await this.options.keepCutStep?.(step, this.bracketOpenedAt);
    return beforeTerminal(events, await this.options.loadHistory());
  }
}
