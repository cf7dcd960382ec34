import type { Message, ResumeEntry } from '@ag-ui/client';
import { describe, expect, it } from 'vitest';
import { checkRun, runInput, uid, userMessage } from './support/agui.js';
import { postRun, sseEvents } from './support/run.js';
import type { AnyEvent } from './support/sse.js';
import { http, startTestBridge, useTestBridge } from './support/server.js';
import { expectValidStream, follow, get, post, type Thread } from './support/threads.js';

// docs/api.md "Pending interrupts do not hold a thread": a run that ended with an interrupt is over.
// New input supersedes what it waits on (declined, with a reason) and runs at once, whatever
// `multitask` says; an abort declines it the same way; a resume of a superseded call is 404.

const b = useTestBridge();

interface RunAnswer {
  status: number;
  body?: any;
  events: AnyEvent[];
}

/** A raw `/run` on the thread, read to its end (or its refusal). */
async function run(t: Thread, extra: { messages?: Message[]; resume?: ResumeEntry[]; multitask?: string; runId?: string } = {}): Promise<RunAnswer> {
  const input = runInput({
    threadId: t.threadId,
    runId: extra.runId ?? uid('run'),
    messages: extra.messages ?? [],
    ...(extra.resume && { resume: extra.resume }),
    forwardedProps: { resourceId: t.resourceId, ...(extra.multitask && { multitask: extra.multitask }) },
  });
  const res = await postRun(`${b.base}/run`, input);
  if (res.status !== 200) return { status: res.status, body: await res.json(), events: [] };
  const events: AnyEvent[] = [];
  for await (const event of sseEvents(res.body!)) events.push(event);
  checkRun(events, input);
  return { status: 200, events };
}

const text = (events: AnyEvent[]) =>
  events
    .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
    .map((e) => e.delta)
    .join('');

/** A thread whose last run stopped on the approval of `delete notes.txt`: its interrupt. */
async function pendingApproval(): Promise<{ t: Thread; interrupt: { id: string; toolCallId: string }; history: Message[] }> {
  const t: Thread = { threadId: uid('pending'), resourceId: uid('user') };
  const messages = [userMessage('delete notes.txt')];
  const first = await run(t, { messages });
  expect(first.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'interrupt' } });
  const [interrupt] = first.events.at(-1)!.outcome.interrupts as Array<{ id: string; toolCallId: string }>;
  expect((await get(b, t, 'pending-approvals')).body).toHaveLength(1);
  return { t, interrupt, history: messages };
}

/** The thread's history as AG-UI messages. */
const agui = async (t: Thread) => (await get(b, t, 'messages', '&format=agui')).body as Array<Message & { content?: string; toolCallId?: string }>;

/** The declined call's result, as history has it. */
async function declinedResult(t: Thread, toolCallId: string) {
  const result = (await agui(t)).find((m) => m.role === 'tool' && m.toolCallId === toolCallId);
  return JSON.parse(result!.content as string) as { declined: boolean; reason?: string };
}

