import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uid } from './support/agui.js';
import { createCluster, follow, history, post, RESOURCE, startRun, text, type Cluster, type StoredMessage } from './support/cluster.js';
import type { ServerProcess } from './support/process.js';
import { http } from './support/server.js';
import { brackets, isTerminal, type AnyEvent, type SseReader } from './support/sse.js';
import { expectValidStream } from './support/threads.js';

/**
 * Several real bridge processes on one Redis and one PostgreSQL schema, where one of them dies
 * (`kill -9`) or restarts: what it ran, held or wrote is taken over by the others. A dead process's
 * runs are found by its heartbeat, within seconds; where a test waits on Mastra's thread lease
 * itself, it is 3 s (`MASTRA_AGENT_THREAD_LEASE_TTL_MS`, read at start).
 */
const LEASE_TTL_MS = 3000;
/** How soon, with the defaults a user gets, a follower elsewhere hears that a process running the run died. */
const FAILOVER_MS = 5000;
/** With several processes, the durable inbox sends again what is this old and unanswered (`inbox-recovery.ts`). */
const ORPHAN_AFTER_MS = 10_000;
const DEMO_ENV = { DEMO_DELAY_MS: '20', SLOW_TASK_MS: '200' };
const BASE_ENV = { ...DEMO_ENV, MASTRA_AGENT_THREAD_LEASE_TTL_MS: String(LEASE_TTL_MS) };

/** `work`, or a failure naming `what` once `ms` have passed; answers how long it took. */
async function within<T>(ms: number, what: string, work: Promise<T>): Promise<{ value: T; tookMs: number }> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
  });
  try {
    return { value: await Promise.race([work, late]), tookMs: Date.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

/** A message the demo answers in `n` words after `Echo:`: with a `DEMO_DELAY_MS` of d, a run of about (n + 6) × d ms. */
const words = (label: string, n: number) => `${label} ${Array.from({ length: n }, (_, i) => `w${i}`).join(' ')}`;

/** The run brackets `reader` saw for `runId` (each from RUN_STARTED through its terminal event, if any). */
const bracketsOf = (reader: SseReader, runId: string) => brackets(reader.list).filter((r) => r[0].runId === runId);

/** Resolves with the first complete bracket of `runId` (a RUN_ERROR names no run: its bracket does). */
async function wholeRun(reader: SseReader, runId: string): Promise<AnyEvent[]> {
  const done = () => bracketsOf(reader, runId).find((r) => isTerminal(r.at(-1) as AnyEvent));
  await reader.waitFor(() => done() !== undefined, `a whole run ${runId}`);
  return done() as AnyEvent[];
}

/** The durable inbox's entries of a thread, read from the schema (the table Mastra's `threadState` domain uses). */
async function inboxOf(cluster: Cluster, threadId: string): Promise<Array<{ id: string; kind: string }>> {
  const rows = await cluster.db.query(`SELECT value FROM "${cluster.db.schema}".mastra_thread_state WHERE "threadId" = $1 AND type = $2`, [
    threadId,
    'mastra-agui-bridge.inbox',
  ]);
  return (rows[0]?.value as Array<{ id: string; kind: string }> | undefined) ?? [];
}

const contentOf = (m: StoredMessage) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content));
/** Assistant messages of the history whose text includes `needle`. */
const answersWith = (stored: StoredMessage[], needle: string) => stored.filter((m) => m.role === 'assistant' && contentOf(m).includes(needle));

/**
 * Waits until `message` is stored on the thread once, with an answer after it, and the durable
 * inbox no longer holds anything of the thread (so no process will send anything again); answers
 * the history then.
 */
async function answeredOnce(cluster: Cluster, server: ServerProcess, threadId: string, id: string, needle: string, timeout: number) {
  await expect
    .poll(
      async () => {
        const stored = await history(server, threadId);
        const at = stored.findIndex((m) => m.id === id);
        return at >= 0 && stored.slice(at + 1).some((m) => m.role === 'assistant' && contentOf(m).includes(needle));
      },
      { timeout, interval: 250 },
    )
    .toBe(true);
  await expect.poll(() => inboxOf(cluster, threadId), { timeout, interval: 250 }).toEqual([]);
  const stored = await history(server, threadId);
  expect(stored.filter((m) => m.id === id)).toHaveLength(1);
  expect(answersWith(stored, needle)).toHaveLength(1);
  return stored;
}

