import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uid } from './support/agui.js';
import { http, startTestBridge, useTestBridge, type TestBridge } from './support/server.js';
import { brackets, foldMessages, isTerminal, openSse, type AnyEvent, type SseReader } from './support/sse.js';
import { eventsUrl, expectValidStream, follow, get, newThread, post, threadUrl, type Thread } from './support/threads.js';

/** Creates the thread in memory (some routes need it to exist). */
async function createThread(b: TestBridge, t: Thread): Promise<void> {
  const res = await http(`${b.base}/threads`, { body: { resourceId: t.resourceId, threadId: t.threadId } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

/** A message the demo echoes word by word: with `delayMs: 30` a run that lasts about a second. */
const longMessage = (words = 30) => Array.from({ length: words }, (_, i) => `w${i}`).join(' ');

/** Resolves once the assistant has started answering in the run `runId` (the run is active). */
async function answering(sse: SseReader, runId: string): Promise<void> {
  const start = await sse.waitForEvent((e) => e.type === 'RUN_STARTED' && e.runId === runId);
  await sse.waitForEvent((e) => e.type === 'TEXT_MESSAGE_CONTENT' && e.delta === 'Echo: ', start.index);
}

/** The bracket (RUN_STARTED … terminal) of the `n`-th run with this id, once it has ended. */
async function bracketOf(sse: SseReader, runId: string, n = 0): Promise<AnyEvent[]> {
  const done = () => brackets(sse.list).filter((r) => r[0].runId === runId && isTerminal(r.at(-1) as AnyEvent));
  await sse.waitFor(() => done().length > n, `bracket of ${runId}`);
  return done()[n];
}

const userText = (run: AnyEvent[], messageId: string) =>
  run
    .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT' && e.messageId === messageId)
    .map((e) => e.delta)
    .join('');
const assistantText = (run: AnyEvent[]) => {
  const ids = new Set(run.filter((e) => e.type === 'TEXT_MESSAGE_START' && e.role === 'assistant').map((e) => e.messageId));
  return run
    .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT' && ids.has(e.messageId))
    .map((e) => e.delta)
    .join('');
};

describe('routing decisions of send-message, queue-message, signals', () => {
  const b = useTestBridge({ delayMs: 30 });

  it('send-message on an idle thread wakes it: the bracket has its runId and echoes the message with its signalId', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const res = await post(b, t, 'send-message', { message: 'hello' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ action: 'wake', runId: expect.any(String), signalId: expect.any(String) });
    const run = await bracketOf(sse, res.body.runId);
    expect(run[0]).toEqual({ type: 'RUN_STARTED', threadId: t.threadId, runId: res.body.runId });
    expect(run[1]).toMatchObject({ type: 'TEXT_MESSAGE_START', messageId: res.body.signalId, role: 'user' });
    expect(userText(run, res.body.signalId)).toBe('hello');
    expect(assistantText(run)).toBe('Echo: hello');
    expect(run.at(-1)).toMatchObject({ type: 'RUN_FINISHED', threadId: t.threadId, runId: res.body.runId });
    await sse.close();
  });

  it('send-message with attributes: the echo carries them as metadata', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const res = await post(b, t, 'send-message', { message: { contents: 'from the web', attributes: { sentFrom: 'web', n: 2 } } });
    expect(res.body.action).toBe('wake');
    const run = await bracketOf(sse, res.body.runId);
    expect(run[1]).toMatchObject({
      type: 'TEXT_MESSAGE_START',
      messageId: res.body.signalId,
      role: 'user',
      metadata: { attributes: { sentFrom: 'web', n: 2 } },
    });
    await sse.close();
  });

  it('send-message while a run is active is delivered into that run: its echo appears inside the same bracket', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const woke = await post(b, t, 'send-message', { message: longMessage() });
    await answering(sse, woke.body.runId);
    const steer = await post(b, t, 'send-message', { message: 'steer now' });
    expect(steer.status).toBe(202);
    expect(steer.body).toEqual({ action: 'deliver', runId: woke.body.runId, signalId: expect.any(String) });
    const run = await bracketOf(sse, woke.body.runId);
    expect(userText(run, steer.body.signalId)).toBe('steer now');
    expect(run.at(-1)?.type).toBe('RUN_FINISHED');
    expect(assistantText(run)).toContain('Echo: steer now');
    // Only one bracket for the run: the delivered message did not start a run of its own.
    expect(brackets(sse.list)).toHaveLength(1);
    await expectValidStream(sse.list);
    await sse.close();
  });

  it('queue-message while a run is active is delivered with a new runId, which the next bracket carries', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const woke = await post(b, t, 'send-message', { message: longMessage() });
    await answering(sse, woke.body.runId);
    const queued = await post(b, t, 'queue-message', { message: 'queued follow-up' });
    expect(queued.status).toBe(202);
    expect(queued.body).toEqual({ action: 'deliver', runId: expect.any(String), signalId: expect.any(String) });
    expect(queued.body.runId).not.toBe(woke.body.runId);
    const next = await bracketOf(sse, queued.body.runId);
    const runs = brackets(sse.list);
    expect(runs.map((r) => r[0].runId)).toEqual([woke.body.runId, queued.body.runId]);
    expect(userText(runs[0], queued.body.signalId)).toBe(''); // not in the active run
    expect(next[1]).toMatchObject({ type: 'TEXT_MESSAGE_START', messageId: queued.body.signalId, role: 'user' });
    expect(assistantText(next)).toBe('Echo: queued follow-up');
    await expectValidStream(sse.list);
    await sse.close();
  });

  it('queue-message on an idle thread wakes it', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const res = await post(b, t, 'queue-message', { message: 'right away' });
    expect(res.body).toEqual({ action: 'wake', runId: expect.any(String), signalId: expect.any(String) });
    expect(assistantText(await bracketOf(sse, res.body.runId))).toBe('Echo: right away');
    await sse.close();
  });

  it('ifIdle persist on an idle thread: stored, with a bracket that echoes it and no model text', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const res = await post(b, t, 'send-message', { message: 'just keep this', ifIdle: { behavior: 'persist' } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ action: 'persist', signalId: expect.any(String) });
    await sse.waitForCount('RUN_FINISHED', 1);
    const [run] = brackets(sse.list);
    expect(run.map((e) => e.type)).toEqual(['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_FINISHED']);
    expect(run[1]).toMatchObject({ messageId: res.body.signalId, role: 'user' });
    expect(assistantText(run)).toBe('');
    // A reactive signal persisted the same way is an activity, not a message.
    const reactive = await post(b, t, 'signals', { type: 'reactive', contents: 'fyi', ifIdle: { behavior: 'persist' } });
    expect(reactive.body.action).toBe('persist');
    await sse.waitForCount('RUN_FINISHED', 2);
    const second = brackets(sse.list)[1];
    expect(second.map((e) => e.type)).toEqual(['RUN_STARTED', 'ACTIVITY_SNAPSHOT', 'RUN_FINISHED']);
    expect(second[1]).toMatchObject({ messageId: reactive.body.signalId, activityType: 'signal.reactive', content: { contents: 'fyi' } });
    await expectValidStream(sse.list);
    // Stored where its sender can read it back: the thread (new until now) exists and is the sender's.
    const stored = await get(b, t, 'messages');
    expect(stored.status).toBe(200);
    expect(stored.body.map((m: { content: unknown }) => m.content)).toEqual(['just keep this', 'fyi']);
    expect((await http(`${threadUrl(b, t)}?resourceId=${t.resourceId}`)).body).toMatchObject({ id: t.threadId, resourceId: t.resourceId });
    const other = await http(threadUrl(b, t, '/send-message'), { body: { resourceId: uid('user'), message: 'mine now?' } });
    expect(other.status).toBe(404);
    await sse.close();
  });

  it('ifIdle discard on an idle thread: nothing on the stream (a follow-up wake is the first bracket)', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const res = await post(b, t, 'send-message', { message: 'forget this', ifIdle: { behavior: 'discard' } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ action: 'discard', signalId: expect.any(String) });
    const next = await post(b, t, 'send-message', { message: 'follow-up' });
    expect(next.body.action).toBe('wake');
    await bracketOf(sse, next.body.runId);
    expect(sse.list[0]).toMatchObject({ type: 'RUN_STARTED', runId: next.body.runId });
    expect(brackets(sse.list)).toHaveLength(1);
    expect(JSON.stringify(sse.list)).not.toContain('forget this');
    await sse.close();
  });

  it('ifActive persist / discard while a run is active: not delivered into the run', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const woke = await post(b, t, 'send-message', { message: longMessage() });
    await answering(sse, woke.body.runId);
    const kept = await post(b, t, 'send-message', { message: 'keep for later', ifActive: { behavior: 'persist' } });
    expect(kept.body).toEqual({ action: 'persist', signalId: expect.any(String) });
    const dropped = await post(b, t, 'signals', { type: 'notification', contents: 'drop me', ifActive: { behavior: 'discard' } });
    expect(dropped.body).toEqual({ action: 'discard', signalId: expect.any(String) });
    const run = await bracketOf(sse, woke.body.runId);
    expect(JSON.stringify(run)).not.toContain('keep for later');
    expect(JSON.stringify(run)).not.toContain('drop me');
    await sse.close();
  });

  it('signals: notification, reactive (custom tagName) and user types on an idle thread', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const notification = await post(b, t, 'signals', { type: 'notification', contents: 'Deploy done', attributes: { source: 'ci' } });
    expect(notification.body).toEqual({ action: 'wake', runId: expect.any(String), signalId: expect.any(String) });
    const first = await bracketOf(sse, notification.body.runId);
    expect(first.find((e) => e.type === 'ACTIVITY_SNAPSHOT')).toMatchObject({
      messageId: notification.body.signalId,
      activityType: 'signal.notification',
      content: { tagName: 'notification', contents: 'Deploy done', attributes: { source: 'ci' } },
    });
    const reactive = await post(b, t, 'signals', { type: 'reactive', contents: 'heads up', tagName: 'reminder' });
    const second = await bracketOf(sse, reactive.body.runId);
    expect(second.find((e) => e.type === 'ACTIVITY_SNAPSHOT')).toMatchObject({ activityType: 'signal.reactive', content: { tagName: 'reminder' } });
    const user = await post(b, t, 'signals', { type: 'user', contents: 'as a user' });
    const third = await bracketOf(sse, user.body.runId);
    expect(userText(third, user.body.signalId)).toBe('as a user');
    await expectValidStream(sse.list);
    await sse.close();
  });
});

