import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { useTestBridge } from './support/server.js';
import type { AnyEvent, SseReader } from './support/sse.js';
import { follow, newThread, post } from './support/threads.js';

/**
 * Mastra 1.71 answers a message that comes while a run is finishing (its last chunk out, the
 * thread's lease not yet released: here from ~20 to ~34 ms after the answer's TEXT_MESSAGE_END)
 * with `deliver`, and then never runs or stores it. The bridge sends such a message again until
 * it wakes a run. The sweep covers the window at every offset, before and after it.
 */
const b = useTestBridge({ delayMs: 20 });

/** Every text message on the stream so far, in order: its id, role and whole text. */
function textMessages(events: AnyEvent[]): Array<{ id: string; role: string; text: string }> {
  const byId = new Map<string, { id: string; role: string; text: string }>();
  for (const e of events) {
    if (e.type === 'TEXT_MESSAGE_START') byId.set(e.messageId, { id: e.messageId, role: e.role, text: '' });
    else if (e.type === 'TEXT_MESSAGE_CONTENT') {
      const message = byId.get(e.messageId);
      if (message) message.text += e.delta;
    }
  }
  return [...byId.values()];
}

const find = (sse: SseReader, role: string, text: string) => textMessages(sse.list).filter((m) => m.role === role && m.text === text);

/** Resolves once the assistant's answer `text` has fully arrived (its TEXT_MESSAGE_END). */
async function answered(sse: SseReader, text: string): Promise<void> {
  await sse.waitFor(() => find(sse, 'assistant', text).length > 0, `answer "${text}"`);
  const [answer] = find(sse, 'assistant', text);
  await sse.waitForEvent((e) => e.type === 'TEXT_MESSAGE_END' && e.messageId === answer.id);
}

async function within<T>(promise: Promise<T>, ms: number, failure: string): Promise<T> {
  const timeout = new AbortController();
  const expired = delay(ms, undefined, { signal: timeout.signal }).then(() => Promise.reject(new Error(failure)));
  try {
    return await Promise.race([promise, expired]);
  } finally {
    timeout.abort();
    expired.catch(() => {
      // the timer was cancelled: its rejection is expected
    });
  }
}

// queue-message too: Mastra gives a queued message a new id each time, so sending it again without
// taking the first copy back would store it twice.
describe.each(['send-message', 'queue-message'])('a message sent with %s while a run is finishing', (route) => {
  it('is answered exactly once, whatever the offset after the previous answer ended', { timeout: 120_000 }, async () => {
    for (let offset = 0; offset <= 50; offset += 2) {
      const t = newThread();
      const sse = await follow(b, t);
      expect((await post(b, t, 'send-message', { message: 'hello' })).body.action).toBe('wake');
      await answered(sse, 'Echo: hello');
      // The scenario itself is a point in time: the message must come `offset` ms after the answer.
      await delay(offset);
      const second = await post(b, t, route, { message: `second ${offset}` });
      expect(second.status).toBe(202);
      // A lost message never shows: fail on it fast (a run here takes ~150 ms) instead of at the test timeout.
      await within(answered(sse, `Echo: second ${offset}`), 10_000, `"second ${offset}", answered ${second.body.action}, was never run`);
      // Runs on a thread take turns: once a later message is answered, a doubled one would show.
      expect((await post(b, t, 'send-message', { message: `third ${offset}` })).status).toBe(202);
      await answered(sse, `Echo: third ${offset}`);
      const seen = { user: find(sse, 'user', `second ${offset}`).length, assistant: find(sse, 'assistant', `Echo: second ${offset}`).length };
      expect({ offset, ...seen }).toEqual({ offset, user: 1, assistant: 1 });
      await sse.close();
    }
  });
});
