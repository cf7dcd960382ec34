import { EventType, type Message } from '@ag-ui/core';
import { describe, expect, it } from 'vitest';
import { placeRunEnds, runEndActivity, runEndIn, withStoredRunEnd, type PlacedRow, type StoredRunEnd } from './run-end.js';
import { RunTranslator } from './run-translator.js';

const at = (ms: number) => new Date(ms);
const failed = (ms: number): StoredRunEnd => ({ content: { outcome: 'failed', code: 'MODEL_ERROR', message: 'down' }, at: ms });
const cancelled = (ms: number): StoredRunEnd => ({ content: { outcome: 'cancelled' }, at: ms });

describe('placeRunEnds', () => {
  const row = (id: string, role: string, ms: number, messages: Message[] = [{ id, role, content: id } as Message]): PlacedRow => ({
    id,
    role,
    createdAt: at(ms),
    messages,
  });
  const ids = (messages: Message[]) => messages.map((m) => m.id);

  it('after the input the run answered and the answer stored after it, before the next input', () => {
    const rows = [
      row('u1', 'user', 10),
      row('a1', 'assistant', 11, [
        { id: 'a1', role: 'assistant', content: 'partial' },
        { id: 'a1-1', role: 'assistant', content: 'more' },
      ]),
      row('u2', 'user', 30),
    ];
    const placed = placeRunEnds(rows, { 'run-end-r1': { ...failed(40), after: 'u1' } });
    expect(ids(placed)).toEqual(['u1', 'a1', 'a1-1', 'run-end-r1', 'u2']);
    expect(placed[3]).toEqual({
      id: 'run-end-r1',
      role: 'activity',
      activityType: 'run-end',
      content: { outcome: 'failed', code: 'MODEL_ERROR', message: 'down' },
    });
  });

  it('an input stored while the run still ran (a turn that waited for it) comes after the run’s end, as it did live', () => {
    const rows = [row('u1', 'user', 10), row('u2', 'user', 20), row('a2', 'assistant', 50)];
    expect(ids(placeRunEnds(rows, { 'run-end-r1': { ...cancelled(30), after: 'u1' } }))).toEqual(['u1', 'run-end-r1', 'u2', 'a2']);
  });

  it('without its input among the rows, by time: after the last row created at or before the end', () => {
    const rows = [row('u1', 'user', 10), row('u2', 'user', 30), row('u3', 'user', 50)];
    const placed = placeRunEnds(rows, {
      'run-end-r2': cancelled(40),
      'run-end-r1': { ...failed(20), after: 'gone' },
      'run-end-r3': failed(60),
      'run-end-r4': failed(30),
    });
    expect(ids(placed)).toEqual(['u1', 'run-end-r1', 'u2', 'run-end-r4', 'run-end-r2', 'u3', 'run-end-r3']);
  });

  it('with no rows, the ends alone in their order; with no ends, the rows’ messages unchanged', () => {
    expect(ids(placeRunEnds([], { b: failed(2), a: cancelled(1) }))).toEqual(['a', 'b']);
    expect(placeRunEnds([row('u1', 'user', 1)], {})).toEqual([{ id: 'u1', role: 'user', content: 'u1' }]);
  });
});

describe('runEndActivity / runEndIn', () => {
  it('names the Mastra run: a resumed run (another AG-UI run id) ends under its first id, as its thread stream says', () => {
    const events = new RunTranslator({ threadId: 't', runId: 'agui-2', mastraRunId: 'mastra-1' }).cancel();
    expect(runEndIn(events)).toEqual(runEndActivity('mastra-1', { outcome: 'cancelled' }));
    expect(runEndIn(events)?.messageId).toBe('run-end-mastra-1');
  });

  it('finds none in a batch without one, and none for other activities', () => {
    expect(runEndIn(new RunTranslator({ threadId: 't', runId: 'r' }).end())).toBeUndefined();
    expect(runEndIn([{ type: EventType.ACTIVITY_SNAPSHOT, messageId: 'x', activityType: 'workflow', content: {} }])).toBeUndefined();
  });
});

describe('withStoredRunEnd', () => {
  it('says what history kept for the run (a reason the thread stream could not read), else leaves the events as they are', () => {
    const events = new RunTranslator({ threadId: 't', runId: 'r' }).fail('The run was stopped by a guardrail', 'TRIPWIRE');
    const kept = {
      id: 'run-end-r',
      role: 'activity' as const,
      activityType: 'run-end',
      content: { outcome: 'failed', code: 'TRIPWIRE', message: 'The answer contains personal data' },
    };
    expect(runEndIn(withStoredRunEnd(events, [kept]))?.content).toEqual(kept.content);
    expect(withStoredRunEnd(events, [])).toBe(events);
  });
});