describe('notifications and state', () => {
  const b = useTestBridge();

  it('a notification on an idle thread is delivered and wakes the agent; GET lists it, filtered by status', async () => {
    const t = newThread();
    await createThread(b, t);
    const sse = await follow(b, t);
    const res = await post(b, t, 'notifications', { source: 'ci', kind: 'build', summary: 'Build #7 passed' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      record: expect.objectContaining({ id: expect.any(String), threadId: t.threadId, source: 'ci', kind: 'build', summary: 'Build #7 passed' }),
      decision: expect.objectContaining({ action: 'deliver' }),
      runId: expect.any(String),
    });
    const run = await bracketOf(sse, res.body.runId);
    const activity = run.find((e) => e.type === 'ACTIVITY_SNAPSHOT');
    expect(activity).toMatchObject({ activityType: 'signal.notification', content: { tagName: 'notification', contents: 'Build #7 passed' } });
    expect(activity?.content.attributes).toMatchObject({ source: 'ci' });
    expect(assistantText(run)).toContain('Build #7 passed');

    const all = await get(b, t, 'notifications');
    expect(all.status).toBe(200);
    expect(all.body).toEqual([expect.objectContaining({ id: res.body.record.id, summary: 'Build #7 passed', status: 'delivered' })]);
    expect((await get(b, t, 'notifications', '&status=delivered')).body.map((n: { id: string }) => n.id)).toEqual([res.body.record.id]);
    expect((await get(b, t, 'notifications', '&status=pending')).body).toEqual([]);
    await sse.close();
  });

  it('a low-priority notification is summarized later, not delivered: no run, listed as pending', async () => {
    const t = newThread();
    await createThread(b, t);
    const res = await post(b, t, 'notifications', { source: 'ci', kind: 'lint', summary: 'Lint warnings', priority: 'low' });
    expect(res.status).toBe(202);
    expect(res.body.decision.action).toBe('summarize');
    expect(res.body.runId).toBeUndefined();
    expect((await get(b, t, 'notifications', '&status=pending')).body.map((n: { id: string }) => n.id)).toEqual([res.body.record.id]);
  });

  it('state: 202 on an existing thread, 200 skipped for the same cacheKey, 404 on a thread that does not exist', async () => {
    const t = newThread();
    await createThread(b, t);
    const sse = await follow(b, t);
    const first = await post(b, t, 'state', { id: 'cart', cacheKey: 'v1', contents: 'Cart: 2 items' });
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ action: 'wake', runId: expect.any(String), signalId: expect.any(String) });
    const run = await bracketOf(sse, first.body.runId);
    expect(run.find((e) => e.type === 'ACTIVITY_SNAPSHOT')).toMatchObject({
      messageId: first.body.signalId,
      activityType: 'signal.state',
      content: { contents: 'Cart: 2 items' },
    });
    const again = await post(b, t, 'state', { id: 'cart', cacheKey: 'v1', contents: 'Cart: 2 items' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ skipped: true, reason: 'unchanged' });
    const changed = await post(b, t, 'state', { id: 'cart', cacheKey: 'v2', contents: 'Cart: 3 items', ifIdle: { behavior: 'persist' } });
    expect(changed.status).toBe(202);
    expect(changed.body.action).toBe('persist');

    const missing = await post(b, newThread(), 'state', { id: 'cart', cacheKey: 'v1', contents: 'Cart: 2 items' });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('THREAD_NOT_FOUND');
    await sse.close();
  });
});

