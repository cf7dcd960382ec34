import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uid } from './support/agui.js';
import { createCluster, follow, history, post, RESOURCE, startRun, text, type Cluster } from './support/cluster.js';
import { answeredOnce, answersWith, BASE_ENV, bracketsOf, contentOf, ORPHAN_AFTER_MS, wholeRun, within, words } from './support/failover.js';
import type { ServerProcess } from './support/process.js';
import { isTerminal, type AnyEvent } from './support/sse.js';
import { expectValidStream } from './support/threads.js';

/**
 * Several real bridge processes on one Redis and one PostgreSQL schema, where one of them dies
 * (`kill -9`) or restarts while another takes over what it ran: a run stopped on an approval and
 * resumed elsewhere, a queued message, the thread's event log (test/scale-out-failover.test.ts:
 * what a survivor answers for the one that died).
 */
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
