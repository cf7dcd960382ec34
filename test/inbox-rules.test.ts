import { describe, expect, it } from 'vitest';
import { runInput, runStrict, userMessage } from './support/agui.js';
import { useTestBridge } from './support/server.js';
import { follow, get, newThread, post } from './support/threads.js';

/**
 * What the durable inbox keeps after the routes acknowledged a message, seen from Mastra's storage
 * (the `threadState` domain) while the bridge runs.
 */
const b = useTestBridge({ storage: 'libsql' });

async function inboxOf(threadId: string): Promise<Array<{ id: string }>> {
  const state = await b.storage.getStore('threadState');
  return (await state?.getState<Array<{ id: string }>>({ threadId, type: 'mastra-agui-bridge.inbox' })) ?? [];
}

describe('the durable inbox', () => {
  it('forgets a message whose run failed (its client saw the RUN_ERROR): recovery runs nothing for it', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const sent = await post(b, t, 'send-message', { message: 'fail on purpose' });
    expect(sent.body.action).toBe('wake');
    await sse.waitForEvent((e) => e.type === 'RUN_ERROR');
    await expect.poll(() => inboxOf(t.threadId)).toEqual([]);
    expect(await b.bridge.recover(b.mastra)).toBe(0);
    await sse.close();
  });

  it('keeps a message until its answer is stored, and recovery then has nothing to answer', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const sent = await post(b, t, 'send-message', { message: 'hello inbox' });
    expect((await inboxOf(t.threadId)).map((e) => e.id)).toContain(sent.body.signalId);
    await sse.waitForEvent((e) => e.type === 'RUN_FINISHED');
    // Answered: recovery drops it rather than run the agent again.
    expect(await b.bridge.recover(b.mastra)).toBe(0);
    expect(await inboxOf(t.threadId)).toEqual([]);
    await sse.close();
  });

  it('on a long thread: an entry answered in the last rows is dropped from them alone; one answered long ago, and one never stored, from the whole history', async () => {
    const t = newThread();
    const questions = Array.from({ length: 22 }, (_, i) => userMessage(`turn ${i}`)); // 44 rows: more than recovery reads first
    for (const question of questions)
      await runStrict(`${b.base}/run`, runInput({ threadId: t.threadId, messages: [question], forwardedProps: { resourceId: t.resourceId } }));
    const rows = async () => (await get(b, t, 'messages')).body as Array<{ role: string; content: string }>;
    const state = await b.storage.getStore('threadState');
    // As send-message keeps what it acknowledged.
    const entry = (id: string, text: string) => ({
      id,
      kind: 'send',
      threadId: t.threadId,
      resourceId: t.resourceId,
      agentId: 'demo',
      message: text,
      acceptedAt: Date.now() - 60_000,
    });
    const keep = async (entries: unknown[]) => {
      await state?.setState({ threadId: t.threadId, type: 'mastra-agui-bridge.inbox', value: entries });
      await state?.setState({ threadId: 'mastra-agui-bridge', type: 'mastra-agui-bridge.inbox-threads', value: [t.threadId] });
    };

    await keep([entry(questions[21].id, 'turn 21')]);
    expect(await b.bridge.recover(b.mastra)).toBe(0);
    expect(await inboxOf(t.threadId)).toEqual([]);

    await keep([entry(questions[0].id, 'turn 0'), entry('never-stored', 'late message')]);
    expect(await b.bridge.recover(b.mastra)).toBe(1);
    await expect.poll(async () => (await rows()).slice(-2).map((m) => m.content)).toEqual(['late message', 'Echo: late message']);
    expect((await rows()).filter((m) => m.content === 'turn 0')).toHaveLength(1);
    expect(await rows()).toHaveLength(46);
  });
});