describe('tool approvals', () => {
  const b = useTestBridge();

  /** Sends 'delete a.txt' and waits for the interrupt; returns the pending approval. */
  async function interrupted(t: Thread, sse: SseReader) {
    const res = await post(b, t, 'send-message', { message: 'delete a.txt' });
    expect(res.body.action).toBe('wake');
    const run = await bracketOf(sse, res.body.runId);
    expect(run.at(-1)).toMatchObject({
      type: 'RUN_FINISHED',
      runId: res.body.runId,
      outcome: { type: 'interrupt', interrupts: [expect.objectContaining({ reason: 'tool_approval' })] },
    });
    const pending = await get(b, t, 'pending-approvals');
    expect(pending.status).toBe(200);
    expect(pending.body).toEqual([{ runId: res.body.runId, toolCallId: expect.any(String), toolName: 'delete_file', args: { path: 'a.txt' } }]);
    expect(run.at(-1)?.outcome.interrupts[0].toolCallId).toBe(pending.body[0].toolCallId);
    return pending.body[0] as { runId: string; toolCallId: string };
  }

  it('approve: 202 { runId, toolCallId }, then a fresh bracket of the same run with the result and the answer', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const call = await interrupted(t, sse);
    const res = await post(b, t, 'tool-approval', { toolCallId: call.toolCallId, approved: true });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ runId: call.runId, toolCallId: call.toolCallId });
    const resumed = await bracketOf(sse, call.runId, 1);
    expect(resumed[0]).toEqual({ type: 'RUN_STARTED', threadId: t.threadId, runId: call.runId });
    expect(resumed.find((e) => e.type === 'TOOL_CALL_RESULT')).toMatchObject({
      toolCallId: call.toolCallId,
      messageId: `tool-result-${call.toolCallId}`,
      role: 'tool',
      content: JSON.stringify({ deleted: 'a.txt' }),
    });
    expect(assistantText(resumed)).toMatch(/^Deleted as requested/);
    expect(resumed.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: call.runId });
    expect(resumed.at(-1)?.outcome).toBeUndefined();
    expect((await get(b, t, 'pending-approvals')).body).toEqual([]);
    await expectValidStream(sse.list);
    // Folded by a client: one call with its arguments once, and its result.
    const messages = (await foldMessages(sse.list)) as Array<Record<string, any>>;
    const withCall = messages.find((m) => m.toolCalls?.some((c: { id: string }) => c.id === call.toolCallId));
    expect(JSON.parse(withCall?.toolCalls[0].function.arguments)).toEqual({ path: 'a.txt' });
    expect(messages.filter((m) => m.role === 'tool' && m.toolCallId === call.toolCallId)).toHaveLength(1);
    await sse.close();
  });

  it('decline with a reason: a declined result that carries the reason, and the agent does not delete', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const call = await interrupted(t, sse);
    const res = await post(b, t, 'tool-approval', { toolCallId: call.toolCallId, approved: false, reason: 'keep it' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ runId: call.runId, toolCallId: call.toolCallId });
    const resumed = await bracketOf(sse, call.runId, 1);
    const result = resumed.find((e) => e.type === 'TOOL_CALL_RESULT');
    expect(result?.toolCallId).toBe(call.toolCallId);
    expect(JSON.parse(result?.content)).toMatchObject({ declined: true, reason: 'keep it' });
    expect(assistantText(resumed)).toMatch(/^I did not delete the file/);
    expect(assistantText(resumed)).toContain('keep it');
    await expectValidStream(sse.list);
    await sse.close();
  });

  it('an approval for an unknown toolCallId is 404 TOOL_CALL_NOT_FOUND (on a thread not created yet, THREAD_NOT_FOUND); answering a call twice is 409 CONFLICT', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const early = await post(b, t, 'tool-approval', { toolCallId: 'no-such-call', approved: true });
    expect(early.status).toBe(404);
    expect(early.body.code).toBe('THREAD_NOT_FOUND');
    const call = await interrupted(t, sse);
    const unknown = await post(b, t, 'tool-approval', { toolCallId: 'no-such-call', approved: true });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('TOOL_CALL_NOT_FOUND');
    expect((await post(b, t, 'tool-approval', { toolCallId: call.toolCallId, approved: true })).status).toBe(202);
    await bracketOf(sse, call.runId, 1);
    const twice = await post(b, t, 'tool-approval', { toolCallId: call.toolCallId, approved: true });
    expect(twice.status).toBe(409);
    expect(twice.body).toMatchObject({ code: 'CONFLICT', error: expect.stringContaining(call.toolCallId) });
    expect((await post(b, t, 'tool-approval', { toolCallId: 'no-such-call', approved: false })).status).toBe(404);
    await sse.close();
  });
});

