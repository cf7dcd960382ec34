import type { Event } from '@ag-ui/core';
import { terminalOutcome, type BridgeMetrics } from '../observability/metrics.js';
import type { Multitask } from './run-admission.js';

/** Options a client passes in `RunAgentInput.forwardedProps`, validated at the edge. */
export interface RunOptions {
  agentId?: string;
  resourceId: string;
  memoryOptions?: Record<string, unknown>;
  structuredOutput?: Record<string, unknown>;
  frontendToolMode: 'proxy' | 'return';
  /**
   * A thread that is running already (a `/run`, a signal or a message woke it, in any process):
   * `enqueue` waits its turn, `reject` is `409 THREAD_BUSY`, `interrupt` aborts that run first.
   */
  multitask: Multitask;
}

/** Whether the run stores nothing (`memoryOptions.readOnly`). */
export const isReadOnly = (options: RunOptions): boolean => options.memoryOptions?.readOnly === true;

/**
 * Where a run's events go, a batch per Mastra chunk. A returned promise makes the run wait for it
 * before it reads on (backpressure); returning nothing lets it go on at once.
 */
export type EventSink = (events: Event[]) => void | Promise<void>;

/**
 * The sink with the run's events counted, one `inc` per batch, and its terminal event noted (the
 * last of its batch) for the run's outcome: what every kind of run reports to the metrics.
 */
export function countedSink(metrics: BridgeMetrics, sink: EventSink): { write: EventSink; terminal: () => Event | undefined } {
  let terminal: Event | undefined;
  const write: EventSink = (batch) => {
    metrics.runEvents.inc(batch.length);
    const last = batch[batch.length - 1];
    if (!terminal && terminalOutcome(last)) terminal = last;
    return sink(batch);
  };
  return { write, terminal: () => terminal };
}

/** A validated run, ready to stream. */
export interface PreparedRun {
  /** Streams the run's AG-UI events into `write`, the terminal event last; resolves once it is written. */
  stream(write: EventSink, signal: AbortSignal): Promise<void>;
}
