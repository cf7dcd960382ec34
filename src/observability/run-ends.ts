import type { Event } from '@ag-ui/core';
import { inject, injectable, multiInject, optional } from 'inversify';
import { TOKENS } from '../tokens.js';
import { terminalOutcome, type BridgeMetrics, type RunOrigin, type RunOutcome } from './metrics.js';

/** A run that ended, whoever started it: what the metrics count and the webhooks tell. */
export interface RunEnd {
  /** The agent's id, or the workflow's. */
  agentId: string;
  origin: RunOrigin;
  threadId: string;
  runId: string;
  resourceId: string;
  outcome: RunOutcome;
  /** The run's terminal event where the bridge streamed it (`RUN_FINISHED` or `RUN_ERROR`). */
  terminal?: Event;
  /** Why it failed, where no terminal event says it (a run a signal woke). */
  error?: { code: string; message: string };
}

/**
 * Told of every run's end (after its terminal event is written), in the process that ran it.
 * Bound with `TOKENS.RunEndListener`; any number may be.
 *
 * @example
 * bind<RunEndListener>(TOKENS.RunEndListener).toConstantValue({ runEnded: (end) => audit.log(end) });
 */
export interface RunEndListener {
  /** Must not throw, nor make the run wait: a listener that writes somewhere does it on its own time. */
  runEnded(end: RunEnd): void;
}

/**
 * Where every kind of run reports its end (a `/run`, a workflow's, one a signal woke): the metrics
 * count it, and the listeners hear of it.
 *
 * @example
 * runEnds.ended({ agentId: 'demo', origin: 'run', threadId, runId, resourceId, outcome: 'success', terminal });
 */
@injectable()
export class RunEnds {
  constructor(
    @inject(TOKENS.Metrics) private readonly metrics: BridgeMetrics,
    @multiInject(TOKENS.RunEndListener) @optional() private readonly listeners: RunEndListener[] = [],
  ) {}

  ended(end: RunEnd): void {
    this.metrics.runEnded(end.agentId, end.origin, end.outcome);
    for (const listener of this.listeners) listener.runEnded(end);
  }
}

/**
 * A streamed run's end from its terminal event; none written means the run broke (the handler
 * ends the stream with `RUN_ERROR`).
 */
export function streamedEnd(run: Omit<RunEnd, 'outcome' | 'terminal'>, terminal: Event | undefined): RunEnd {
  if (!terminal) return { ...run, outcome: 'error', error: { code: 'RUN_FAILED', message: 'The run ended without a terminal event' } };
  return { ...run, outcome: terminalOutcome(terminal) ?? 'error', terminal };
}
