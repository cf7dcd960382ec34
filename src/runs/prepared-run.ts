import type { EventSink } from '../threads/streaming-runs.js';
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

export type { EventSink } from '../threads/streaming-runs.js';

/** A validated run, ready to stream. */
export interface PreparedRun {
  /** Streams the run's AG-UI events into `write`, the terminal event last; resolves once it is written. */
  stream(write: EventSink, signal: AbortSignal): Promise<void>;
}