describe('signals sent to B on a thread followed or run on A: the answers of one process', { timeout: 60_000 }, () => {
  let cluster: Cluster;
  let a: ServerProcess;
  let b: ServerProcess;

  beforeAll(async () => {
    cluster = await createCluster('signals', BASE_ENV);
    a = await cluster.start({ DEMO_DELAY_MS: '40' });
    b = await cluster.start();
  }, 60_000);
  afterAll(() => cluster?.close());

  it('a notification signal on B wakes the idle thread: A’s follower sees the run and its activity', async () => {
    const threadId = uid('notify-signal');
    const onA = await follow(a, threadId);
    const sent = await post(b, `/threads/${threadId}/signals`, { type: 'notification', contents: 'Deploy done', attributes: { source: 'ci' } });
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({ action: 'wake', runId: expect.any(String), signalId: expect.any(String) });
    const run = await wholeRun(onA, sent.body.runId);
    expect(run.find((e) => e.type === 'ACTIVITY_SNAPSHOT')).toMatchObject({
      messageId: sent.body.signalId,
      activityType: 'signal.notification',
      content: { tagName: 'notification', contents: 'Deploy done', attributes: { source: 'ci' } },
    });
    expect(run.at(-1)?.type).toBe('RUN_FINISHED');
    expect(text(run)).toContain('Deploy done');
    const stored = await history(b, threadId);
    expect(stored.filter((m) => m.id === sent.body.signalId)).toHaveLength(1);
    await onA.close();
  });

  it('a reactive signal on B while A runs the thread joins that run', async () => {
    const threadId = uid('reactive');
    const onA = await follow(a, threadId);
    const run = await startRun(a, threadId, words('first', 30));
    const runId = run.events[0].runId as string;
    const sent = await post(b, `/threads/${threadId}/signals`, { type: 'reactive', contents: 'heads up from B' });
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({ action: 'deliver', runId, signalId: expect.any(String) });
    const events = await run.rest;
    expect(events.at(-1)?.type).toBe('RUN_FINISHED');
    const bracket = await wholeRun(onA, runId);
    expect(bracket.filter((e) => e.type === 'ACTIVITY_SNAPSHOT' && e.messageId === sent.body.signalId)).toEqual([
      expect.objectContaining({ activityType: 'signal.reactive', content: expect.objectContaining({ contents: 'heads up from B' }) }),
    ]);
    const stored = await history(b, threadId);
    expect(stored.filter((m) => m.id === sent.body.signalId)).toHaveLength(1);
    await onA.close();
  });

  it('a state signal on B: wake when idle, deliver into A’s run, skipped when unchanged', async () => {
    const threadId = uid('state');
    const created = await http(`${a.url}/threads`, { body: { resourceId: 'scale-user', threadId } });
    expect(created.status).toBe(201);
    const onA = await follow(a, threadId);
    const first = await post(b, `/threads/${threadId}/state`, { id: 'cart', cacheKey: 'v1', contents: 'Cart: 2 items' });
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ action: 'wake', runId: expect.any(String), signalId: expect.any(String) });
    const woken = await wholeRun(onA, first.body.runId);
    expect(woken.find((e) => e.type === 'ACTIVITY_SNAPSHOT')).toMatchObject({
      messageId: first.body.signalId,
      activityType: 'signal.state',
      content: { contents: 'Cart: 2 items' },
    });

    const again = await post(a, `/threads/${threadId}/state`, { id: 'cart', cacheKey: 'v1', contents: 'Cart: 2 items' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ skipped: true, reason: 'unchanged' });

    const run = await startRun(a, threadId, words('shopping', 30));
    const runId = run.events[0].runId as string;
    const changed = await post(b, `/threads/${threadId}/state`, { id: 'cart', cacheKey: 'v2', contents: 'Cart: 3 items' });
    expect(changed.status).toBe(202);
    expect(changed.body).toEqual({ action: 'deliver', runId, signalId: expect.any(String) });
    await run.rest;
    const bracket = await wholeRun(onA, runId);
    expect(bracket.filter((e) => e.type === 'ACTIVITY_SNAPSHOT' && e.messageId === changed.body.signalId)).toHaveLength(1);
    const stored = await history(b, threadId);
    expect(stored.filter((m) => m.id === first.body.signalId)).toHaveLength(1);
    expect(stored.filter((m) => m.id === changed.body.signalId)).toHaveLength(1);
    await onA.close();
  });

  it('an urgent notification on B is delivered: a run wakes, A’s follower sees it, it is listed as delivered on A', async () => {
    const threadId = uid('notify');
    const created = await http(`${a.url}/threads`, { body: { resourceId: 'scale-user', threadId } });
    expect(created.status).toBe(201);
    const onA = await follow(a, threadId);
    const res = await post(b, `/threads/${threadId}/notifications`, { source: 'ci', kind: 'build', summary: 'Build #9 is red', priority: 'urgent' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      record: expect.objectContaining({ threadId, source: 'ci', kind: 'build', summary: 'Build #9 is red' }),
      decision: expect.objectContaining({ action: 'deliver' }),
      runId: expect.any(String),
    });
    const run = await wholeRun(onA, res.body.runId);
    const activity = run.find((e) => e.type === 'ACTIVITY_SNAPSHOT');
    expect(activity).toMatchObject({ activityType: 'signal.notification', content: { tagName: 'notification', contents: 'Build #9 is red' } });
    expect(activity?.content.attributes).toMatchObject({ source: 'ci', priority: 'urgent' });
    expect(text(run)).toContain('Build #9 is red');
    const listed = await http(`${a.url}/threads/${threadId}/notifications?resourceId=scale-user&status=delivered`);
    expect(listed.body.map((n: { id: string }) => n.id)).toEqual([res.body.record.id]);
    const stored = await history(b, threadId);
    expect(stored.filter((m) => m.id === activity?.messageId)).toHaveLength(1);
    await onA.close();
  });
});

