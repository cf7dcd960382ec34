import { EventType, type Event, type RunStartedEvent } from '@ag-ui/core';
import type { ThreadEventLog } from './event-log.js';

/** The run open in a thread's log, as the log handed its events back. */
export interface OpenRun {
  readonly runId: string;
  /** The sequence id of its `RUN_STARTED`. */
  readonly startSeq: number;
  /** What shapes the run (`shapesRun`): enough to settle it as lost once the ring lost its start. */
  readonly shape: Event[];
}

/**
 * A feed's side of its thread's log: what it hands the log to number (`append`), the run open in
 * the log as the log hands the events back (`started`, `ended`), and the runs whose brackets the
 * feed opened, until their ends come back numbered: what an abort of the run (`closingRun`) and a
 * shutdown wait for.
 *
 * @example
 * runs.append([runStarted]); // the feed opens run-1's bracket: an abort of run-1 waits for its end
 * runs.started(runStarted, 42); // the log handed it back: run-1 is open, from id 42
 */
export class RunsInLog {
  private openRun?: OpenRun;
  private written?: string;
  private readonly closingRuns = new Map<string, { closed: Promise<void>; resolve: () => void }>();

  constructor(
    private readonly log: ThreadEventLog,
    private readonly closingRun?: (runId: string, closed: Promise<void>) => void,
  ) {}

  get open(): OpenRun | undefined {
    return this.openRun;
  }

  /** The last run this feed wrote into the log. */
  get lastWritten(): string | undefined {
    return this.written;
  }

  /** Hands translated events to the log, which numbers them (the feed's `numbered`). */
  append(events: Event[]): void {
    for (const event of events) if (event.type === EventType.RUN_STARTED) this.opening(event.runId);
    if (events.length > 0) this.log.append(events);
  }

  /** The log handed back a `RUN_STARTED` numbered `seq`: its run is the one open in the log. */
  started(event: RunStartedEvent, seq: number): void {
    // A bracket the log opens over one still open here ends that one for this feed's waiters too.
    this.closedInLog(this.openRun?.runId);
    this.openRun = { runId: event.runId, startSeq: seq, shape: [event] };
  }

  /** The log handed back the open run's terminal event. */
  ended(): void {
    this.closedInLog(this.openRun?.runId);
    this.openRun = undefined;
  }

  /** The log handed back an event that shapes the open run (`shapesRun`). */
  shaped(event: Event): void {
    this.openRun?.shape.push(event);
  }

  /** The end of the run open in the log, when this feed opened it: what a shutdown that cut it waits for. */
  ownClosing(): Promise<void> | undefined {
    const open = this.openRun?.runId;
    return open !== undefined && open === this.written ? this.closingRuns.get(open)?.closed : undefined;
  }

  /** The feed closes: nothing waits for a run's end any more. */
  closeAll(): void {
    for (const runId of [...this.closingRuns.keys()]) this.closedInLog(runId);
  }

  /** This feed opens run `runId`'s bracket: whoever cuts the run waits until its end is in the log (`closingRun`). */
  private opening(runId: string): void {
    this.written = runId;
    this.closedInLog(runId);
    let resolve = () => {};
    const closed = new Promise<void>((done) => (resolve = done));
    this.closingRuns.set(runId, { closed, resolve });
    this.closingRun?.(runId, closed);
  }

  private closedInLog(runId: string | undefined): void {
    if (runId === undefined) return;
    this.closingRuns.get(runId)?.resolve();
    this.closingRuns.delete(runId);
  }
}
