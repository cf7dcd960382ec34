import { randomUUID } from 'node:crypto';
import { EventType, type Event } from '@ag-ui/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { NumberedEvent, ThreadEventLog } from '../feed/event-log.js';
import { RedisEventLogs } from './event-log.js';
import { quietLogger, testRedis } from '../../test/support/redis.js';

// Two `RedisEventLogs` on connections of their own stand for two bridge processes on one Redis.

const redis = testRedis('event-log');
const config = { replayBufferSize: 100, logger: quietLogger };
const options = { retainedEvents: 1000, idleTtlMs: 60_000, writerLeaseMs: 600 };

let a: RedisEventLogs;
let b: RedisEventLogs;
beforeAll(async () => {
  a = new RedisEventLogs(await redis.connect(), config, options);
  b = new RedisEventLogs(await redis.connect(), config, options);
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

const writerOf = (...logs: ThreadEventLog[]) => logs.filter((log) => (log as unknown as { writer: boolean }).writer);

describe('RedisEventLogs: one log per thread shared by processes', () => {
  it('numbers once for every process: the writer appends, both get the same ids, contiguous, above the clock base', async () => {
    const key = `thread-${randomUUID()}`;
    const first = await follow(a, key);
    const second = await follow(b, key);
    expect(writerOf(first.log, second.log)).toEqual([first.log]);
    const before = Date.now() * 1000;
    first.log.append(run('r1', 'hello'));
    second.log.append(run('r1', 'hello')); // not the writer: dropped
    await vi.waitFor(() => expect(second.seen).toHaveLength(5));
    expect(first.seen).toEqual(second.seen);
    const ids = first.seen.map((e) => e.id);
    expect(ids).toEqual(ids.map((_, i) => ids[0] + i));
    expect(ids[0]).toBeGreaterThan(before - 60_000_000);
    expect(Number.isSafeInteger(ids[4])).toBe(true);
    first.log.close();
    second.log.close();
  });

  it('replays from the stream what a fresh log never saw, exactly after a given id', async () => {
    const key = `thread-${randomUUID()}`;
    const writer = await follow(a, key);
    writer.log.append(run('r1', 'one'));
    writer.log.append(run('r2', 'two'));
    await vi.waitFor(() => expect(writer.seen).toHaveLength(10));
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
    await vi.waitFor(() => expect(writer.seen).toHaveLength(8));
    const joiner = await follow(b, key);
    expect(joiner.seen.map((e) => e.event.type)).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT]);
    expect(joiner.seen[0].id).toBe(writer.seen[5].id);
    writer.log.close();
    joiner.log.close();
  });

  it('another process takes over writing when the writer stops renewing its lease', async () => {
    const key = `thread-${randomUUID()}`;
    const first = await follow(a, key);
    const second = await follow(b, key);
    expect(writerOf(first.log, second.log)).toEqual([first.log]);
    // As if its process died: no renewals, no release.
    clearTimeout((first.log as unknown as { leaseTimer: NodeJS.Timeout }).leaseTimer);
    (first.log as unknown as { closed: boolean }).closed = true;
    await vi.waitFor(() => expect(writerOf(second.log)).toEqual([second.log]), { timeout: 5000, interval: 50 });
    second.log.append(run('r1', 'after'));
    await vi.waitFor(() => expect(second.seen).toHaveLength(5));
    second.log.close();
  });

  /** As if its process died: no renewals, no release, nothing heard. */
  const die = (log: ThreadEventLog) => {
    clearTimeout((log as unknown as { leaseTimer: NodeJS.Timeout }).leaseTimer);
    (log as unknown as { closed: boolean }).closed = true;
  };

  it('what a follower translated while the writer was dead is written when it takes over, once', async () => {
    const key = `thread-${randomUUID()}`;
    const first = await follow(a, key);
    const second = await follow(b, key);
    // Both translate r1: the writer's copy is numbered, the follower's matched away.
    first.log.append(run('r1', 'before'));
    second.log.append(run('r1', 'before'));
    await vi.waitFor(() => expect(second.seen).toHaveLength(5));
    die(first.log);
    // The rest is translated by the follower alone, before it holds the lease: not dropped.
    const cut = run('r2', 'after');
    second.log.append(cut.slice(0, 3));
    second.log.append(cut.slice(3));
    await vi.waitFor(() => expect(second.seen).toHaveLength(10), { timeout: 5000, interval: 50 });
    expect(second.seen.map((e) => e.event)).toEqual([...run('r1', 'before'), ...cut]);
    const ids = second.seen.map((e) => e.id);
    expect(ids).toEqual(ids.map((_, i) => ids[0] + i));
    second.log.close();
  });

  it('a follower behind the writer does not write again what the writer wrote before it died', async () => {
    const key = `thread-${randomUUID()}`;
    const first = await follow(a, key);
    const second = await follow(b, key);
    first.log.append(run('r1', 'one'));
    await vi.waitFor(() => expect(second.seen).toHaveLength(5));
    die(first.log);
    // The follower translates r1 only now, after the writer wrote it, then r2 alone.
    second.log.append(run('r1', 'one'));
    second.log.append(run('r2', 'two'));
    await vi.waitFor(() => expect(second.seen).toHaveLength(10), { timeout: 5000, interval: 50 });
    expect(second.seen.map((e) => e.event)).toEqual([...run('r1', 'one'), ...run('r2', 'two')]);
    second.log.append(run('r3', 'three'));
    await vi.waitFor(() => expect(second.seen).toHaveLength(15));
    second.log.close();
  });

  it('a writer that lets go is replaced at once, and nothing the follower translated meanwhile is lost', async () => {
    const key = `thread-${randomUUID()}`;
    const first = await follow(a, key);
    const second = await follow(b, key);
    first.log.close();
    second.log.append(run('r1', 'alone'));
    await vi.waitFor(() => expect(second.seen).toHaveLength(5), { timeout: 5000, interval: 20 });
    expect(second.seen.map((e) => e.event)).toEqual(run('r1', 'alone'));
    second.log.close();
  });
});