describe('the process running a thread dies (Mastra’s thread lease at its default, 15 s)', { timeout: 120_000 }, () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await createCluster('failover', DEMO_ENV);
  });
  afterAll(() => cluster?.close());

  it('B’s follower gets the cut run’s terminal event within 5 s; then B answers the thread at once', async () => {
    // A streams slowly: the run is still in its second step (the answer after the tool call) when A dies.
    const a = await cluster.start({ DEMO_DELAY_MS: '150' });
    const b = await cluster.start();
    const threadId = uid('failover');
    // A runs the thread and writes its log; B never has the run's chunks, only what A wrote, and must close the cut run from that.
    const onA = await follow(a, threadId);
    const onB = await follow(b, threadId);
    const run = await startRun(a, threadId, 'what is the weather in Paris');
    const cut = run.rest.then(
      () => 'ended',
      () => 'cut',
    );
    const runId = run.events[0].runId as string;
    const call = run.events.find((e) => e.type === 'TOOL_CALL_END')!;
    const result = await onB.waitForEvent((e) => e.type === 'TOOL_CALL_RESULT' && e.toolCallId === call.toolCallId);
    await onB.waitForEvent((e) => e.type === 'TEXT_MESSAGE_CONTENT', result.index);
    await cluster.kill(a);
    const killedAt = Date.now();

    expect(await cut).toBe('cut');
    expect((await onA.ended).kind).toBe('error');
    const cutRun = await within(FAILOVER_MS, 'the cut run’s terminal event on B', wholeRun(onB, runId));
    console.log(`failover: B's follower got the cut run's ${cutRun.value.at(-1)?.type} ${Date.now() - killedAt} ms after kill -9 (default lease TTL)`);
    expect(bracketsOf(onB, runId)).toHaveLength(1);
    // Every event of the cut run once: what A wrote before it died, then what B translated alone.
    const ids = onB.events.map((e) => e.id);
    expect(ids).toEqual(ids.map((_, i) => ids[0] + i));
    expect(cutRun.value.filter((e) => e.type === 'TEXT_MESSAGE_START')).toHaveLength(1);

    const sent = await post(b, `/threads/${threadId}/send-message`, { message: 'after the crash' });
    expect(sent.status).toBe(202);
    expect(sent.body.action).toBe('wake');
    const { value: next } = await within(FAILOVER_MS, 'the answer on B', wholeRun(onB, sent.body.runId));
    expect(next.at(-1)?.type).toBe('RUN_FINISHED');
    expect(text(next)).toContain('Echo: after the crash');

    // The cut run's first step (the call and its result) is stored once; the user message once.
    const stored = await history(b, threadId, 'agui');
    expect(stored.filter((m) => m.id === run.input.messages[0].id)).toHaveLength(1);
    expect(stored.filter((m) => m.role === 'assistant' && m.toolCalls?.some((c) => c.id === call.toolCallId))).toHaveLength(1);
    expect(stored.filter((m) => m.role === 'tool' && m.toolCallId === call.toolCallId)).toHaveLength(1);
    await onB.close();
  });
  it('messages sent to B straight after A died are stored, and answered, in the order they were acknowledged', async () => {
    const a = await cluster.start({ DEMO_DELAY_MS: '150' });
    const b = await cluster.start();
    const threadId = uid('failover-order');
    const onB = await follow(b, threadId);
    const run = await startRun(a, threadId, words('long', 30));
    const cut = run.rest.catch(() => []);
    await onB.waitForEvent((e) => e.type === 'TEXT_MESSAGE_CONTENT');
    await cluster.kill(a);
    await cut;
    const acknowledged: string[] = [];
    for (const message of ['m1', 'm2', 'm3', 'm4', 'm5']) {
      const sent = await post(b, `/threads/${threadId}/send-message`, { message });
      expect(sent.status).toBe(202);
      acknowledged.push(sent.body.signalId as string);
    }
    const stored = await answeredOnce(cluster, b, threadId, acknowledged[4], 'Echo: m5', ORPHAN_AFTER_MS + 30_000);
    // Stored in the order acknowledged: the cut run's input first, answered (recovery goes on from it) before m1.
    const inputIds = [run.input.messages[0].id, ...acknowledged];
    expect(stored.filter((m) => inputIds.includes(m.id)).map((m) => m.id)).toEqual(inputIds);
    const at = (id: string) => stored.findIndex((m) => m.id === id);
    expect(stored.slice(at(inputIds[0]) + 1, at(acknowledged[0])).some((m) => m.role === 'assistant')).toBe(true);
    // Nothing answered twice (messages a run took together are answered together).
    for (const message of ['m1', 'm2', 'm3', 'm4']) expect(answersWith(stored, `Echo: ${message}`).length).toBeLessThanOrEqual(1);
    await onB.close();
  });

  it('a thread nobody follows: a /run on B takes it at once from the run A held when it died', async () => {
    const a = await cluster.start({ DEMO_DELAY_MS: '200' });
    const b = await cluster.start();
    const threadId = uid('failover-unfollowed');
    const run = await startRun(a, threadId, words('long', 30));
    const cut = run.rest.catch(() => []);
    await cluster.kill(a);
    await cut;
    // Answering: the run streams its first text on B (it took the thread).
    const { value: next, tookMs } = await within(FAILOVER_MS, 'the /run on B', startRun(b, threadId, 'after the crash'));
    console.log(`failover: a /run on B had the thread A held ${tookMs} ms after kill -9 (default lease TTL)`);
    const events = await next.rest;
    expect(events.at(-1)?.type).toBe('RUN_FINISHED');
    expect(text(events)).toBe('Echo: after the crash');
  });
});

