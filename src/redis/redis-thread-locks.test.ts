import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RedisConnection } from './connection.js';
import { redisKeys } from './keys.js';
import { testConfig, testRedis } from '../../test/support/redis.js';
import { RedisThreadLocks } from './redis-thread-locks.js';

// Two `RedisThreadLocks` on connections of their own stand for two bridge processes on one Redis.

const redis = testRedis('locks');
const keys = redisKeys(redis.prefix);
// Retries far apart (5 s, half the TTL): a hand-over within the 1 s of `vi.waitFor` is a woken waiter.
const slowRetries = { ttlMs: 10_000, retryMs: 10_000 };
let a: RedisThreadLocks;
let b: RedisThreadLocks;
let inspect: RedisConnection;

beforeAll(async () => {
  inspect = await redis.connect();
  a = new RedisThreadLocks(inspect, testConfig(), slowRetries);
  b = new RedisThreadLocks(await redis.connect(), testConfig(), slowRetries);
});
afterAll(() => redis.cleanup());

/** A promise the test settles when it wants to. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

const lockId = () => `thread:${randomUUID()}`;
const waiters = (id: string) => inspect.client.zCard(keys.lockQueue(id));
/** Some real I/O inside a task, so that tasks do overlap unless the lock keeps them apart. */
const work = () => inspect.client.ping();

describe('RedisThreadLocks: one lock per id across processes', () => {
  it('keeps the other process out while held, and hands the lock over when released', async () => {
    const id = lockId();
    const release = gate();
    const log: string[] = [];
    const first = a.exclusive(id, async () => {
      log.push('a');
      await release.opened;
      log.push('a done');
      return 'A';
    });
    await vi.waitFor(() => expect(log).toEqual(['a']));
    const second = b.exclusive(id, async () => {
      log.push('b');
      return 'B';
    });
    await vi.waitFor(async () => expect(await waiters(id)).toBe(1)); // b tried, and waits in line
    expect(log).toEqual(['a']);

    release.open();
    await vi.waitFor(() => expect(log).toEqual(['a', 'a done', 'b']));
    expect([await first, await second]).toEqual(['A', 'B']);
    expect(await inspect.client.exists([keys.lock(id), keys.lockQueue(id), keys.lockAlive(id)])).toBe(0);
  });

  it('frees the lock of a process that died after its TTL, without a release', async () => {
    const id = lockId();
    const dying = await redis.connect();
    const held = gate();
    const never = gate();
    const orphan = new RedisThreadLocks(dying, testConfig(), { ttlMs: 600 }).exclusive(id, async () => {
      held.open();
      await never.opened;
    });
    await held.opened;
    // The process dies: no more renewals, no release.
    dying.client.destroy();
    dying.subscriber.destroy();
    const diedAt = Date.now();
    const left = await inspect.client.pTTL(keys.lock(id));
    expect(left).toBeGreaterThan(0);

    const takenAt = await b.exclusive(id, async () => Date.now());
    // Taken when the TTL ran out: not before, and not a whole retry interval later.
    expect(takenAt - diedAt).toBeGreaterThanOrEqual(left - 20);
    expect(takenAt - diedAt).toBeLessThan(600 + 500);
    never.open();
    await orphan; // its release fails quietly: the task's outcome stands
  });

  it("runs one process's tasks in call order, one at a time, past a task that fails", async () => {
    const id = lockId();
    const log: string[] = [];
    const tasks = [1, 2, 3, 4].map((n) =>
      a.exclusive(id, async () => {
        log.push(`start ${n}`);
        await work();
        log.push(`end ${n}`);
        if (n === 2) throw new Error('two failed');
        return n;
      }),
    );
    const results = await Promise.allSettled(tasks);
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3', 'start 4', 'end 4']);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([1, 'two failed', 3, 4]);
  });

  it('lets two busy processes take turns rather than one keeping the lock', async () => {
    const id = lockId();
    const log: string[] = [];
    const firstHeld = gate();
    const queue = (locks: RedisThreadLocks, name: string, hold?: Promise<void>) =>
      [1, 2, 3].map((n) =>
        locks.exclusive(id, async () => {
          log.push(`${name}${n}`);
          if (n === 1 && hold) await hold;
          await work();
        }),
      );
    const fromA = queue(a, 'a', firstHeld.opened);
    await vi.waitFor(() => expect(log).toEqual(['a1']));
    const fromB = queue(b, 'b');
    await vi.waitFor(async () => expect(await waiters(id)).toBe(1));
    firstHeld.open();
    await Promise.all([...fromA, ...fromB]);
    expect(log).toEqual(['a1', 'b1', 'a2', 'b2', 'a3', 'b3']);
  });

  it('never lets two tasks in at once, whichever process they come from', async () => {
    const id = lockId();
    const counter = `${redis.prefix}:counter:${randomUUID()}`;
    let inside = 0;
    let most = 0;
    const increment = async () => {
      most = Math.max(most, ++inside);
      const value = Number((await inspect.client.get(counter)) ?? 0);
      await work();
      await inspect.client.set(counter, String(value + 1));
      inside--;
    };
    await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).exclusive(id, increment)));
    expect(await inspect.client.get(counter)).toBe('10');
    expect(most).toBe(1);
  });
});
