import { EventType } from '@ag-ui/core';
import { describe, expect, it } from 'vitest';
import type { RunEnd } from '../observability/run-tracker.js';
import { runEndPayload } from './payload.js';

const run = { agentId: 'demo', origin: 'run', threadId: 't1', runId: 'r1', resourceId: 'u1' } as const;
const at = new Date('2026-11-28T10:00:00.000Z');
const ids = { threadId: 't1', runId: 'r1', resourceId: 'u1', agentId: 'demo', origin: 'run' };

describe('runEndPayload', () => {
  it('a finished run: run.finished with its result', () => {
    const end: RunEnd = { ...run, outcome: 'success', terminal: { type: EventType.RUN_FINISHED, threadId: 't1', runId: 'r1', result: { answer: 42 } } };
    expect(runEndPayload(end, at)).toEqual({
      type: 'run.finished',
      timestamp: '2026-11-28T10:00:00.000Z',
      data: { ...ids, outcome: 'success', result: { answer: 42 } },
    });
  });

  it('an interrupted run: run.interrupted with what it waits on', () => {
    const interrupts = [{ id: 'i1', reason: 'tool_approval' }];
    const end: RunEnd = {
      ...run,
      outcome: 'interrupt',
      terminal: { type: EventType.RUN_FINISHED, threadId: 't1', runId: 'r1', outcome: { type: 'interrupt', interrupts } },
    };
    expect(runEndPayload(end, at).data).toEqual({ ...ids, outcome: 'interrupt', interrupts });
    expect(runEndPayload(end, at).type).toBe('run.interrupted');
  });

  it('a failed run: run.failed with its RUN_ERROR, or the error a woken run reports', () => {
    const streamed: RunEnd = { ...run, outcome: 'error', terminal: { type: EventType.RUN_ERROR, message: 'the model failed', code: 'RUN_FAILED' } };
    expect(runEndPayload(streamed, at)).toMatchObject({ type: 'run.failed', data: { ...ids, error: { code: 'RUN_FAILED', message: 'the model failed' } } });
    const woken: RunEnd = { ...run, origin: 'signal', outcome: 'error', error: { code: 'TRIPWIRE', message: 'A guardrail stopped the run' } };
    expect(runEndPayload(woken, at).data).toEqual({ ...ids, origin: 'signal', error: { code: 'TRIPWIRE', message: 'A guardrail stopped the run' } });
  });

  it("a schedule's fire: its origin and its schedule", () => {
    const fired: RunEnd = { ...run, origin: 'schedule', scheduleId: 'agent_morning', outcome: 'success' };
    expect(runEndPayload(fired, at).data).toEqual({ ...ids, origin: 'schedule', scheduleId: 'agent_morning', outcome: 'success' });
  });

  it('a cancelled run: run.cancelled', () => {
    expect(runEndPayload({ ...run, outcome: 'cancelled' }, at)).toEqual({
      type: 'run.cancelled',
      timestamp: at.toISOString(),
      data: { ...ids, outcome: 'cancelled' },
    });
  });
});
