import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventType, HttpAgent } from '@ag-ui/client';
import type { ThreadStateStorage } from '@mastra/core/storage';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BridgeConfigError, createBridge } from '../src/index.js';
import { idempotencyRecordKey } from '../src/http/idempotency.js';
import { IDEMPOTENCY_STATE_TYPE, type IdempotencyRecord } from '../src/idempotency/idempotency-store.js';
import { assistantText, ofType, runInput, runStrict, uid, userMessage } from './support/agui.js';
import { runAgentStrict } from './support/run.js';
import { http, startTestBridge, useTestBridge, type TestBridge } from './support/server.js';
import { brackets, type AnyEvent, type SseReader } from './support/sse.js';
import { follow, get, newThread, threadUrl, type Thread } from './support/threads.js';

/** POSTs to a steering route of the thread as its resource, with `Idempotency-Key: key` when given. */
function send(b: TestBridge, t: Thread, route: string, body: Record<string, unknown>, key?: string) {
  return http(threadUrl(b, t, `/${route}`), {
    body: { resourceId: t.resourceId, ...body },
    headers: key === undefined ? {} : { 'idempotency-key': key },
  });
}

/** The contents of the thread's stored messages (a message sent by a signal route has the role `signal`). */
async function stored(b: TestBridge, t: Thread): Promise<unknown[]> {
  const res = await get(b, t, 'messages');
  expect(res.status).toBe(200);
  return res.body.map((m: { content: unknown }) => m.content);
}

/** Runs that have ended on the followed thread, as their run ids. */
const endedRuns = (sse: SseReader) => brackets(sse.list).filter((r) => ['RUN_FINISHED', 'RUN_ERROR'].includes((r.at(-1) as AnyEvent).type));

/**
 * Sends a message with no key and waits until the thread has ended `runs` runs in all: once it
 * has, any run a retry might have started before it has ended too (a thread runs one at a time).
 */
async function settle(b: TestBridge, t: Thread, sse: SseReader, runs: number): Promise<void> {
  const sentinel = await send(b, t, 'send-message', { message: 'sentinel' });
  expect(sentinel.status).toBe(202);
  await sse.waitFor(() => endedRuns(sse).length >= runs, `${runs} ended runs`);
}

/** The record the bridge keeps for a key, read straight from Mastra's thread-state domain. */
async function recordOf(b: TestBridge, t: Thread, route: string, key: string): Promise<IdempotencyRecord | undefined> {
  const domain = (await b.storage.getStore('threadState')) as ThreadStateStorage;
  return domain.getState<IdempotencyRecord>({ threadId: t.threadId, type: `${IDEMPOTENCY_STATE_TYPE}:${idempotencyRecordKey(route, t.resourceId, key)}` });
}

const REPLAYED = 'idempotent-replayed';

