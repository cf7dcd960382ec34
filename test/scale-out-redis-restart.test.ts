import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { uid } from './support/agui.js';
import { createCluster, follow, history, startRun, text, type Cluster } from './support/cluster.js';
import type { ServerProcess } from './support/process.js';
import { startOwnRedis, type OwnRedis } from './support/redis-server.js';
import { brackets, foldMessages, isTerminal, verifyThreadEvents, type AnyEvent } from './support/sse.js';

/**
 * Two real processes on a `redis-server` of the test's own, restarted empty while a run streams on
 * B and a follower watches it on A: the follower still gets the run's end (its bracket closed, the
 * stored answer in what it holds), the next run opens a new bracket only after that, and a
 * reconnect with an id from before the restart gets the truth too.
 */
describe('Redis restarted empty while a run streams on B, followed on A', { timeout: 120_000 }, () => {
  let redis: OwnRedis;
  let cluster: Cluster;
  let a: ServerProcess;
  let b: ServerProcess;

  beforeAll(async () => {
    redis = await startOwnRedis({ persist: false });
    cluster = await createCluster('redis-restart', { REDIS_URL: redis.url, MASTRA_AGENT_THREAD_LEASE_TTL_MS: '3000', DEMO_DELAY_MS: '0' });
    a = await cluster.start();
    b = await cluster.start({ DEMO_DELAY_MS: '40' });
  }, 60_000);
  afterAll(async () => {
    await cluster?.close();
    await redis?.cleanup();
  });

  it('the follower gets the run closed and the stored answer; the next run comes after; a reconnect from before the restart too', async () => {
    const threadId = uid('restart');
    const onA = await follow(a, threadId);
    let step = 'the run streaming';
    onTestFailed(() => {
      const tail = (s: ServerProcess) => ((o) => `${o.stdout}\n${o.stderr}`.split('\n').slice(-30).join('\n'))(s.output());
      console.log(`stuck at: ${step}\nA's events: ${onA.list.map((e) => e.type).join(' ')}\n--- A\n${tail(a)}\n--- B\n${tail(b)}`);
    });
    const message = `restart ${Array.from({ length: 50 }, (_, i) => `w${i}`).join(' ')}`;
    const run = await startRun(b, threadId, message);
    await onA.waitForEvent((e) => e.type === 'TEXT_MESSAGE_CONTENT');
    const lastSeen = onA.events.at(-1)!.id;

    step = 'Redis restarting';
    await redis.stop();
    await redis.start();

    step = "B's /run answer";
    const answered = await run.rest;
    expect(answered.at(-1)?.type).toBe('RUN_FINISHED');
    const answer = text(answered);
    expect(answer).toBe(`Echo: ${message}`);

    step = "A's follower: the run's end";
    const runId = run.events[0].runId as string;
    await onA.waitFor(() => onA.list.some((e) => isTerminal(e)), 'the run closed');
    // What the follower missed while Redis was away comes as a snapshot bracket after the run's end.
    await onA.waitFor(() => onA.list.some((e) => e.type === 'MESSAGES_SNAPSHOT') && isTerminal(onA.list.at(-1)!), 'the snapshot after the gap');
    expect(onA.list.filter((e) => e.type === 'RUN_ERROR')).toEqual([]);
    await expect.poll(async () => (await history(a, threadId)).some((m) => m.content === answer), { timeout: 10_000 }).toBe(true);
    expect(await foldMessages(onA.list)).toEqual(await history(a, threadId, 'agui'));

    step = 'the next run';
    const next = await startRun(b, threadId, 'and after the restart');
    await next.rest;
    await onA.waitFor(() => text(onA.list).includes('Echo: and after the restart') && isTerminal(onA.list.at(-1)!), 'the next run, closed');
    const runs = brackets(onA.list);
    expect(runs[0][0].runId).toBe(runId);
    expect((await verifyThreadEvents(onA.list)).warnings).toEqual([]);

    step = 'a reconnect with an id from before the restart';
    const again = await follow(a, threadId, { 'last-event-id': String(lastSeen) });
    await again.waitFor(() => again.list.length > 0 && isTerminal(again.list.at(-1)!), 'the replay, or a snapshot');
    // What that client holds: the replay after what it had up to the id, or (the log lost that
    // id) a snapshot bracket first, which a reconnecting client folds from scratch.
    const held: AnyEvent[] =
      again.list[0].type === 'RUN_STARTED' ? again.list : [...onA.events.filter((e) => e.id <= lastSeen).map((e) => e.event), ...again.list];
    expect((await verifyThreadEvents(held)).warnings).toEqual([]);
    expect(await foldMessages(held)).toEqual(await history(a, threadId, 'agui'));
    await Promise.all([onA.close(), again.close()]);
  });
});
