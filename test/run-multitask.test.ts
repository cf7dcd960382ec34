import { describe, expect, it } from 'vitest';
import { runInput, uid, userMessage } from './support/agui.js';
import { postRun, sseEvents } from './support/run.js';
import type { AnyEvent } from './support/sse.js';
import { http, useTestBridge } from './support/server.js';
import { follow, post, type Thread } from './support/threads.js';

// `forwardedProps.multitask`: what a `/run` does on a thread that is already running.

const b = useTestBridge({ delayMs: 5 });
const LONG = `a long answer ${Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ')}`;

/** Starts a `/run` and reads it on; `reached(type)` resolves once an event of that type came. */
function startRun(threadId: string, text: string, multitask?: string) {
  const events: AnyEvent[] = [];
  const waiters: Array<{ type: string; resolve: () => void }> = [];
  const reached = (type: string) => new Promise<void>((resolve) => (events.some((e) => e.type === type) ? resolve() : waiters.push({ type, resolve })));
  const done = (async () => {
    const res = await postRun(
      `${b.base}/run`,
      runInput({ threadId, messages: [userMessage(text)], forwardedProps: { resourceId: 'multitask', ...(multitask && { multitask }) } }),
    );
    if (res.status !== 200) return { status: res.status, body: await res.json(), events };
    for await (const event of sseEvents(res.body!)) {
      events.push(event);
      for (const w of waiters.filter((w) => w.type === event.type)) w.resolve();
    }
    return { status: 200, body: undefined, events };
  })();
  return { events, reached, done };
}

const stored = async (threadId: string) =>
  (await http(`${b.base}/threads/${threadId}/messages?resourceId=multitask`)).body as Array<{ role: string; content: string }>;
const text = (events: AnyEvent[]) =>
  events
    .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
    .map((e) => e.delta)
    .join('');

