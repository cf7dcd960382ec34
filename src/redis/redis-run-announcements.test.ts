import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RedisConnection } from './connection.js';
import { redisKeys } from './keys.js';
import { RedisRunAnnouncements } from './redis-run-announcements.js';
import { testConfig, testRedis } from '../../test/support/redis.js';

// Two `RedisRunAnnouncements` on connections of their own stand for two bridge processes on one Redis.

const redis = testRedis('announcements');
const keys = redisKeys(redis.prefix);
const keepAfterRunMs = 300;
let connA: RedisConnection;
let a: RedisRunAnnouncements;
let b: RedisRunAnnouncements;

beforeAll(async () => {
  connA = await redis.connect();
  a = new RedisRunAnnouncements(connA, testConfig(), { keepAfterRunMs });
  b = new RedisRunAnnouncements(await redis.connect(), testConfig(), { keepAfterRunMs });
});
afterAll(() => redis.cleanup());

const announcement = { messages: [{ id: 'u1', role: 'user' as const, content: 'hi' }] };
const newRun = () => `run-${randomUUID()}`;
const ttlOf = (runId: string) => connA.client.pTTL(keys.announce(runId));

describe('RedisRunAnnouncements: announcements shared by processes', () => {
  it('reads in one process what another announced, as JSON under <prefix>:announce:<runId>', async () => {
    const r1 = newRun();
    await a.announce(r1, announcement);
    expect(await b.get(r1)).toEqual(announcement);
    expect(JSON.parse((await connA.client.get(`${redis.prefix}:announce:${r1}`))!)).toEqual(announcement);
    expect(await b.get(newRun())).toBeUndefined();
  });

  it("keeps a run's announcement while it runs, and drops it keepAfterRunMs after it ended", async () => {
    const r1 = newRun();
    await a.announce(r1, announcement);
    expect(await ttlOf(r1)).toBeGreaterThan(3600 * 1000);
    a.ended(r1);
    await vi.waitFor(async () => expect(await ttlOf(r1)).toBeLessThanOrEqual(keepAfterRunMs));
    expect(await b.get(r1)).toEqual(announcement); // still there for followers that read late
    await vi.waitFor(async () => expect(await b.get(r1)).toBeUndefined(), { timeout: 2000, interval: 50 });
  });

  it('does not drop a newer announcement under the same run id', async () => {
    const r1 = newRun();
    await a.announce(r1, announcement);
    a.ended(r1);
    const newer = { messages: [] };
    await a.announce(r1, newer); // after the shortening: sent later on the same connection
    expect(await ttlOf(r1)).toBeGreaterThan(3600 * 1000);
    expect(await b.get(r1)).toEqual(newer);
  });
});
