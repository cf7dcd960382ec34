import { describe, expect, it } from 'vitest';
import { runInput, uid, userMessage } from './support/agui.js';
import { postRun, sseEvents } from './support/run.js';
import { http, useTestBridge } from './support/server.js';

// One run per thread at a time: a `/run` on a thread with a run streaming waits its turn
// (Mastra's thread lease), or is refused with `409` once `threadBusyWaitMs` has passed.

const waits = useTestBridge({ delayMs: 5 });
const refuses = useTestBridge({ delayMs: 5, config: { threadBusyWaitMs: 0 } });

/** Every event of one `/run`, with the order in which events of all runs arrived. */
async function runLogged(base: string, threadId: string, text: string, log: string[]) {
  const res = await postRun(`${base}/run`, runInput({ threadId, messages: [userMessage(text)], forwardedProps: { resourceId: 'turns' } }));
  if (res.status !== 200) return { status: res.status, body: await res.json() };
  for await (const event of sseEvents(res.body!)) log.push(`${text}:${event.type}`);
  return { status: 200 };
}

describe('/run on a thread with a run streaming', () => {
  it('waits for that run to end, then runs: the answers do not interleave, each follows its message', async () => {
    const threadId = uid('turns');
    const log: string[] = [];
    const first = runLogged(waits.base, threadId, 'first question with a long answer to stream', log);
    // The second asks once the first streams.
    while (!log.includes('first question with a long answer to stream:TEXT_MESSAGE_CONTENT')) await new Promise((r) => setImmediate(r));
    const second = runLogged(waits.base, threadId, 'second question', log);
    expect((await Promise.all([first, second])).map((r) => r.status)).toEqual([200, 200]);
    const firstEnd = log.indexOf('first question with a long answer to stream:RUN_FINISHED');
    expect(log.indexOf('second question:RUN_STARTED')).toBeGreaterThan(firstEnd);
    const stored = (await http(`${waits.base}/threads/${threadId}/messages?resourceId=turns`)).body as Array<{ role: string; content: string }>;
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(stored[1].content).toContain('first question');
    expect(stored[3].content).toContain('second question');
  });

  it('is refused with 409 past threadBusyWaitMs, and nothing of it is stored', async () => {
    const threadId = uid('busy');
    const log: string[] = [];
    const first = runLogged(refuses.base, threadId, 'a long answer that is still streaming', log);
    while (!log.includes('a long answer that is still streaming:TEXT_MESSAGE_CONTENT')) await new Promise((r) => setImmediate(r));
    const refused = await runLogged(refuses.base, threadId, 'refused', log);
    expect(refused).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
    await first;
    const stored = (await http(`${refuses.base}/threads/${threadId}/messages?resourceId=turns`)).body as Array<{ content: string }>;
    expect(stored.some((m) => String(m.content).includes('refused'))).toBe(false);
    // The thread is free again once the run ended.
    expect((await runLogged(refuses.base, threadId, 'after', log)).status).toBe(200);
  });
});