describe('a pending approval does not hold its thread', () => {
  it.each(['reject', 'enqueue', 'interrupt'])('a /run with a new message (multitask %s) declines it and answers at once', async (multitask) => {
    const { t, interrupt, history } = await pendingApproval();
    const watching = await follow(b, t);
    const next = await run(t, { messages: [...history, userMessage('hello again')], multitask });
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(next.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED' });
    expect(next.events.at(-1)).not.toHaveProperty('outcome');
    expect(text(next.events)).toBe('Echo: hello again');

    expect((await get(b, t, 'pending-approvals')).body).toEqual([]);
    expect(await declinedResult(t, interrupt.toolCallId)).toMatchObject({ declined: true, reason: 'A new message came first' });
    const roles = (await agui(t)).map((m) => `${m.role}${m.role === 'user' || m.role === 'assistant' ? `: ${m.content ?? ''}` : ''}`);
    expect(roles.slice(-3)).toEqual(['tool', 'user: hello again', 'assistant: Echo: hello again']);
    // Followers saw the decline as a run of its own, closed, then the new run.
    await watching.waitFor(() => watching.events.filter((e) => e.event.type === 'RUN_FINISHED').length >= 2, 'the decline and the new run');
    await watching.close();
    const seen = watching.events.map((e) => e.event);
    const result = seen.find((e) => e.type === 'TOOL_CALL_RESULT');
    expect(result).toMatchObject({ toolCallId: interrupt.toolCallId });
    await expectValidStream(seen);

    // A resume of the superseded interrupt finds nothing waiting.
    const resumed = await run(t, {
      messages: [...history, userMessage('hello again')],
      resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }],
    });
    expect(resumed).toMatchObject({ status: 404, body: { code: 'RUN_NOT_FOUND' } });
  });

  it.each(['send-message', 'queue-message'])('%s wakes a run of its own and declines the pending call', async (route) => {
    const { t, interrupt } = await pendingApproval();
    const watching = await follow(b, t);
    const answer = await post(b, t, route, { message: 'hello again' });
    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({ action: 'wake' });
    await watching.waitFor(() => text(watching.events.map((e) => e.event)).includes('Echo: hello again'), 'the answer');
    await watching.waitFor(() => watching.events.filter((e) => e.event.type === 'RUN_FINISHED').length >= 2, 'the decline and the new run');
    await watching.close();
    await expectValidStream(watching.events.map((e) => e.event));
    expect(await declinedResult(t, interrupt.toolCallId)).toMatchObject({ declined: true, reason: 'A new message came first' });
    expect((await get(b, t, 'pending-approvals')).body).toEqual([]);
  });

  it('resumes and new input at the same moment: the call is answered once, by one of them, and the new input answered last', async () => {
    for (let round = 0; round < 3; round++) {
      const { t, interrupt, history } = await pendingApproval();
      const resume = [{ interruptId: interrupt.id, status: 'resolved' as const, payload: { approved: true } }];
      const [first, second, next] = await Promise.all([
        run(t, { resume }),
        run(t, { resume }),
        run(t, { messages: [...history, userMessage('right behind')], multitask: 'interrupt' }),
      ]);
      expect(next.status, JSON.stringify(next.body)).toBe(200);
      expect(text(next.events)).toBe('Echo: right behind');
      // At most one resume ran; another finds the call answered (409, or RUN_ERROR when it came
      // between the check and the resume) or gone (404).
      const ends = [first, second].map((r) => (r.status === 200 ? r.events.at(-1)!.type : r.status));
      expect({
        round,
        ends,
        ran: ends.filter((end) => end === 'RUN_FINISHED').length <= 1,
        refused: ends.every((end) => ['RUN_FINISHED', 'RUN_ERROR', 404, 409].includes(end)),
      }).toMatchObject({ ran: true, refused: true });
      const stored = await agui(t);
      expect(
        stored.filter((m) => m.role === 'tool' && m.toolCallId === interrupt.toolCallId),
        JSON.stringify(stored),
      ).toHaveLength(1);
      expect(stored.at(-1)).toMatchObject({ role: 'assistant', content: 'Echo: right behind' });
    }
  });

  it('an abort declines it: nothing runs later, an approval after it finds nothing waiting, and the thread runs again', async () => {
    const { t, interrupt, history } = await pendingApproval();
    expect((await post(b, t, 'abort')).body).toEqual({ aborted: true });
    expect((await get(b, t, 'pending-approvals')).body).toEqual([]);
    expect(await declinedResult(t, interrupt.toolCallId)).toMatchObject({ declined: true, reason: 'The run was aborted' });
    const approval = await post(b, t, 'tool-approval', { toolCallId: interrupt.toolCallId, approved: true });
    expect(approval.status).toBe(409);
    // No answer was asked for: the history ends with the declined call, and nothing deleted.
    const stored = await agui(t);
    expect(stored.at(-1)).toMatchObject({ role: 'tool', toolCallId: interrupt.toolCallId });
    expect(JSON.stringify(stored)).not.toContain('"deleted"');
    const next = await run(t, { messages: [...history, userMessage('and now?')], multitask: 'reject' });
    expect(text(next.events)).toBe('Echo: and now?');
    // A second abort finds nothing to stop.
    expect((await post(b, t, 'abort')).body).toEqual({ aborted: false });
  });
});