describe('tool approval across a restart (LibSQL)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'agui-signals-restart-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the pending approval is still listed after a restart, and approving it streams the result to a new subscriber', async () => {
    const databaseUrl = `file:${join(dir, 'restart.db')}`;
    const t = newThread();
    const before = await startTestBridge({ databaseUrl });
    let call: { runId: string; toolCallId: string };
    let lastId: number;
    try {
      const sse = await follow(before, t);
      const res = await post(before, t, 'send-message', { message: 'delete a.txt' });
      await bracketOf(sse, res.body.runId);
      call = (await get(before, t, 'pending-approvals')).body[0];
      expect(call).toMatchObject({ runId: res.body.runId, toolName: 'delete_file', args: { path: 'a.txt' } });
      lastId = sse.events.at(-1)?.id as number;
      await sse.close();
    } finally {
      await before.close();
    }

    const after = await startTestBridge({ databaseUrl });
    try {
      const pending = await get(after, t, 'pending-approvals');
      expect(pending.status).toBe(200);
      expect(pending.body).toEqual([{ runId: call.runId, toolCallId: call.toolCallId, toolName: 'delete_file', args: { path: 'a.txt' } }]);
      // A client that reconnects with the id it last saw: this server never had it, so a snapshot, then live above it.
      const sse = await openSse(eventsUrl(after, t), { lastEventId: lastId });
      await sse.waitForCount('RUN_FINISHED', 1);
      expect(sse.list.slice(0, 3).map((e) => e.type)).toEqual(['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED']);
      const approved = await post(after, t, 'tool-approval', { toolCallId: call.toolCallId, approved: true });
      expect(approved.status).toBe(202);
      expect(approved.body).toEqual({ runId: call.runId, toolCallId: call.toolCallId });
      const resumed = await bracketOf(sse, call.runId);
      expect(resumed.find((e) => e.type === 'TOOL_CALL_RESULT')).toMatchObject({ toolCallId: call.toolCallId, content: JSON.stringify({ deleted: 'a.txt' }) });
      expect(assistantText(resumed)).toMatch(/^Deleted as requested/);
      expect(sse.events[3].id).toBeGreaterThan(lastId);
      await expectValidStream(sse.list);
      // The snapshot held the call with its arguments; the resumed run does not add them a second time.
      const messages = (await foldMessages(sse.list)) as Array<Record<string, any>>;
      const withCall = messages.filter((m) => m.toolCalls?.some((c: { id: string }) => c.id === call.toolCallId));
      expect(withCall).toHaveLength(1);
      expect(JSON.parse(withCall[0].toolCalls.find((c: { id: string }) => c.id === call.toolCallId).function.arguments)).toEqual({ path: 'a.txt' });
      expect((await get(after, t, 'pending-approvals')).body).toEqual([]);
      await sse.close();
    } finally {
      await after.close();
    }
  });
});

