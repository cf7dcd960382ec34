import { randomUUID } from 'node:crypto';
import { EventType, type Event } from '@ag-ui/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { NumberedEvent } from '../feed/event-log.js';
import { RedisEventLogs } from './redis-event-log.js';
import { LocalThreadRuns, THREAD_TOPIC } from './thread-runs.js';
import { startFaultProxy, type FaultProxy } from '../../test/support/fault-proxy.js';
import { quietLogger, testRedis } from '../../test/support/redis.js';
import { REDIS_URL } from '../../test/support/services.js';
import { connectRedis } from './connection.js';

/** How long a change may take to cross Redis while the whole suite loads the machine (vitest's default is 1 s). */
const SETTLES = { timeout: 5_000 };

// Two `RedisEventLogs` on connections of their own stand for two bridge processes on one Redis.

const redis = testRedis('event-log');
const config = { replayBufferSize: 100, logger: quietLogger };
const options = { retainedEvents: 1000, idleTtlMs: 60_000, followTtlMs: 600 };

let a: RedisEventLogs;
let b: RedisEventLogs;
const runsOfA = new LocalThreadRuns();
const runsOfB = new LocalThreadRuns();
beforeAll(async () => {
  a = new RedisEventLogs(await redis.connect(), config, runsOfA, options);
  b = new RedisEventLogs(await redis.connect(), config, runsOfB, options);
});
afterAll(() => redis.cleanup());

/** A log with every numbered event it handed out. */
async function follow(logs: RedisEventLogs, key: string) {
  const log = await logs.open(key);
  const seen: NumberedEvent[] = [];
  /** How many events had been handed out before each gap the log reported. */
  const gaps: number[] = [];
  log.onEvents((events, firstId, afterGap) => {
    if (afterGap) gaps.push(seen.length);
    events.forEach((event, i) => seen.push({ id: firstId + i, event }));
  });
  return { log, seen, gaps };
}

const run = (runId: string, text: string): Event[] => [
  { type: EventType.RUN_STARTED, threadId: 't', runId },
  { type: EventType.TEXT_MESSAGE_START, messageId: `${runId}-m`, role: 'assistant' },
  { type: EventType.TEXT_MESSAGE_CONTENT, messageId: `${runId}-m`, delta: text },
  { type: EventType.TEXT_MESSAGE_END, messageId: `${runId}-m` },
  { type: EventType.RUN_FINISHED, threadId: 't', runId },
];

/** Mastra's publish of a run registered (or closed) on a thread, as `LocalThreadRuns` hears it in its process. */
async function published(runs: LocalThreadRuns, key: string, type: 'run-registered' | 'run-completed', runId: string): Promise<void> {
  const threadKey = key.slice(key.indexOf('\0') + 1);
  await runs.published(`${THREAD_TOPIC}${encodeURIComponent(threadKey)}`, { type, runId, data: { type, runId } });
}