describe('a call being resumed is not waiting: the run streams', () => {
  const slow = useTestBridge({ delayMs: 200 });

  /** A `/run` on the slow bridge, read as it comes. */
  async function start(t: Thread, extra: { messages?: Message[]; resume?: ResumeEntry[] }) {
    const res = await postRun(
      `${slow.base}/run`,
      runInput({
        threadId: t.threadId,
        messages: extra.messages ?? [],
        ...(extra.resume && { resume: extra.resume }),
        forwardedProps: { resourceId: t.resourceId },
      }),
    );
    expect(res.status).toBe(200);
    const events: AnyEvent[] = [];
    const done = (async () => {
      for await (const event of sseEvents(res.body!)) events.push(event);
      return events;
    })();
    return { events, done };
  }

  it('an abort while the resumed run answers stops it, as it stops any run', async () => {
    const t: Thread = { threadId: uid('resumed-abort'), resourceId: uid('user') };
    const first = await (await start(t, { messages: [userMessage('delete notes.txt')] })).done;
    const [interrupt] = first.at(-1)!.outcome.interrupts as Array<{ id: string }>;
    const resumed = await start(t, { resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] });
    await expect.poll(() => resumed.events.some((e) => e.type === 'TEXT_MESSAGE_CONTENT')).toBe(true);
    expect((await post(slow, t, 'abort')).body).toEqual({ aborted: true });
    const events = await resumed.done;
    expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
    await expectValidStream(events);
    expect(text(events)).not.toContain('notes.txt');
  });
});

describe('a refused /run stores nothing', () => {
  it('a message id of another thread: 409, the state and the thread untouched', async () => {
    const owner: Thread = { threadId: uid('owner'), resourceId: uid('user') };
    const taken = userMessage('mine');
    expect((await run(owner, { messages: [taken] })).status).toBe(200);
    const t: Thread = { threadId: uid('victim'), resourceId: uid('user') };
    expect((await run(t, { messages: [userMessage('remember tea')] })).status).toBe(200);
    const before = (await get(b, t, 'state')).body;

    const refused = await postRun(
      `${b.base}/run`,
      runInput({ threadId: t.threadId, messages: [taken], state: { facts: ['WRITTEN-BY-A-REFUSED-RUN'] }, forwardedProps: { resourceId: t.resourceId } }),
    );
    expect(refused.status).toBe(409);
    expect((await get(b, t, 'state')).body).toEqual(before);

    // On a new thread id the refused request creates no thread either.
    const fresh: Thread = { threadId: uid('never'), resourceId: uid('user') };
    const again = await postRun(
      `${b.base}/run`,
      runInput({ threadId: fresh.threadId, messages: [taken], state: { facts: ['x'] }, forwardedProps: { resourceId: fresh.resourceId } }),
    );
    expect(again.status).toBe(409);
    expect((await http(`${b.base}/threads/${fresh.threadId}?resourceId=${fresh.resourceId}`)).status).toBe(404);
  });

  it('a state that does not fit the schema: 400 naming the field, no thread created', async () => {
    const fresh: Thread = { threadId: uid('never'), resourceId: uid('user') };
    const res = await postRun(
      `${b.base}/run`,
      runInput({ threadId: fresh.threadId, messages: [userMessage('hi')], state: { facts: 'not a list' }, forwardedProps: { resourceId: fresh.resourceId } }),
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'INVALID_INPUT', details: [expect.objectContaining({ path: 'state.facts' })] });
    expect((await http(`${b.base}/threads/${fresh.threadId}?resourceId=${fresh.resourceId}`)).status).toBe(404);
  });
});

describe('a drain', () => {
  it('does not wait for a pending approval: it is not in flight, and stays answerable', async () => {
    const own = await startTestBridge();
    try {
      const t: Thread = { threadId: uid('drain'), resourceId: uid('user') };
      const res = await postRun(
        `${own.base}/run`,
        runInput({ threadId: t.threadId, messages: [userMessage('delete notes.txt')], forwardedProps: { resourceId: t.resourceId } }),
      );
      const events: AnyEvent[] = [];
      for await (const event of sseEvents(res.body!)) events.push(event);
      expect(events.at(-1)).toMatchObject({ outcome: { type: 'interrupt' } });
      // Waiting the whole grace would time the test out: a drain with nothing in flight answers true at once.
      expect(await own.bridge.drain(120_000)).toBe(true);
      const pending = await own.demo.listSuspendedRuns({ threadId: t.threadId, resourceId: t.resourceId });
      expect(pending.runs).toHaveLength(1);
    } finally {
      await own.close();
    }
  });
});
