import { EventType } from '@ag-ui/core';
import { failureOf, type RunEnd } from '../observability/run-tracker.js';

/** What a run's end is called in a webhook. */
export type WebhookType = 'run.finished' | 'run.interrupted' | 'run.failed' | 'run.cancelled';

/** The body of a webhook (Standard Webhooks: `type`, `timestamp`, `data`). */
export interface WebhookPayload {
  type: WebhookType;
  /** When the run ended (ISO 8601). */
  timestamp: string;
  data: {
    threadId: string;
    runId: string;
    resourceId: string;
    agentId: string;
    /** What started the run: a `/run`, a signal, a recovery, a schedule's fire. */
    origin: RunEnd['origin'];
    /** The schedule whose fire woke the run (`origin: "schedule"`). */
    scheduleId?: string;
    outcome?: 'success' | 'interrupt' | 'cancelled';
    result?: unknown;
    interrupts?: unknown[];
    error?: { code: string; message: string };
  };
}

const TYPES = { success: 'run.finished', interrupt: 'run.interrupted', cancelled: 'run.cancelled', error: 'run.failed' } as const;

/**
 * The webhook of a run's end: the type from its outcome, and from its terminal event what a
 * client's `RUN_FINISHED` / `RUN_ERROR` held (the result, the interrupts it waits on, the error).
 *
 * @example
 * runEndPayload({ agentId: 'demo', origin: 'run', threadId: 't1', runId: 'r1', resourceId: 'u1', outcome: 'success' }, new Date());
 * // { type: 'run.finished', timestamp: '…', data: { threadId: 't1', runId: 'r1', resourceId: 'u1', agentId: 'demo', outcome: 'success' } }
 */
export function runEndPayload(end: RunEnd, at: Date): WebhookPayload {
  const { threadId, runId, resourceId, agentId, origin, scheduleId, outcome, terminal } = end;
  const data: WebhookPayload['data'] = { threadId, runId, resourceId, agentId, origin, ...(scheduleId !== undefined && { scheduleId }) };
  if (outcome !== 'error') data.outcome = outcome;
  if (terminal?.type === EventType.RUN_FINISHED) {
    if (terminal.result !== undefined) data.result = terminal.result;
    if (terminal.outcome?.type === 'interrupt') data.interrupts = terminal.outcome.interrupts;
  }
  const failure = failureOf(end);
  if (failure) data.error = failure;
  return { type: TYPES[outcome], timestamp: at.toISOString(), data };
}
