import type { Message } from '@ag-ui/client';
import { describe, expect, it } from 'vitest';
import { runInput, uid, userMessage } from './support/agui.js';
import { postRun, sseEvents } from './support/run.js';
import { http, useTestBridge } from './support/server.js';
import { follow, get, newThread, post, type Thread } from './support/threads.js';

// A run that was cancelled or failed says so in its run-end message (docs/event-mapping.md#the-run-end-message),
// and the thread keeps it: a tab that loads the thread later shows what a live one showed.

const tb = useTestBridge();

/** Runs `text` on the thread with a plain `/run` and reads its response to the end: the events as sent. */
async function runToEnd(t: Thread, text: string, runId = uid('run')) {
  const res = await postRun(
    `${tb.base}/run`,
    runInput({ threadId: t.threadId, runId, messages: [userMessage(text)], forwardedProps: { resourceId: t.resourceId } }),
  );
  const events: Array<Record<string, any>> = [];
  for await (const event of sseEvents(res.body!)) events.push(event);
  return { runId, events };
}

async function history(t: Thread, query = ''): Promise<Message[]> {
  const res = await get(tb, t, 'messages', `&format=agui${query}`);
  expect(res.status).toBe(200);
  return res.body as Message[];
}

const failedEnd = (runId: string) => ({
  id: `run-end-${runId}`,
  role: 'activity',
  activityType: 'run-end',
  content: { outcome: 'failed', code: 'MODEL_ERROR', message: 'demo model failure' },
});

describe('run ends', () => {
  it('a failed /run: its run-end message just before RUN_ERROR, in history as soon as the response ends, before the next turn', async () => {
    const t = newThread();
    const { runId, events } = await runToEnd(t, 'please fail');
    expect(events.slice(-2)).toEqual([
      { type: 'ACTIVITY_SNAPSHOT', messageId: `run-end-${runId}`, activityType: 'run-end', content: failedEnd(runId).content },
      { type: 'RUN_ERROR', message: 'demo model failure', code: 'MODEL_ERROR' },
    ]);
    // Committed before the terminal event went out: read once, no waiting.
    const [question, end] = await history(t);
    expect(question).toMatchObject({ role: 'user', content: 'please fail' });
    expect(end).toEqual(failedEnd(runId));

    await runToEnd(t, 'hello again');
    expect((await history(t)).map((m) => [m.role, m.id.startsWith('run-end-') ? 'run-end' : m.content])).toEqual([
      ['user', 'please fail'],
      ['activity', 'run-end'],
      ['user', 'hello again'],
      ['assistant', 'Echo: hello again'],
    ]);
  });

  it('is on the page of the row it follows, once: the pages, one after the other, are the whole history', async () => {
    const t = newThread();
    const { runId } = await runToEnd(t, 'please fail');
    await runToEnd(t, 'hello again');
    const whole = await history(t);
    const rows = ((await get(tb, t, 'messages')).body as unknown[]).length;
    for (const limit of [1, 2, 3]) {
      const pages = await Promise.all(Array.from({ length: Math.ceil(rows / limit) + 1 }, (_, offset) => history(t, `&limit=${limit}&offset=${offset}`)));
      expect(pages.flat(), `pages of ${limit}`).toEqual(whole);
      expect(pages.flat().filter((m) => m.id === `run-end-${runId}`)).toHaveLength(1);
    }
  });

  it('stays out of the thread’s metadata as the API shows it, and a PATCH cannot touch it', async () => {
    const t = newThread();
    await runToEnd(t, 'please fail');
    const patched = await http(`${tb.base}/threads/${t.threadId}`, {
      method: 'PATCH',
      body: { resourceId: t.resourceId, metadata: { 'mastra-agui-bridge:runEnds': null, color: 'red' } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.metadata).toEqual({ color: 'red' });
    expect((await http(`${tb.base}/threads/${t.threadId}?resourceId=${t.resourceId}`)).body.metadata).toEqual({ color: 'red' });
    expect((await history(t)).at(-1)).toMatchObject({ activityType: 'run-end' });
  });

  it('a run a message woke that fails: its followers see the run-end message, and the thread keeps it', async () => {
    const t = newThread();
    const sse = await follow(tb, t);
    expect((await post(tb, t, 'send-message', { message: 'please fail' })).status).toBe(202);
    await sse.waitFor(() => sse.list.some((e) => e.type === 'RUN_ERROR'), 'the woken run failed');
    expect(sse.list.map((e) => e.type).slice(-2)).toEqual(['ACTIVITY_SNAPSHOT', 'RUN_ERROR']);
    const shown = sse.list.find((e) => e.type === 'ACTIVITY_SNAPSHOT') as Record<string, any>;
    expect(shown).toMatchObject({ activityType: 'run-end', content: { outcome: 'failed', code: 'MODEL_ERROR', message: 'demo model failure' } });
    // Mastra streams a woken run itself: its end is kept once it has ended, a moment after.
    await expect
      .poll(async () => (await history(t)).at(-1), { timeout: 5000 })
      .toEqual({ id: shown.messageId, role: 'activity', activityType: 'run-end', content: shown.content });
    await sse.close();
  });
});