describe('Idempotency-Key on the five steering routes: a retry gets the first answer, and nothing happens twice', () => {
  const b = useTestBridge();

  for (const route of ['send-message', 'queue-message'] as const) {
    it(`${route}: the retry is answered the same, the message is stored once and answered once`, async () => {
      const t = newThread();
      const sse = await follow(b, t);
      const key = uid('key');
      const first = await send(b, t, route, { message: 'only once' }, key);
      expect(first.status).toBe(202);
      expect(first.body).toEqual({ action: 'wake', runId: expect.any(String), signalId: expect.any(String) });
      expect(first.headers.get(REPLAYED)).toBeNull();
      await sse.waitForCount('RUN_FINISHED', 1);

      const retry = await send(b, t, route, { message: 'only once' }, key);
      expect(retry.status).toBe(202);
      expect(retry.body).toEqual(first.body);
      expect(retry.headers.get(REPLAYED)).toBe('true');

      await settle(b, t, sse, 2);
      expect(await stored(b, t)).toEqual(['only once', 'Echo: only once', 'sentinel', 'Echo: sentinel']);
      expect(endedRuns(sse).map((r) => r[0].runId)[0]).toBe(first.body.runId);
      expect(endedRuns(sse)).toHaveLength(2);
      await sse.close();
    });
  }

  it('signals: the retry is answered the same, the signal is stored once and answered once', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const key = uid('key');
    const body = { type: 'notification', contents: 'Build #7 passed', attributes: { source: 'ci' } };
    const first = await send(b, t, 'signals', body, key);
    expect(first.status).toBe(202);
    expect(first.body.action).toBe('wake');
    await sse.waitForCount('RUN_FINISHED', 1);

    const retry = await send(b, t, 'signals', body, key);
    expect(retry.status).toBe(202);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get(REPLAYED)).toBe('true');

    await settle(b, t, sse, 2);
    const history = await stored(b, t);
    expect(history.filter((content) => content === 'Build #7 passed')).toHaveLength(1);
    expect(endedRuns(sse)).toHaveLength(2);
    // One snapshot of the signal on the stream: the retry sent nothing.
    expect(sse.list.filter((e) => e.type === 'ACTIVITY_SNAPSHOT' && e.messageId === first.body.signalId)).toHaveLength(1);
    await sse.close();
  });

  it('notifications: the retry is answered the same record, and the thread has one notification', async () => {
    const t = newThread();
    const key = uid('key');
    const body = { source: 'ci', kind: 'deploy', summary: 'Deploy finished' };
    const first = await send(b, t, 'notifications', body, key);
    expect(first.status).toBe(202);
    expect(first.body.record).toMatchObject({ id: expect.any(String), summary: 'Deploy finished' });

    const retry = await send(b, t, 'notifications', body, key);
    expect(retry.status).toBe(202);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get(REPLAYED)).toBe('true');

    const listed = await get(b, t, 'notifications');
    expect(listed.body.map((n: { id: string }) => n.id)).toEqual([first.body.record.id]);
    // Without a key the same body is a second notification.
    const again = await send(b, t, 'notifications', body);
    expect(again.body.record.id).not.toBe(first.body.record.id);
    expect((await get(b, t, 'notifications')).body).toHaveLength(2);
  });

  it('tool-approval: the retry gets the first 202 (not "not waiting"), and the call runs once', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    expect((await send(b, t, 'send-message', { message: 'delete a.txt' })).status).toBe(202);
    await sse.waitForCount('RUN_FINISHED', 1);
    const pending = await get(b, t, 'pending-approvals');
    expect(pending.body).toHaveLength(1);
    const { toolCallId } = pending.body[0];
    const key = uid('key');

    const first = await send(b, t, 'tool-approval', { toolCallId, approved: true }, key);
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ runId: expect.any(String), toolCallId });
    await sse.waitForCount('RUN_FINISHED', 2);

    const retry = await send(b, t, 'tool-approval', { toolCallId, approved: true }, key);
    expect(retry.status).toBe(202);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get(REPLAYED)).toBe('true');
    // Without the key, a second approval is what it always was: the call is not waiting any more.
    const unkeyed = await send(b, t, 'tool-approval', { toolCallId, approved: true });
    expect(unkeyed.status).toBe(409);

    await settle(b, t, sse, 3);
    const results = sse.list.filter((e) => e.type === 'TOOL_CALL_RESULT' && e.toolCallId === toolCallId);
    expect(results).toHaveLength(1);
    const agui = await get(b, t, 'messages', '&format=agui');
    expect(agui.body.filter((m: { role: string; toolCallId?: string }) => m.role === 'tool' && m.toolCallId === toolCallId)).toHaveLength(1);
    await sse.close();
  });

  it('the same key with another body is 409 CONFLICT, which says so, and changes nothing', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const key = uid('key');
    const first = await send(b, t, 'send-message', { message: 'first body' }, key);
    expect(first.status).toBe(202);
    await sse.waitForCount('RUN_FINISHED', 1);

    const other = await send(b, t, 'send-message', { message: 'another body' }, key);
    expect(other.status).toBe(409);
    expect(other.body).toEqual({ code: 'CONFLICT', error: expect.stringContaining('different request body') });
    expect(other.body.error).toContain(key);
    // The first answer stands for the first body; key order in the JSON does not matter.
    const reordered = await http(threadUrl(b, t, '/send-message'), {
      rawBody: JSON.stringify({ message: 'first body', resourceId: t.resourceId }),
      headers: { 'idempotency-key': key },
    });
    expect(reordered.status).toBe(202);
    expect(reordered.headers.get(REPLAYED)).toBe('true');

    await settle(b, t, sse, 2);
    expect(await stored(b, t)).toEqual(['first body', 'Echo: first body', 'sentinel', 'Echo: sentinel']);
    await sse.close();
  });

  it('a key is scoped to its route and its resource: the same key elsewhere is a new request', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const key = uid('key');
    const sent = await send(b, t, 'send-message', { message: 'one' }, key);
    await sse.waitForCount('RUN_FINISHED', 1);
    const queued = await send(b, t, 'queue-message', { message: 'one' }, key);
    expect(queued.status).toBe(202);
    expect(queued.headers.get(REPLAYED)).toBeNull();
    expect(queued.body.signalId).not.toBe(sent.body.signalId);
    await sse.waitForCount('RUN_FINISHED', 2);
    // Another resource on its own thread: its own record.
    const u = newThread();
    const theirs = await send(b, u, 'notifications', { source: 'ci', kind: 'k', summary: 's' }, key);
    expect(theirs.status).toBe(202);
    expect(theirs.headers.get(REPLAYED)).toBeNull();
    await sse.close();
  });

  it('a malformed key is 400 INVALID_INPUT on header.idempotency-key, before anything is sent', async () => {
    const t = newThread();
    for (const key of ['x'.repeat(257), 'caf\u00e9', '']) {
      const res = await send(b, t, 'send-message', { message: 'never sent' }, key);
      expect(res.status, JSON.stringify(key)).toBe(400);
      expect(res.body).toEqual({
        error: 'Invalid header',
        code: 'INVALID_INPUT',
        details: [{ path: 'header.idempotency-key', message: 'must be 1 to 256 printable ASCII characters' }],
      });
    }
    expect((await send(b, t, 'send-message', { message: 'ok' }, 'k'.repeat(256))).status).toBe(202);
    expect((await send(b, newThread(), 'signals', { type: 'user', contents: 'ok' }, 'a key with spaces & ~!')).status).toBe(202);
  });

  it('without the header nothing changes, and the records are never read', async () => {
    const domain = (await b.storage.getStore('threadState')) as ThreadStateStorage;
    const ours = (args: unknown[]) => (args[0] as { type: string }).type.startsWith(IDEMPOTENCY_STATE_TYPE);
    const getState = vi.spyOn(domain, 'getState');
    const setState = vi.spyOn(domain, 'setState');
    try {
      const t = newThread();
      const sse = await follow(b, t);
      const first = await send(b, t, 'send-message', { message: 'twice' });
      await sse.waitForCount('RUN_FINISHED', 1);
      const second = await send(b, t, 'send-message', { message: 'twice' });
      expect(second.status).toBe(202);
      expect(second.headers.get(REPLAYED)).toBeNull();
      expect(second.body.signalId).not.toBe(first.body.signalId);
      await sse.waitForCount('RUN_FINISHED', 2);
      expect(await stored(b, t)).toEqual(['twice', 'Echo: twice', 'twice', 'Echo: twice']);
      expect(getState.mock.calls.filter(ours)).toEqual([]);
      expect(setState.mock.calls.filter(ours)).toEqual([]);
      await sse.close();
    } finally {
      getState.mockRestore();
      setState.mockRestore();
    }
  });

  it('concurrent duplicates: one is sent, the others wait for it and replay its answer', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const key = uid('key');
    const answers = await Promise.all([1, 2, 3].map(() => send(b, t, 'send-message', { message: 'at once' }, key)));
    for (const answer of answers) {
      expect(answer.status).toBe(202);
      expect(answer.body).toEqual(answers[0].body);
    }
    expect(answers.filter((a) => a.headers.get(REPLAYED) === null)).toHaveLength(1);
    await settle(b, t, sse, 2);
    expect(await stored(b, t)).toEqual(['at once', 'Echo: at once', 'sentinel', 'Echo: sentinel']);
    await sse.close();
  });

  it('an error is not remembered: the retry tries again', async () => {
    const t = newThread();
    const owner = uid('owner');
    expect((await http(`${b.base}/threads`, { body: { resourceId: owner, threadId: t.threadId } })).status).toBe(201);
    const key = uid('key');
    const refused = await send(b, t, 'send-message', { message: 'mine?' }, key);
    expect(refused.status).toBe(404);
    expect(await recordOf(b, t, 'send-message', key)).toBeUndefined();
    expect((await http(`${threadUrl(b, t)}?resourceId=${owner}`, { method: 'DELETE' })).status).toBe(204);

    const retry = await send(b, t, 'send-message', { message: 'mine?' }, key);
    expect(retry.status).toBe(202);
    expect(retry.headers.get(REPLAYED)).toBeNull();
    expect(await recordOf(b, t, 'send-message', key)).toMatchObject({ status: 202, body: retry.body, expiresAt: expect.any(Number) });
  });
});

