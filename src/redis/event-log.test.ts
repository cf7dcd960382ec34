import { randomUUID } from 'node:crypto';
import { EventType, type Event } from '@ag-ui/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { NumberedEvent } from '../feed/event-log.js';
import { RedisEventLogs } from './event-log.js';
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
  log.onEvents((events, firstId) => events.forEach((event, i) => seen.push({ id: firstId + i, event })));
  return { log, seen };
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

  /** A writer log on `a`, and a follower's log in a process of its own whose Redis is reached through a fault proxy. */
  async function withCutFollower(test: (logs: { writer: Awaited<ReturnType<typeof follow>>; cut: Awaited<ReturnType<typeof follow>>; proxy: FaultProxy }) => Promise<void>) {
    const proxy = await startFaultProxy(REDIS_URL);
    const connection = await connectRedis(proxy.urlFor(REDIS_URL), redis.prefix, quietLogger);
    try {
      const key = `thread-${randomUUID()}`;
      const writer = await follow(a, key);
      const cut = await follow(new RedisEventLogs(connection, config, new LocalThreadRuns(), options), key);
      writer.log.append(run('r1', 'cut').slice(0, 3));
      await vi.waitFor(() => expect(cut.seen).toHaveLength(3), SETTLES);
      await test({ writer, cut, proxy });
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
      await vi.waitFor(() => expect(writer.seen.map((e) => e.event.type)).toEqual([...run('r1', 'cut').slice(0, 3).map((e) => e.type), EventType.RUN_ERROR]), { timeout: 10_000, interval: 100 });
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
    await vi.waitFor(async () => expect(await a.followedElsewhere!(key)).toBe(true), SETTLES);
    expect(await b.followedElsewhere!(key)).toBe(false); // its own mark does not count
    await published(runsOfA, key, 'run-registered', 'r1');
    await vi.waitFor(() => expect(needA).toEqual([key]), SETTLES);
    // A second thread: the run comes first, the follower during it.
    const other = `agent\0alice\0thread-${randomUUID()}`;
    await published(runsOfA, other, 'run-registered', 'r2');
    const late = await follow(b, other);
    late.log.setFollowed!(true);
    await vi.waitFor(() => expect(needA).toEqual([key, other]), SETTLES);
    expect(needB).toEqual([]);
    // Unfollowed (the feed kept for others only, or closed): it no longer counts.
    follower.log.setFollowed!(false);
    await vi.waitFor(async () => expect(await a.followedElsewhere!(key)).toBe(false), SETTLES);
    late.log.close();
    expect(await a.followedElsewhere!(other)).toBe(false);
    follower.log.close();
  });

  it('a follower’s process that dies stops counting within the mark’s TTL', async () => {
    const key = `agent\0alice\0thread-${randomUUID()}`;
    const connection = await redis.connect();
    const follower = await follow(new RedisEventLogs(connection, config, new LocalThreadRuns(), options), key);
    follower.log.setFollowed!(true);
    await vi.waitFor(async () => expect(await a.followedElsewhere!(key)).toBe(true), SETTLES);
    // As if its process died: its connection gone, no renewal, no unmark.
    await connection.close();
    await vi.waitFor(async () => expect(await a.followedElsewhere!(key)).toBe(false), { timeout: 3000, interval: 50 });
    follower.log.close();
  });
});
