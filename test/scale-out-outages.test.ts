import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { uid } from './support/agui.js';
import { createCluster, follow, history, startRun, text, type Cluster } from './support/cluster.js';
import { startFaultProxy, type FaultMode, type FaultProxy } from './support/fault-proxy.js';
import type { ServerProcess } from './support/process.js';
import { REDIS_URL } from './support/services.js';
import { brackets, isTerminal, verifyThreadEvents, type AnyEvent } from './support/sse.js';

/**
 * Two real processes on one PostgreSQL schema and one Redis reached through a fault proxy: Redis
 * goes away while A streams a `/run` that a follower on B watches. A's client gets the whole
 * answer and storage keeps it, so B's followers must be told the truth: the run finished (never a
 * `RUN_ERROR`), and what they missed reaches them as a snapshot holding the stored answer; a
 * reconnect with an id from before the outage gets the same.
 */
const LEASE_TTL_MS = 3000;

describe('Redis away while a run streams on A, followed on B', { timeout: 120_000 }, () => {
  let proxy: FaultProxy;
  let cluster: Cluster;
  let a: ServerProcess;
  let b: ServerProcess;

  beforeAll(async () => {
    proxy = await startFaultProxy(REDIS_URL);
    cluster = await createCluster('outage-follow', {
      MASTRA_AGENT_THREAD_LEASE_TTL_MS: String(LEASE_TTL_MS),
      REDIS_URL: proxy.urlFor(REDIS_URL),
      DEMO_DELAY_MS: '0',
    });
    a = await cluster.start({ DEMO_DELAY_MS: '60' });
    b = await cluster.start();
  }, 60_000);
  afterAll(async () => {
    proxy?.mode('forward');
    await cluster?.close();
    await proxy?.close();
  });

  it.each<FaultMode>(['refuse', 'hang'])(
    'Redis %s: the run finished, and followers get RUN_FINISHED and a snapshot with the stored answer, live and on a reconnect',
    async (mode) => {
      const threadId = uid('outage-follow');
      let step = 'following on B';
      const onB = await follow(b, threadId);
      // A hang here is a wait that never ends: say which, and what the two servers logged.
      onTestFailed(async () => {
        const tail = (s: ServerProcess) => ((o) => `${o.stdout}\n${o.stderr}`.split('\n').slice(-40).join('\n'))(s.output());
        console.log(
          `stuck at: ${step}\nB's events: ${onB.list.map((e) => e.type).join(' ')}\n--- A\n${tail(a)}\n--- B\n${tail(b)}\n--- Redis\n${await threadKeys(threadId)}`,
        );
      });
      const message = `cut ${Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ')}`;
      const run = await startRun(a, threadId, message);
      const runId = run.events[0].runId as string;
      await onB.waitForEvent((e) => e.type === 'TEXT_MESSAGE_CONTENT');
      const lastSeen = onB.events.at(-1)!.id;

      proxy.mode(mode);
      step = "A's /run answer";
      const answered = await run.rest;
      expect(answered.at(-1)?.type).toBe('RUN_FINISHED');
      const answer = text(answered);
      expect(answer).toBe(`Echo: ${message}`);
      // Stored while Redis was away (storage is PostgreSQL): the run is over.
      await expect.poll(async () => (await history(a, threadId)).some((m) => m.role === 'assistant' && m.content === answer), { timeout: 10_000 }).toBe(true);
      proxy.mode('forward');

      step = "B's snapshot after the outage";
      const snapshotOf = (events: AnyEvent[]) => events.find((e) => e.type === 'MESSAGES_SNAPSHOT');
      await onB.waitFor(() => snapshotOf(onB.list) !== undefined, 'a snapshot after the outage');
      const cut = brackets(onB.list).find((r) => r[0].runId === runId)!;
      expect(cut.at(-1)?.type).toBe('RUN_FINISHED');
      expect(onB.list.filter((e) => e.type === 'RUN_ERROR')).toEqual([]);
      const snapshot = snapshotOf(onB.list)!;
      expect(snapshot.messages.at(-1)).toMatchObject({ role: 'assistant', content: answer });
      expect((await verifyThreadEvents(onB.list)).warnings).toEqual([]);

      // Back with the id it had before the outage: the same truth, from the replay.
      step = 'the replay on a reconnect';
      const again = await follow(b, threadId, { 'last-event-id': String(lastSeen) });
      await again.waitFor(() => snapshotOf(again.list) !== undefined, 'the snapshot, replayed');
      expect(again.list.some((e) => isTerminal(e) && e.type === 'RUN_ERROR')).toBe(false);
      expect(again.list.find((e) => isTerminal(e))?.type).toBe('RUN_FINISHED');
      await Promise.all([onB.close(), again.close()]);
    },
  );
});

/** What Redis holds for a thread (its log's meta, the run's lease, settlements), read past the proxy: for a failure's report. */
async function threadKeys(threadId: string): Promise<string> {
  const client = createClient({ url: REDIS_URL, socket: { reconnectStrategy: false } });
  try {
    await client.connect();
    const lines: string[] = [];
    for await (const keys of client.scanIterator({ MATCH: `*${threadId}*`, COUNT: 1000 })) {
      for (const key of keys) {
        const [type, ttl] = await Promise.all([client.type(key), client.pTTL(key)]);
        const value =
          type === 'hash'
            ? JSON.stringify(await client.hGetAll(key))
            : type === 'string'
              ? await client.get(key)
              : type === 'stream'
                ? `${await client.xLen(key)} entries`
                : '';
        lines.push(`${key} (${type}, pttl ${ttl}): ${value}`);
      }
    }
    return lines.join('\n');
  } catch (error) {
    return `could not read Redis: ${String(error)}`;
  } finally {
    if (client.isOpen) client.destroy();
  }
}