describe('RedisEventLogs: one log per thread shared by processes', () => {
  it('numbers once for every process: each appends its runs, all get the same ids, contiguous, above the clock base', async () => {
    const key = `thread-${randomUUID()}`;
    const first = await follow(a, key);
    const second = await follow(b, key);
    const before = Date.now() * 1000;
    first.log.append(run('r1', 'hello'));
    await vi.waitFor(() => expect(second.seen).toHaveLength(5), SETTLES);
    second.log.append(run('r2', 'again'));
    await vi.waitFor(() => expect(first.seen).toHaveLength(10), SETTLES);
    await vi.waitFor(() => expect(second.seen).toHaveLength(10), SETTLES);
    expect(first.seen).toEqual(second.seen);
    expect(first.seen.map((e) => e.event)).toEqual([...run('r1', 'hello'), ...run('r2', 'again')]);
    const ids = first.seen.map((e) => e.id);
    expect(ids).toEqual(ids.map((_, i) => ids[0] + i));
    expect(ids[0]).toBeGreaterThan(before - 60_000_000);
    expect(Number.isSafeInteger(ids[9])).toBe(true);
    first.log.close();
    second.log.close();
  });

  it('replays from the stream what a fresh log never saw, exactly after a given id', async () => {
    const key = `thread-${randomUUID()}`;
    const writer = await follow(a, key);
    writer.log.append(run('r1', 'one'));
    writer.log.append(run('r2', 'two'));
    await vi.waitFor(() => expect(writer.seen).toHaveLength(10), SETTLES);
    const late = await follow(b, key);
    expect(late.log.baseId).toBe(writer.seen[9].id);
    expect(late.log.since(writer.seen[3].id)).toBeUndefined();
    const fetched = await late.log.fetch!(writer.seen[3].id);
    expect(fetched).toEqual(writer.seen.slice(4));
    expect(await late.log.fetch!(late.log.lastId)).toEqual([]);
    writer.log.close();
    late.log.close();
  });

  it('a log opened inside a run starts at that run’s RUN_STARTED, handed to its listener at once', async () => {
    const key = `thread-${randomUUID()}`;
    const writer = await follow(a, key);
    writer.log.append(run('r1', 'done'));
    writer.log.append(run('r2', 'open').slice(0, 3));
    await vi.waitFor(() => expect(writer.seen).toHaveLength(8), SETTLES);
    const joiner = await follow(b, key);
    expect(joiner.seen.map((e) => e.event.type)).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT]);
    expect(joiner.seen[0].id).toBe(writer.seen[5].id);
    writer.log.close();
    joiner.log.close();
  });

  it('a lost run is settled once: the first process’s closing events are written, the others’ and the lost process’s late events are not', async () => {
    const key = `thread-${randomUUID()}`;
    const writer = await follow(a, key);
    const first = await follow(b, key);
    const second = await follow(b, key);
    writer.log.append(run('r1', 'cut').slice(0, 3));
    await vi.waitFor(() => expect(second.seen).toHaveLength(3), SETTLES);
    const closing: Event[] = [
      { type: EventType.TEXT_MESSAGE_END, messageId: 'r1-m' },
      { type: EventType.RUN_ERROR, message: 'lost', code: 'UNAVAILABLE' },
    ];
    first.log.settle!('mastra-r1', closing);
    second.log.settle!('mastra-r1', closing);
    await vi.waitFor(() => expect(writer.seen).toHaveLength(5), SETTLES);
    // The process thought lost comes back and goes on with the run: too late, the run is closed.
    writer.log.append(run('r1', 'cut').slice(3));
    writer.log.append(run('r2', 'next'));
    await vi.waitFor(() => expect(writer.seen).toHaveLength(10), SETTLES);
    expect(writer.seen.map((e) => e.event)).toEqual([...run('r1', 'cut').slice(0, 3), ...closing, ...run('r2', 'next')]);
    expect(first.seen).toEqual(writer.seen);
    for (const log of [writer, first, second]) log.log.close();
  });

  it('a run whose log Redis lost (restarted empty) is opened again by its next append: the log stays whole brackets, a fresh reader gets the rest of the run', async () => {
    const key = `thread-${randomUUID()}`;
    const writer = await follow(a, key);
    writer.log.append(run('r1', 'lost').slice(0, 3));
    await vi.waitFor(() => expect(writer.seen).toHaveLength(3), SETTLES);
    const connection = await redis.connect();
    const id = `${redis.prefix}:log:${encodeURIComponent(key)}`;
    await connection.client.del([`${id}:events`, `${id}:meta`]);
    writer.log.append(run('r1', 'lost').slice(3));
    await vi.waitFor(() => expect(writer.seen).toHaveLength(6), SETTLES);
    const reopened = writer.seen.slice(3);
    expect(reopened.map((e) => e.event)).toEqual([{ type: EventType.RUN_STARTED, threadId: key, runId: 'r1' }, ...run('r1', 'lost').slice(3)]);
    // Ids still only grow, and the log read from its start holds one whole bracket.
    expect(reopened[0].id).toBeGreaterThan(writer.seen[2].id);
    const fresh = await follow(b, key);
    expect(await fresh.log.fetch!(fresh.log.baseId)).toEqual([]);
    const stored = (await connection.client.xRange(`${id}:events`, '-', '+')) ?? [];
    expect(stored.map((e) => (JSON.parse(e.message.e) as Event).type)).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_END, EventType.RUN_FINISHED]);
    // The next run goes on as usual.
    writer.log.append(run('r2', 'next'));
    await vi.waitFor(() => expect(writer.seen).toHaveLength(11), SETTLES);
    for (const log of [writer, fresh]) log.log.close();
    await connection.close();
  });

  /** A writer log on `a`, and a follower's log in a process of its own whose Redis is reached through a fault proxy. */
  async function withCutFollower(
    test: (logs: { writer: Awaited<ReturnType<typeof follow>>; cut: Awaited<ReturnType<typeof follow>>; proxy: FaultProxy; key: string }) => Promise<void>,
  ) {
    const proxy = await startFaultProxy(REDIS_URL);
    const connection = await connectRedis(proxy.urlFor(REDIS_URL), redis.prefix, quietLogger);
    try {
      const key = `thread-${randomUUID()}`;
      const writer = await follow(a, key);
      const cut = await follow(new RedisEventLogs(connection, config, new LocalThreadRuns(), options), key);
      writer.log.append(run('r1', 'cut').slice(0, 3));
      await vi.waitFor(() => expect(cut.seen).toHaveLength(3), SETTLES);
      await test({ writer, cut, proxy, key });
      writer.log.close();
      cut.log.close();
    } finally {
      await connection.close();
      await proxy.close();
    }
  }

  it('a settlement made while Redis is away is written once it is back', () =>
    withCutFollower(async ({ writer, cut, proxy }) => {
      proxy.mode('refuse');
      cut.log.settle!('mastra-r1', [{ type: EventType.RUN_ERROR, message: 'lost', code: 'UNAVAILABLE' }]);
      proxy.mode('forward');
      await vi.waitFor(
        () =>
          expect(writer.seen.map((e) => e.event.type)).toEqual([
            ...run('r1', 'cut')
              .slice(0, 3)
              .map((e) => e.type),
            EventType.RUN_ERROR,
          ]),
        { timeout: 10_000, interval: 100 },
      );
    }));

  it('what was appended while a log’s subscription was down reaches it once it is back, though nothing follows', () =>
    withCutFollower(async ({ writer, cut, proxy }) => {
      proxy.mode('refuse');
      // The rest of the run, then nothing: the last batch is published while `cut` is not subscribed.
      writer.log.append(run('r1', 'cut').slice(3));
      await vi.waitFor(() => expect(writer.seen).toHaveLength(5), SETTLES);
      proxy.mode('forward');
      await vi.waitFor(() => expect(cut.seen).toEqual(writer.seen), { timeout: 10_000, interval: 100 });
    }));

  it('Redis restarted empty while a log’s subscription was down: once back, it gets what the new log holds, marked as after a gap', () =>
    withCutFollower(async ({ writer, cut, proxy, key }) => {
      proxy.mode('refuse');
      const connection = await redis.connect();
      const id = `${redis.prefix}:log:${encodeURIComponent(key)}`;
      await connection.client.del([`${id}:events`, `${id}:meta`]);
      await connection.close();
      // The run's process writes the rest: the log opens it again; `cut` hears none of it live.
      writer.log.append(run('r1', 'cut').slice(3));
      await vi.waitFor(() => expect(writer.seen).toHaveLength(6), SETTLES);
      proxy.mode('forward');
      await vi.waitFor(() => expect(cut.seen.slice(3)).toEqual(writer.seen.slice(3)), { timeout: 10_000, interval: 100 });
      expect(cut.seen[3].event).toMatchObject({ type: EventType.RUN_STARTED, runId: 'r1' });
      expect(cut.gaps).toEqual([3]);
      // The run's own process lost what it appended while Redis was away: its followers missed it too.
      expect(writer.gaps).toEqual([3]);
    }));

  it('a run of one process on a thread another follows: the process is told to write it, and when a follower comes mid-run', async () => {
    const key = `agent\0alice\0thread-${randomUUID()}`;
    const needA: string[] = [];
    a.onWriterNeeded(async (k) => void needA.push(k));
    const needB: string[] = [];
    b.onWriterNeeded(async (k) => void needB.push(k));
    // Nobody follows: a run registered in A needs no writer.
    await published(runsOfA, key, 'run-registered', 'r0');
    await published(runsOfA, key, 'run-completed', 'r0');
    const follower = await follow(b, key);
    follower.log.setFollowed!(true);
    // A follower comes while no run of A streams: nothing to write yet.
    await vi.waitFor(async () => expect(await a.followedElsewhere(key)).toBe(true), SETTLES);
    expect(await b.followedElsewhere(key)).toBe(false); // its own mark does not count
    await published(runsOfA, key, 'run-registered', 'r1');
    // While the run lasts, who follows is read again every second: `need` may be asked again (the hub keeps one feed).
    const asked = (need: string[]) => [...new Set(need)];
    await vi.waitFor(() => expect(asked(needA)).toEqual([key]), SETTLES);
    // A second thread: the run comes first, the follower during it.
    const other = `agent\0alice\0thread-${randomUUID()}`;
    await published(runsOfA, other, 'run-registered', 'r2');
    const late = await follow(b, other);
    late.log.setFollowed!(true);
    await vi.waitFor(() => expect(asked(needA)).toEqual([key, other]), SETTLES);
    expect(needB).toEqual([]);
    // Unfollowed (the feed kept for others only, or closed): it no longer counts.
    follower.log.setFollowed!(false);
    await vi.waitFor(async () => expect(await a.followedElsewhere(key)).toBe(false), SETTLES);
    late.log.close();
    // Closing lets the mark go on its own time (a write to Redis): waited for, as the unfollow above.
    await vi.waitFor(async () => expect(await a.followedElsewhere(other)).toBe(false), SETTLES);
    follower.log.close();
  });

  it('a follower that comes while the running process’s subscriber is away: that process writes the run once it is back (the announcement was lost)', async () => {
    const proxy = await startFaultProxy(REDIS_URL);
    const connection = await connectRedis(proxy.urlFor(REDIS_URL), redis.prefix, quietLogger);
    try {
      const runsOfCut = new LocalThreadRuns();
      const cut = new RedisEventLogs(connection, config, runsOfCut, options);
      const needed: string[] = [];
      cut.onWriterNeeded(async (k) => void needed.push(k));
      const key = `agent\0alice\0thread-${randomUUID()}`;
      // A run streams in the cut process; nobody follows yet.
      await published(runsOfCut, key, 'run-registered', 'r1');
      proxy.mode('refuse');
      // A follower comes elsewhere while the cut process hears nothing: its announcement is lost.
      const follower = await follow(b, key);
      follower.log.setFollowed!(true);
      await vi.waitFor(async () => expect(await a.followedElsewhere(key)).toBe(true), SETTLES);
      expect(needed).toEqual([]);
      proxy.mode('forward');
      await vi.waitFor(() => expect(needed).toContain(key), { timeout: 10_000, interval: 50 });
      follower.log.close();
    } finally {
      await connection.close();
      await proxy.close();
    }
  });

  it('a follower’s process that dies stops counting within the mark’s TTL', async () => {
    const key = `agent\0alice\0thread-${randomUUID()}`;
    const connection = await redis.connect();
    const follower = await follow(new RedisEventLogs(connection, config, new LocalThreadRuns(), options), key);
    follower.log.setFollowed!(true);
    await vi.waitFor(async () => expect(await a.followedElsewhere(key)).toBe(true), SETTLES);
    // As if its process died: its connection gone, no renewal, no unmark.
    await connection.close();
    await vi.waitFor(async () => expect(await a.followedElsewhere(key)).toBe(false), { timeout: 3000, interval: 50 });
    follower.log.close();
  });
});