describe('what A held when it died is answered by a survivor', { timeout: 120_000 }, () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await createCluster('orphans', BASE_ENV);
  });
  afterAll(() => cluster?.close());

  /**
   * A slow run on A (a new process), with B (another) beside it, and with `followed` a follower of
   * the thread on B from before the run: what each test then sends to B while A runs.
   */
  async function slowRunOnA(label: string, followed = false) {
    const a = await cluster.start({ DEMO_DELAY_MS: '200' });
    const b = await cluster.start();
    const threadId = uid(label);
    const onB = followed ? await follow(b, threadId) : undefined;
    const run = await startRun(a, threadId, words('long', 30));
    return { a, b, threadId, onB, run, cut: run.rest.catch(() => []) };
  }

  it('a message queued on B behind A’s run is sent again by a survivor once A died, and answered once', async () => {
    const { a, b, threadId, run, cut } = await slowRunOnA('queued');
    const queued = await post(b, `/threads/${threadId}/queue-message`, { message: 'queued on B' });
    expect(queued.status).toBe(202);
    expect(queued.body.action).toBe('deliver');
    expect((await inboxOf(cluster, threadId)).map((e) => e.kind)).toEqual(['run', 'queue']);
    await cluster.kill(a);
    await cut;
    const c = await cluster.start();
    const stored = await answeredOnce(cluster, c, threadId, queued.body.signalId, 'Echo: queued on B', ORPHAN_AFTER_MS + 30_000);
    expect(stored.filter((m) => m.id === run.input.messages[0].id)).toHaveLength(1);
    void b;
  });

  it('a message sent on B into A’s run, cut before the run stored it, is sent again and answered once', async () => {
    const { a, b, threadId, run, cut } = await slowRunOnA('delivered');
    const sent = await post(b, `/threads/${threadId}/send-message`, { message: 'delivered from B' });
    expect(sent.body).toMatchObject({ action: 'deliver', runId: run.events[0].runId });
    await cluster.kill(a);
    await cut;
    expect((await history(b, threadId)).some((m) => m.id === sent.body.signalId)).toBe(false);
    await answeredOnce(cluster, b, threadId, sent.body.signalId, 'Echo: delivered from B', ORPHAN_AFTER_MS + 30_000);
  });

  it('a message sent into A’s run before A died is answered before one sent after it, long before the orphan sweep', async () => {
    const { a, b, threadId, onB, run, cut } = await slowRunOnA('order', true);
    const first = await post(b, `/threads/${threadId}/send-message`, { message: 'first into the run' });
    expect(first.body).toMatchObject({ action: 'deliver', runId: run.events[0].runId });
    await cluster.kill(a);
    await cut;
    // The cut run's end reaches B once its lease lapsed: the thread is idle from then on.
    await wholeRun(onB!, run.events[0].runId as string);
    const sentAt = Date.now();
    const second = await post(b, `/threads/${threadId}/send-message`, { message: 'second after the crash' });
    expect(second.status).toBe(202);
    const stored = await answeredOnce(cluster, b, threadId, second.body.signalId, 'Echo: second after the crash', ORPHAN_AFTER_MS + 30_000);
    const answerAt = (needle: string) => stored.findIndex((m) => m.role === 'assistant' && contentOf(m).includes(needle));
    expect(answerAt('Echo: first into the run')).toBeGreaterThanOrEqual(0);
    expect(answerAt('Echo: first into the run')).toBeLessThan(answerAt('Echo: second after the crash'));
    expect(answersWith(stored, 'Echo: first into the run')).toHaveLength(1);
    console.log(`order: the message sent before the crash was answered first; the one after it ${Date.now() - sentAt} ms after it was sent`);
    await onB!.close();
  });
});