describe('idempotencyTtlMs: an expired record is ignored, and the new answer replaces it', () => {
  // 0: each record has expired by the time anything reads it (no clock games, no sleeps).
  const b = useTestBridge({ config: { idempotencyTtlMs: 0 } });

  it('the retry of an expired key is a new request: sent, stored and answered again', async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const key = uid('key');
    const first = await send(b, t, 'send-message', { message: 'again later' }, key);
    await sse.waitForCount('RUN_FINISHED', 1);
    expect(await recordOf(b, t, 'send-message', key)).toMatchObject({ body: first.body });

    const later = await send(b, t, 'send-message', { message: 'again later' }, key);
    expect(later.status).toBe(202);
    expect(later.headers.get(REPLAYED)).toBeNull();
    expect(later.body.signalId).not.toBe(first.body.signalId);
    await sse.waitForCount('RUN_FINISHED', 2);
    expect(await recordOf(b, t, 'send-message', key)).toMatchObject({ body: later.body });
    // An expired key may even come back with another body: it is a new request.
    expect((await send(b, t, 'send-message', { message: 'something else' }, key)).status).toBe(202);
    await sse.waitForCount('RUN_FINISHED', 3);
    expect(await stored(b, t)).toEqual(['again later', 'Echo: again later', 'again later', 'Echo: again later', 'something else', 'Echo: something else']);
    await sse.close();
  });

  it('the default is 24 hours; a negative or fractional TTL is a config error', () => {
    expect(createBridge().config.idempotencyTtlMs).toBe(24 * 3600 * 1000);
    for (const idempotencyTtlMs of [-1, 1.5]) expect(() => createBridge({ idempotencyTtlMs })).toThrow(BridgeConfigError);
  });
});