describe('a /run on a thread that is running', () => {
  it('reject: 409 THREAD_BUSY before any event, nothing of it stored; the running run goes on untouched', async () => {
    const threadId = uid('reject');
    const first = startRun(threadId, LONG);
    await first.reached('TEXT_MESSAGE_CONTENT');
    const refused = await startRun(threadId, 'refused', 'reject').done;
    expect(refused).toMatchObject({ status: 409, body: { code: 'THREAD_BUSY' }, events: [] });
    const answered = await first.done;
    expect(answered.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED' });
    expect(answered.events.at(-1)).not.toHaveProperty('outcome.type', 'cancelled');
    expect(text(answered.events)).toBe(`Echo: ${LONG}`);
    expect((await stored(threadId)).map((m) => m.content)).toEqual([LONG, `Echo: ${LONG}`]);
    // Idle again: reject runs at once.
    expect((await startRun(threadId, 'now', 'reject').done).status).toBe(200);
  });

  it('reject counts a run that a message woke as running', async () => {
    const t: Thread = { threadId: uid('reject-woken'), resourceId: 'multitask' };
    const watching = await follow(b, t);
    expect((await post(b, t, 'send-message', { message: LONG })).body.action).toBe('wake');
    await watching.waitForEvent((e) => e.type === 'TEXT_MESSAGE_CONTENT');
    expect(await startRun(t.threadId, 'refused', 'reject').done).toMatchObject({ status: 409, body: { code: 'THREAD_BUSY' } });
    await watching.waitForCount('RUN_FINISHED', 1);
    await watching.close();
  });

  it('interrupt: the running run ends RUN_FINISHED cancelled, its partial answer kept, then this run answers', async () => {
    const threadId = uid('interrupt');
    const first = startRun(threadId, LONG);
    await first.reached('TEXT_MESSAGE_CONTENT');
    const second = await startRun(threadId, 'second question', 'interrupt').done;
    const cut = await first.done;
    expect(cut.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
    const partial = text(cut.events);
    expect(`Echo: ${LONG}`.startsWith(partial) && partial.length < `Echo: ${LONG}`.length).toBe(true);
    expect(second.status).toBe(200);
    expect(second.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED' });
    expect(text(second.events)).toBe('Echo: second question');
    const history = await stored(threadId);
    expect(history.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(history[1].content).toBe(partial);
    expect(history[3].content).toBe('Echo: second question');
  });

  it('interrupt keeps what was queued behind the cut run: each queued message is stored and answered once, in order, before the interrupting input', async () => {
    const t: Thread = { threadId: uid('interrupt-queued'), resourceId: 'multitask' };
    const watching = await follow(b, t);
    const first = startRun(t.threadId, LONG);
    await first.reached('TEXT_MESSAGE_CONTENT');
    const queued = [];
    for (const message of ['queued one', 'queued two']) queued.push((await post(b, t, 'queue-message', { message })).body);
    expect(queued).toMatchObject([{ action: 'deliver' }, { action: 'deliver' }]);
    const second = await startRun(t.threadId, 'second question', 'interrupt').done;
    expect(second.status).toBe(200);
    expect((await first.done).events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
    // Every acknowledged message gets its answer: the interrupting one's is the last.
    const answers = () =>
      watching.events
        .filter((e) => e.event.type === 'TEXT_MESSAGE_CONTENT')
        .map((e) => e.event.delta as string)
        .join('');
    await watching.waitFor(
      () => ['Echo: queued one', 'Echo: queued two', 'Echo: second question'].every((a) => answers().includes(a)),
      `the answers to the queued messages; saw ${JSON.stringify(answers())}`,
    );
    await watching.close();
    const history = (await stored(t.threadId)).map((m) => `${m.role}: ${m.content}`);
    // Mastra stores a queued message with the role `signal`; each is answered right after it.
    expect(history.slice(2)).toEqual([
      'signal: queued one',
      'assistant: Echo: queued one',
      'signal: queued two',
      'assistant: Echo: queued two',
      'user: second question',
      'assistant: Echo: second question',
    ]);
  });

  it('interrupt keeps what was sent into the cut run and not read yet: stored and answered before the interrupting input', async () => {
    const t: Thread = { threadId: uid('interrupt-sent'), resourceId: 'multitask' };
    const watching = await follow(b, t);
    const first = startRun(t.threadId, LONG);
    await first.reached('TEXT_MESSAGE_CONTENT');
    // Mastra reads a message sent into a run between its steps: the run's one long step is cut first.
    expect((await post(b, t, 'send-message', { message: 'sent into it' })).body).toMatchObject({ action: 'deliver' });
    const second = await startRun(t.threadId, 'second question', 'interrupt').done;
    expect(second.status).toBe(200);
    expect((await first.done).events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
    const answers = () =>
      watching.events
        .filter((e) => e.event.type === 'TEXT_MESSAGE_CONTENT')
        .map((e) => e.event.delta as string)
        .join('');
    await watching.waitFor(
      () => ['Echo: sent into it', 'Echo: second question'].every((a) => answers().includes(a)),
      `both answers; saw ${JSON.stringify(answers())}`,
    );
    await watching.close();
    const history = (await stored(t.threadId)).map((m) => `${m.role}: ${m.content}`);
    expect(history.slice(2)).toEqual(['signal: sent into it', 'assistant: Echo: sent into it', 'user: second question', 'assistant: Echo: second question']);
  });

  it('the same when the cut run is one Mastra started for a queued message', async () => {
    const t: Thread = { threadId: uid('interrupt-sent-queued'), resourceId: 'multitask' };
    const watching = await follow(b, t);
    const first = startRun(t.threadId, LONG.slice(0, 120));
    await first.reached('TEXT_MESSAGE_CONTENT');
    expect((await post(b, t, 'queue-message', { message: LONG })).body).toMatchObject({ action: 'deliver' });
    await watching.waitForCount('RUN_STARTED', 2);
    const queuedRun = watching.events.findLastIndex((e) => e.event.type === 'RUN_STARTED');
    await watching.waitForEvent((e) => e.type === 'TEXT_MESSAGE_CONTENT', queuedRun);
    expect((await post(b, t, 'send-message', { message: 'sent into it' })).body).toMatchObject({ action: 'deliver' });
    expect((await startRun(t.threadId, 'second question', 'interrupt').done).status).toBe(200);
    const answers = () =>
      watching.events
        .filter((e) => e.event.type === 'TEXT_MESSAGE_CONTENT')
        .map((e) => e.event.delta as string)
        .join('');
    await watching.waitFor(
      () => ['Echo: sent into it', 'Echo: second question'].every((a) => answers().includes(a)),
      `both answers; saw ${JSON.stringify(answers())}`,
    );
    await watching.close();
    const history = (await stored(t.threadId)).map((m) => `${m.role}: ${m.content}`);
    // The cut run's partial answer is stored only if it had begun (cut after its first word, it is `Echo: ` alone).
    const cutAnswer = (row: string) =>
      row.includes('a long answer') || (row.startsWith('assistant: ') && `Echo: ${LONG}`.startsWith(row.slice('assistant: '.length)));
    expect(history.filter((row) => !cutAnswer(row))).toEqual([
      'signal: sent into it',
      'assistant: Echo: sent into it',
      'user: second question',
      'assistant: Echo: second question',
    ]);
  });

  it('interrupt on an idle thread, and enqueue (the default, named), just run', async () => {
    const threadId = uid('idle');
    expect((await startRun(threadId, 'one', 'interrupt').done).status).toBe(200);
    expect((await startRun(threadId, 'two', 'enqueue').done).status).toBe(200);
    expect((await stored(threadId)).map((m) => m.content)).toEqual(['one', 'Echo: one', 'two', 'Echo: two']);
  });

  it('another value is 400 INVALID_INPUT naming forwardedProps.multitask', async () => {
    const res = await startRun(uid('bad'), 'hello', 'later').done;
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_INPUT', details: [expect.objectContaining({ path: 'forwardedProps.multitask' })] });
  });
});
