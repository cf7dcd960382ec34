import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uid } from './support/agui.js';
import { createCluster, follow, history, post, startRun, text, type Cluster } from './support/cluster.js';
import {
  answeredOnce,
  answersWith,
  BASE_ENV,
  bracketsOf,
  contentOf,
  DEMO_ENV,
  FAILOVER_MS,
  inboxOf,
  ORPHAN_AFTER_MS,
  wholeRun,
  within,
  words,
} from './support/failover.js';
import type { ServerProcess } from './support/process.js';
import { http } from './support/server.js';

/**
 * Several real bridge processes on one Redis and one PostgreSQL schema, where one of them dies
 * (`kill -9`): what it ran and held is answered by a survivor (test/scale-out-takeover.test.ts: a
 * stopped run resumed elsewhere, a restart, the thread's event log). A dead process's runs are
 * found by its heartbeat, within seconds; where a test waits on Mastra's thread lease itself, it is
 * 3 s (`LEASE_TTL_MS`).
 */
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