/**
 * A run stopped on an approval in A, resumed by a `/run` on B: A resumes it where it stopped and
 * relays its output to B. When A is gone, B resumes it itself; when A dies while B reads it, B's
 * `/run` ends as an outage, and B answers the thread after.
 */
describe('a run stopped on an approval in A, resumed by a /run on B', { timeout: 120_000 }, () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await createCluster('resume-relay', BASE_ENV);
  });
  afterAll(() => cluster?.close());

  /** A thread whose run on `a` stopped on the approval of `delete notes.txt`; the resume's input. */
  async function pendingOn(a: ServerProcess) {
    const threadId = uid('resume-relay');
    const events = await (await startRun(a, threadId, 'delete notes.txt')).rest;
    const [interrupt] = events.at(-1)!.outcome.interrupts as Array<{ id: string }>;
    return { threadId, resume: { messages: [], resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] } };
  }

  it('A gone: B resumes it itself', async () => {
    const a = await cluster.start();
    const b = await cluster.start();
    const { threadId, resume } = await pendingOn(a);
    await cluster.kill(a);
    const events = await (await startRun(b, threadId, '', resume)).rest;
    expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED' });
    expect(text(events)).toContain('Deleted as requested');
    expect(answersWith(await history(b, threadId), 'Deleted as requested')).toHaveLength(1);
  });

  it('a /run on B interrupting it cuts it where it runs: the resumed /run ends cancelled, then the new run answers', async () => {
    const a = await cluster.start({ DEMO_DELAY_MS: '300' });
    const b = await cluster.start();
    const { threadId, resume } = await pendingOn(a);
    const resumed = await startRun(b, threadId, '', resume);
    const next = await (await startRun(b, threadId, 'instead', { forwardedProps: { resourceId: RESOURCE, multitask: 'interrupt' } })).rest;
    const before = await resumed.rest;
    expect(before.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
    await expectValidStream(before);
    expect(text(next)).toBe('Echo: instead');
    const rows = (await history(b, threadId)).map((m) => `${m.role}: ${contentOf(m)}`);
    expect(rows.slice(-2)).toEqual(['user: instead', 'assistant: Echo: instead']);
  });

  it('A dies while B reads the run: B’s /run ends RUN_ERROR UNAVAILABLE, and B answers the thread after', async () => {
    const a = await cluster.start({ DEMO_DELAY_MS: '300' });
    const b = await cluster.start();
    const { threadId, resume } = await pendingOn(a);
    const resumed = await startRun(b, threadId, '', resume);
    await cluster.kill(a);
    const { value: events } = await within(30_000, 'the end of the /run on B', resumed.rest);
    expect(events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'UNAVAILABLE' });
    await expectValidStream(events);
    const sent = await post(b, `/threads/${threadId}/send-message`, { message: 'after the crash' });
    expect(sent.status).toBe(202);
    await answeredOnce(cluster, b, threadId, sent.body.signalId, 'Echo: after the crash', ORPHAN_AFTER_MS + 30_000);
  });
});

