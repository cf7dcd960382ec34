import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uid } from './support/agui.js';
import { createCluster, follow, post, type Cluster } from './support/cluster.js';
import type { ServerProcess } from './support/process.js';
import type { AnyEvent, SseReader } from './support/sse.js';

/**
 * A message (or signal) sent on A while the thread's run on B is finishing (its answer out, its lease not yet
 * let go): Mastra on A would hand it to that run through Redis, and B's Mastra drops a signal for a
 * run that has ended. The bridge sends it where the run is (`ThreadControl.send`), and B sends it
 * past its run's end. The sweep covers the window at every offset, before and after it; a message
 * lost would only be answered by the durable inbox's sweep, 10 s later.
 */
let cluster: Cluster;
let a: ServerProcess;
let b: ServerProcess;

beforeAll(async () => {
  cluster = await createCluster('finishing', { DEMO_DELAY_MS: '20' });
  a = await cluster.start();
  b = await cluster.start();
}, 60_000);
afterAll(() => cluster?.close());

/** The text of every text message of `role` on the stream so far. */
function texts(events: AnyEvent[], role: string): string[] {
  const byId = new Map<string, string>();
  for (const e of events) {
    if (e.type === 'TEXT_MESSAGE_START' && e.role === role) byId.set(e.messageId as string, '');
    else if (e.type === 'TEXT_MESSAGE_CONTENT' && byId.has(e.messageId as string))
      byId.set(e.messageId as string, byId.get(e.messageId as string) + (e.delta as string));
  }
  return [...byId.values()];
}

/** Resolves once the answer `text` has fully arrived; fails after `ms` (a lost message never comes). */
async function answered(sse: SseReader, text: string, ms = 5_000): Promise<void> {
  const timer = setTimeout(() => void sse.close(), ms);
  try {
    await sse.waitFor(() => texts(sse.list, 'assistant').includes(text) && sse.list.at(-1)?.type === 'RUN_FINISHED', `answer "${text}"`);
  } finally {
    clearTimeout(timer);
  }
}

/** The body each route takes for `text`: a `user` signal shows and is answered as a user message. */
const bodies: Record<string, (text: string) => Record<string, unknown>> = {
  'send-message': (message) => ({ message }),
  'queue-message': (message) => ({ message }),
  signals: (contents) => ({ type: 'user', contents }),
};

describe.each(Object.keys(bodies))('a message sent on A with %s while the run on B is finishing', (route) => {
  it('is answered once, in order, whatever the offset after the run’s answer ended', { timeout: 180_000 }, async () => {
    for (let offset = 0; offset <= 60; offset += 3) {
      const threadId = uid('finishing');
      const onB = await follow(b, threadId);
      expect((await post(b, `/threads/${threadId}/send-message`, { message: 'hello' })).body).toMatchObject({ action: 'wake' });
      await onB.waitFor(() => texts(onB.list, 'assistant').includes('Echo: hello') && onB.list.some((e) => e.type === 'TEXT_MESSAGE_END'), 'the first answer');
      // The scenario itself is a point in time: the message must come `offset` ms after the answer.
      await delay(offset);
      const second = await post(a, `/threads/${threadId}/${route}`, bodies[route](`second ${offset}`));
      expect(second.status).toBe(202);
      await answered(onB, `Echo: second ${offset}`).catch(() => {
        throw new Error(`offset ${offset}: "second ${offset}" (answered ${JSON.stringify(second.body)}) was not run within 5 s`);
      });
      expect((await post(a, `/threads/${threadId}/send-message`, { message: `third ${offset}` })).status).toBe(202);
      await answered(onB, `Echo: third ${offset}`);
      const seen = { user: texts(onB.list, 'user'), assistant: texts(onB.list, 'assistant') };
      expect({ offset, ...seen }).toEqual({
        offset,
        user: ['hello', `second ${offset}`, `third ${offset}`],
        assistant: ['Echo: hello', `Echo: second ${offset}`, `Echo: third ${offset}`],
      });
      await onB.close();
    }
  });
});
