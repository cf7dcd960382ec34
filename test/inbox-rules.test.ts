import { describe, expect, it } from 'vitest';
import { useTestBridge } from './support/server.js';
import { follow, newThread, post } from './support/threads.js';

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
});
