import type { Event } from '@ag-ui/core';
import { inject, injectable } from 'inversify';
import { terminalOutcome, type BridgeMetrics } from '../observability/metrics.js';
import { RunTracker, type RunIdentity, type TrackedRun } from '../observability/run-tracker.js';
import { TOKENS } from '../tokens.js';
import { RunEndings } from './run-endings.js';

/**
 * Where a run's events go, a batch per Mastra chunk. A returned promise makes the run wait for it
 * before it reads on (backpressure); returning nothing lets it go on at once.
 */
export type EventSink = (events: Event[]) => void | Promise<void>;

/** One `/run` streaming here, from its opening to its end. */
export interface StreamingRun {
  /** Its span, metrics and end listeners. */
  tracked: TrackedRun;
  /** The client's sink, each batch counted and the terminal event noted. */
  write: EventSink;
  /** Aborted when the client leaves, the thread is aborted (a `stoppable` run) or the process shuts down. */
  signal: AbortSignal;
  /** Aborts it from within (a run that broke stops Mastra reading on). */
  abort(): void;
  /** The run is over: its end is reported (from its terminal event, none meaning it broke) and it is forgotten. */
  close(): void;
}

/**
 * The `/run`s this process streams, of every kind: each one tracked (`RunTracker`: its span,
 * metrics and end), its events counted, its controller kept, so that a shutdown cancels them all
 * and the open-runs gauge reads them. A run Mastra does not run as the thread's (a workflow's) is
 * `stoppable`: an abort of its thread, here or from another process through the thread control,
 * stops it here (`RunEndings.stopStreamed`).
 */
@injectable()
export class StreamingRuns {
  private readonly open = new Set<AbortController>();

  constructor(
    @inject(TOKENS.Metrics) private readonly metrics: BridgeMetrics,
    @inject(RunTracker) private readonly tracker: RunTracker,
    @inject(RunEndings) private readonly endings: RunEndings,
  ) {
    metrics.trackOpenRuns(() => this.open.size);
  }

  /** How many `/run`s are streaming now. */
  get inFlight(): number {
    return this.open.size;
  }

  /** Cancels every open run: each stream ends with `RUN_FINISHED { outcome: cancelled }`. */
  shutdown(): void {
    for (const controller of this.open) controller.abort(new Error('The server is shutting down'));
  }

  /** Opens a run's stream: tracked from here, counted per batch, cut by `clientSignal` too. */
  openRun(run: RunIdentity, sink: EventSink, clientSignal: AbortSignal, { stoppable = false } = {}): StreamingRun {
    const tracked = this.tracker.start(run);
    const controller = new AbortController();
    const onClientAbort = () => controller.abort(clientSignal.reason);
    clientSignal.addEventListener('abort', onClientAbort, { once: true });
    this.open.add(controller);
    const forget = stoppable ? this.endings.streamedOn(run, controller) : undefined;
    let terminal: Event | undefined;
    const write: EventSink = (batch) => {
      this.metrics.runEvents.inc(batch.length);
      const last = batch[batch.length - 1];
      if (!terminal && terminalOutcome(last)) terminal = last;
      return sink(batch);
    };
    const close = () => {
      this.open.delete(controller);
      forget?.();
      clientSignal.removeEventListener('abort', onClientAbort);
      tracked.ended(terminal);
    };
    return { tracked, write, signal: controller.signal, abort: () => controller.abort(), close };
  }
}