describe('RedisEventLogs: what a failing append logs', () => {
  /** A log written through a fault proxy (one process whose Redis goes away), with every line its logger gets. */
  async function withProxiedLog(
    test: (it: {
      log: Awaited<ReturnType<typeof follow>>;
      proxy: FaultProxy;
      connection: Awaited<ReturnType<typeof connectRedis>>;
      lines: { warn: string[]; error: string[] };
      key: string;
    }) => Promise<void>,
  ) {
    const proxy = await startFaultProxy(REDIS_URL);
    const lines = { warn: [] as string[], error: [] as string[] };
    const logger = { ...quietLogger, warn: (message: string) => void lines.warn.push(message), error: (message: string) => void lines.error.push(message) };
    const connection = await connectRedis(proxy.urlFor(REDIS_URL), redis.prefix, logger);
    try {
      const key = `thread-${randomUUID()}`;
      const log = await follow(new RedisEventLogs(connection, { replayBufferSize: 100, logger }, new LocalThreadRuns(), options), key);
      await test({ log, proxy, connection, lines, key });
      log.log.close();
    } finally {
      // Dropped rather than closed: a failed test may leave Redis away, and a close would wait for it.
      for (const client of [connection.client, connection.subscriber]) if (client.isOpen) client.destroy();
      await proxy.close();
    }
  }

  const chunk = (i: number): Event => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'r1-m', delta: `chunk ${i} ` });

  /** Appends `n` chunks: every one fails at once (the client is offline, nothing queued); answers once all failures were handled. */
  async function appendAll(log: { append(events: Event[]): void }, n: number): Promise<void> {
    for (let i = 0; i < n; i++) log.append([chunk(i)]);
    // The failures are rejections already settled: their handlers have all run before the next turn of the loop.
    await new Promise((resolve) => setImmediate(resolve));
  }

  it('Redis away: 200 failed appends log one warning and no error; healed (an append went through) and away again, one more warning', () =>
    withProxiedLog(async ({ log, proxy, connection, lines }) => {
      log.log.append(run('r1', 'x').slice(0, 2));
      await vi.waitFor(() => expect(log.seen).toHaveLength(2), SETTLES);
      const outage = async () => {
        const offline = Promise.all([connection.client, connection.subscriber].map((c) => new Promise((resolve) => c.once('reconnecting', resolve))));
        proxy.mode('refuse');
        await offline;
        await appendAll(log.log, 200);
      };
      // The log's lines, and its connections' (one each per outage, not one per reconnect attempt).
      const appends = () => lines.warn.filter((line) => line.startsWith('Thread log'));
      const connections = () => lines.warn.filter((line) => /^Redis (commands|subscriber) connection: .*not logged again until it is back/.test(line));
      const heal = async (seen: number) => {
        const ready = Promise.all([connection.client, connection.subscriber].map((c) => new Promise((resolve) => c.once('ready', resolve))));
        proxy.mode('forward');
        await ready;
        log.log.append([chunk(-1)]);
        await vi.waitFor(() => expect(log.seen).toHaveLength(seen), SETTLES);
      };

      await outage();
      expect(appends()).toEqual([expect.stringMatching(/^Thread log .*: Redis is unavailable, events are not appended .*The client is offline/)]);
      expect(connections()).toHaveLength(2);
      expect(lines).toMatchObject({ warn: { length: 3 }, error: [] });
      await outage(); // still the same outage for this log: no append went through since
      expect(appends()).toHaveLength(1);
      await heal(3);
      expect(appends()).toHaveLength(1);
      await outage();
      expect([appends().length, connections().length, lines.warn.length, lines.error.length]).toEqual([2, 4, 6, 0]);
      await heal(4);
      expect(lines).toMatchObject({ warn: { length: 6 }, error: [] });
    }));

  it('a failure that is not an outage (a defect) logs at error, every time', () =>
    withProxiedLog(async ({ log, connection, lines, key }) => {
      // The log's meta key turned into a string: every append's script fails with WRONGTYPE.
      await connection.client.set(`${redis.prefix}:log:${encodeURIComponent(key)}:meta`, 'not a hash');
      for (let i = 0; i < 3; i++) log.log.append([chunk(i)]);
      await vi.waitFor(() => expect(lines.error).toHaveLength(3), SETTLES);
      expect(lines.error[0]).toMatch(/^Thread log .*: append failed: WRONGTYPE/);
      expect(lines.warn).toEqual([]);
    }));
});
