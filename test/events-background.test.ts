import { describe, expect, it } from 'vitest';
import { uid } from './support/agui.js';
import { http, useTestBridge } from './support/server.js';
import { openSse, verifyThreadEvents } from './support/sse.js';

// Background tasks on a thread stream: Mastra sends their progress on the task manager's stream,
// not on the thread subscription; the feed merges it in as activity events.

const tb = useTestBridge(); // slow_task takes 100 ms here, background tasks on

describe('a background task', () => {
  it('reaches subscribers as activity events: started, running, completed with its result', async () => {
    const threadId = uid('thread');
    const resourceId = uid('user');
    const sse = await openSse(`${tb.base}/threads/${threadId}/events?resourceId=${resourceId}`);
    await sse.waitForComment('connected');

    const sent = await http(`${tb.base}/threads/${threadId}/send-message`, { body: { resourceId, message: 'a slow job please' } });
    expect(sent.status).toBe(202);

    const started = await sse.waitForEvent((e) => e.type === 'ACTIVITY_SNAPSHOT' && e.activityType === 'background-task');
    expect(started.event.content).toMatchObject({ toolName: 'slow_task', status: 'started' });
    const messageId = started.event.messageId as string;
    await sse.waitForEvent((e) => e.type === 'ACTIVITY_DELTA' && e.messageId === messageId);

    // Completion arrives on the task manager's stream, after the run that started the task ended:
    // it comes in a bracket of its own, as a snapshot carrying the final status and the result.
    const completed = await sse.waitForEvent((e) => e.messageId === messageId && JSON.stringify(e).includes('"completed"'));
    const final =
      completed.event.type === 'ACTIVITY_SNAPSHOT'
        ? completed.event.content
        : Object.fromEntries((completed.event.patch as Array<{ path: string; value: unknown }>).map((op) => [op.path.slice(1), op.value]));
    expect(final).toMatchObject({ status: 'completed', result: { done: true } });

    // The agent is woken with the result, and answers in a run of its own.
    await sse.waitForEvent((e) => e.type === 'TEXT_MESSAGE_CONTENT' && String(e.delta).includes('finished'));
    await sse.waitForEvent((e) => e.type === 'RUN_FINISHED', sse.events.length - 1);
    await sse.close();

    const { warnings } = await verifyThreadEvents(sse.list);
    expect(warnings).toEqual([]);
  });
});