describe('a process restarting in a cluster', { timeout: 120_000 }, () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await createCluster('restart', BASE_ENV);
  });
  afterAll(() => cluster?.close());

  it('does not send again what another process is still handling: a queued message is answered once', async () => {
    // About 40 parts of 400 ms: the run outlasts the orphan age, so B's start-up recovery meets entries old enough.
    const a = await cluster.start({ DEMO_DELAY_MS: '400' });
    const b = await cluster.start();
    const threadId = uid('restart');
    const onA = await follow(a, threadId);
    const run = await startRun(a, threadId, words('long', 34));
    const runId = run.events[0].runId as string;
    const queued = await post(b, `/threads/${threadId}/queue-message`, { message: 'queued before the restart' });
    expect(queued.body.action).toBe('deliver');
    const acceptedAt = Date.now();
    // Old enough to count as orphans if the thread were free.
    await expect.poll(() => Date.now() - acceptedAt > ORPHAN_AFTER_MS + 500, { timeout: ORPHAN_AFTER_MS + 5000, interval: 250 }).toBe(true);
    expect(bracketsOf(onA, runId).some((r) => isTerminal(r.at(-1) as AnyEvent))).toBe(false);
    await cluster.kill(b);
    const b2 = await cluster.start();
    expect((await run.rest).at(-1)?.type).toBe('RUN_FINISHED');
    await answeredOnce(cluster, b2, threadId, queued.body.signalId, 'Echo: queued before the restart', 30_000);
    expect(b2.output().stdout).not.toMatch(/recovered \d+/);
    await onA.close();
  });
});

describe('Last-Event-ID after the process writing the thread’s log dies', { timeout: 120_000 }, () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await createCluster('writer', BASE_ENV);
  });
  afterAll(() => cluster?.close());

  it('B writes the next run: it gets ids above the old ones, and a reconnect to B gets what it missed', async () => {
    const a = await cluster.start();
    const b = await cluster.start();
    const threadId = uid('writer');
    const onA = await follow(a, threadId); // A runs the first run: it writes it into the thread's log
    const onB = await follow(b, threadId);
    const first = await post(a, `/threads/${threadId}/send-message`, { message: 'before the kill' });
    await wholeRun(onA, first.body.runId);
    await wholeRun(onB, first.body.runId);
    expect(onB.events.map((e) => e.id)).toEqual(onA.events.map((e) => e.id));
    const lastBefore = onB.events.at(-1)!.id;
    const cutAt = onA.events[2].id;

    await cluster.kill(a);
    const killedAt = Date.now();
    const sent = await post(b, `/threads/${threadId}/send-message`, { message: 'after the kill' });
    expect(sent.body.action).toBe('wake');
    const next = await within(5000 + 1500, 'the new run on B', wholeRun(onB, sent.body.runId));
    console.log(`after the writer's death: B's follower had the whole new run ${Date.now() - killedAt} ms after kill -9`);
    const newIds = onB.events.filter((e) => e.id > lastBefore);
    expect(newIds.map((e) => e.event)).toEqual(next.value);
    expect(newIds[0].id).toBe(lastBefore + 1);

    // Back on B, which followed the thread all along: from its ring, exactly what was missed.
    const missed = onB.events.filter((e) => e.id > cutAt).map((e) => e.id);
    const back = await follow(b, threadId, { 'Last-Event-ID': String(cutAt) });
    await back.waitForCount('RUN_FINISHED', 2);
    expect(back.events.map((e) => e.id)).toEqual(missed);
    expect(back.events.some((e) => e.event.type === 'MESSAGES_SNAPSHOT')).toBe(false);
    // On C, which never followed it: from the thread's Redis stream, the same, no snapshot.
    const c = await cluster.start();
    const elsewhere = await follow(c, threadId, { 'Last-Event-ID': String(cutAt) });
    await elsewhere.waitForCount('RUN_FINISHED', 2);
    expect(elsewhere.events.map((e) => e.id)).toEqual(missed);
    expect(elsewhere.events.map((e) => e.event)).toEqual(onB.events.filter((e) => e.id > cutAt).map((e) => e.event));
    await Promise.all([back.close(), elsewhere.close(), onB.close()]);
  });
});