describe('abort and cancelling queued messages', () => {
  const b = useTestBridge({ delayMs: 30 });

  it('abort during a run: { aborted: true }, and the bracket ends RUN_FINISHED cancelled', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const woke = await post(b, t, 'send-message', { message: longMessage() });
    await answering(sse, woke.body.runId);
    const res = await post(b, t, 'abort');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ aborted: true });
    const run = await bracketOf(sse, woke.body.runId);
    expect(run.at(-1)).toEqual({ type: 'RUN_FINISHED', threadId: t.threadId, runId: woke.body.runId, outcome: { type: 'cancelled' } });
    expect(assistantText(run).length).toBeLessThan(`Echo: ${longMessage()}`.length);
    await expectValidStream(sse.list);
    // The thread is usable again.
    const next = await post(b, t, 'send-message', { message: 'again' });
    expect(next.body.action).toBe('wake');
    expect(assistantText(await bracketOf(sse, next.body.runId))).toBe('Echo: again');
    await sse.close();
  });

  it('abort on an idle thread: { aborted: false }, with or without a body; on a thread not created yet, 404', async () => {
    const t = newThread();
    expect(await post(b, t, 'abort')).toMatchObject({ status: 404, body: { code: 'THREAD_NOT_FOUND' } });
    expect((await http(`${b.base}/threads`, { body: { threadId: t.threadId, resourceId: t.resourceId } })).status).toBe(201);
    expect((await post(b, t, 'abort')).body).toEqual({ aborted: false });
    // No body: the default resource's thread.
    const theDefaults = (await http(`${b.base}/threads`, { body: {} })).body.id as string;
    const bare = await http(`${b.base}/threads/${theDefaults}/abort`, { method: 'POST' });
    expect(bare.status).toBe(200);
    expect(bare.body).toEqual({ aborted: false });
  });

  it('DELETE /queue/:signalId cancels a queued message: it never runs', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const woke = await post(b, t, 'send-message', { message: longMessage() });
    await answering(sse, woke.body.runId);
    const queued = await post(b, t, 'queue-message', { message: 'never run me' });
    expect(queued.body.action).toBe('deliver');
    const res = await http(`${threadUrl(b, t, `/queue/${queued.body.signalId}`)}?resourceId=${t.resourceId}`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ cancelled: [queued.body.signalId] });
    await bracketOf(sse, woke.body.runId);
    // Had it stayed queued, its run would come next; a new message wakes the idle thread instead.
    const next = await post(b, t, 'send-message', { message: 'after the cancel' });
    expect(next.body.action).toBe('wake');
    await bracketOf(sse, next.body.runId);
    expect(brackets(sse.list).map((r) => r[0].runId)).toEqual([woke.body.runId, next.body.runId]);
    expect(JSON.stringify(sse.list)).not.toContain('never run me');
    expect(JSON.stringify((await get(b, t, 'messages')).body)).not.toContain('never run me');
    // Cancelling again (or an unknown id) cancels nothing.
    const again = await http(`${threadUrl(b, t, `/queue/${queued.body.signalId}`)}?resourceId=${t.resourceId}`, { method: 'DELETE' });
    expect(again.body).toEqual({ cancelled: [] });
    await sse.close();
  });
});