describe('a retry after a restart on the same LibSQL database is still recognised', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'agui-idempotency-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('send-message before the restart, its retry after: the first answer, and the message once', async () => {
    const databaseUrl = `file:${join(dir, 'keys.db')}`;
    const t = newThread();
    const key = uid('key');
    const before = await startTestBridge({ databaseUrl });
    let first: Awaited<ReturnType<typeof send>>;
    try {
      const sse = await follow(before, t);
      first = await send(before, t, 'send-message', { message: 'across a restart' }, key);
      expect(first.status).toBe(202);
      await sse.waitForCount('RUN_FINISHED', 1);
      await sse.close();
    } finally {
      await before.close();
    }

    const after = await startTestBridge({ databaseUrl });
    try {
      const sse = await follow(after, t);
      const retry = await send(after, t, 'send-message', { message: 'across a restart' }, key);
      expect(retry.status).toBe(202);
      expect(retry.body).toEqual(first.body);
      expect(retry.headers.get(REPLAYED)).toBe('true');
      await settle(after, t, sse, 1);
      expect(await stored(after, t)).toEqual(['across a restart', 'Echo: across a restart', 'sentinel', 'Echo: sentinel']);
      await sse.close();
    } finally {
      await after.close();
    }
  });
});

describe('POST /run is idempotent on its message ids', () => {
  const b = useTestBridge();

  it('a retried /run (same messages) is answered with the stored history, and nothing is stored or run again', async () => {
    const threadId = uid('thread');
    const message = userMessage('answer me once');
    const input = runInput({ threadId, messages: [message] });
    const first = await runStrict(`${b.base}/run`, input);
    expect(assistantText(first.events)).toBe('Echo: answer me once');
    const history = (await http(`${b.base}/threads/${threadId}/messages?resourceId=default&format=agui`)).body;

    for (const retry of [input, { ...input, runId: uid('run') }]) {
      const run = await runStrict(`${b.base}/run`, retry);
      expect(run.types).toEqual([EventType.RUN_STARTED, EventType.MESSAGES_SNAPSHOT, EventType.RUN_FINISHED]);
      expect(run.events[0]).toMatchObject({ threadId, runId: retry.runId });
      expect(ofType(run.events, EventType.MESSAGES_SNAPSHOT)[0].messages).toEqual(history);
    }
    const rows = (await http(`${b.base}/threads/${threadId}/messages?resourceId=default`)).body;
    expect(rows.map((m: { role: string; content: unknown }) => [m.role, m.content])).toEqual([
      ['user', 'answer me once'],
      ['assistant', 'Echo: answer me once'],
    ]);
  });

  it('an HttpAgent that retries gets the answer into its messages', async () => {
    const threadId = uid('thread');
    const url = `${b.base}/run`;
    const message = userMessage('retry me');
    await runAgentStrict(new HttpAgent({ url, threadId, initialMessages: [message] }), { runId: uid('run') });
    // A second client that never saw the answer (its request timed out) sends the same messages.
    const retrying = new HttpAgent({ url, threadId, initialMessages: [message] });
    const run = await runAgentStrict(retrying, { runId: uid('run') });
    expect(run.types).toEqual([EventType.RUN_STARTED, EventType.MESSAGES_SNAPSHOT, EventType.RUN_FINISHED]);
    expect(retrying.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'retry me'],
      ['assistant', 'Echo: retry me'],
    ]);
  });

  it('on a long thread (more rows than a run reads back): the whole conversation sent again stores only the new message, and a retry of its first run is still recognised', async () => {
    const threadId = uid('long');
    const url = `${b.base}/run`;
    const agent = new HttpAgent({ url, threadId });
    const first = userMessage('turn 0');
    for (let turn = 0; turn < 12; turn++) {
      agent.addMessage(turn === 0 ? first : userMessage(`turn ${turn}`));
      await runAgentStrict(agent, { runId: uid('run') }); // sends every message so far
    }
    const rows = async () =>
      ((await http(`${url.replace('/run', '')}/threads/${threadId}/messages?resourceId=default`)).body as Array<{ content: unknown }>).map((m) => m.content);
    expect(await rows()).toHaveLength(24);
    expect((await rows()).filter((content) => content === 'turn 11')).toHaveLength(1);
    // A client that timed out on the first run sends it again: its message is stored 23 rows back.
    const retry = await runStrict(url, runInput({ threadId, messages: [first] }));
    expect(retry.types).toEqual([EventType.RUN_STARTED, EventType.MESSAGES_SNAPSHOT, EventType.RUN_FINISHED]);
    expect(await rows()).toHaveLength(24);
  });

  it('a run with no message at all is still refused 400', async () => {
    const res = await http(`${b.base}/run`, { body: runInput({ messages: [] }) });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('no new message');
  });
});
