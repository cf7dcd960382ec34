import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisConnection } from './connection.js';
import { RedisRateLimiter } from './redis-rate-limiter.js';
import { testRedis } from '../../test/support/redis.js';

const fourPerMinute = { limits: { requestsPerMinute: 4 } };

describe('RedisRateLimiter: one count per resource for every process', () => {
  const redis = testRedis('rate');
  let a: RedisConnection;
  let b: RedisConnection;
  beforeAll(async () => {
    [a, b] = [await redis.connect(), await redis.connect()];
  });
  afterAll(() => redis.cleanup());

  it('two processes share the budget of a resource; another resource has its own', async () => {
    const [onA, onB] = [new RedisRateLimiter(a, fourPerMinute), new RedisRateLimiter(b, fourPerMinute)];
    const key = `user-${randomUUID()}`;
    const decisions = await Promise.all([onA.take(key), onB.take(key), onA.take(key), onB.take(key)]);
    expect(decisions.every((d) => d.allowed)).toBe(true);
    const refused = await onB.take(key);
    expect(refused.allowed).toBe(false);
    if (!refused.allowed) {
      expect(refused.retryAfterSec).toBeGreaterThan(0);
      expect(refused.retryAfterSec).toBeLessThanOrEqual(60);
    }
    expect((await onA.take(`other-${randomUUID()}`)).allowed).toBe(true);
  });
});
