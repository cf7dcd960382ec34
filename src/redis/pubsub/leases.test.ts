import { randomUUID } from 'node:crypto';
import { isLeaseProvider } from '@mastra/core/events';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RedisPubSub } from './redis-pubsub.js';
import { pubsubKeys } from './entry.js';
import { RedisLeases } from './leases.js';
import { pubsubTestbed } from '../../../test/support/redis-pubsub.js';

// Two RedisPubSub instances stand for two processes racing for the same leases.

const redis = pubsubTestbed('leases');
let a: RedisPubSub;
let b: RedisPubSub;
beforeAll(async () => {
  await redis.connect();
  a = redis.pubsub();
  b = redis.pubsub();
});
afterAll(() => redis.cleanup());

// Mastra's thread keys hold a NUL between resource and thread: the key is kept as it is.
const newKey = () => `user-${randomUUID()}\0thread-1`;
const leaseKey = (key: string) => `${redis.prefix}:lease:${key}`;

describe('RedisPubSub as a LeaseProvider', () => {
  it('is one, as Mastra detects it', () => {
    expect(isLeaseProvider(a)).toBe(true);
  });

  it('acquire: the first owner wins; the same owner again is answered yes and its TTL refreshed; another owner is refused and told the holder', async () => {
    const key = newKey();
    expect(await a.acquireLease(key, 'run-1', 5_000)).toEqual({ acquired: true, owner: 'run-1' });
    expect(await redis.inspect.get(leaseKey(key))).toBe('run-1');

    expect(await a.acquireLease(key, 'run-1', 60_000)).toEqual({ acquired: true, owner: 'run-1' });
    expect(await redis.inspect.pTTL(leaseKey(key))).toBeGreaterThan(50_000);

    expect(await b.acquireLease(key, 'run-2', 60_000)).toEqual({ acquired: false, owner: 'run-1' });
    expect(await b.getLeaseOwner(key)).toBe('run-1');
    expect(await b.getLeaseOwner(newKey())).toBeUndefined();
  });

  it('renew, release and transfer act only for the owner', async () => {
    const key = newKey();
    await a.acquireLease(key, 'run-1', 5_000);

    expect(await b.renewLease(key, 'run-2', 60_000)).toBe(false);
    expect(await b.transferLease(key, 'run-2', 'run-3', 60_000)).toBe(false);
    await b.releaseLease(key, 'run-2');
    expect(await a.getLeaseOwner(key)).toBe('run-1');
    expect(await redis.inspect.pTTL(leaseKey(key))).toBeLessThanOrEqual(5_000);

    expect(await a.renewLease(key, 'run-1', 60_000)).toBe(true);
    expect(await redis.inspect.pTTL(leaseKey(key))).toBeGreaterThan(50_000);

    expect(await a.transferLease(key, 'run-1', 'run-4', 30_000)).toBe(true);
    expect(await b.getLeaseOwner(key)).toBe('run-4');
    const ttl = await redis.inspect.pTTL(leaseKey(key));
    expect(ttl).toBeGreaterThan(20_000);
    expect(ttl).toBeLessThanOrEqual(30_000);
    expect(await a.renewLease(key, 'run-1', 60_000)).toBe(false); // run-1 let it go

    await b.releaseLease(key, 'run-4');
    expect(await a.getLeaseOwner(key)).toBeUndefined();
    expect(await a.renewLease(key, 'run-4', 60_000)).toBe(false);
    expect(await a.transferLease(key, 'run-4', 'run-5', 60_000)).toBe(false);
  });

  it('a lease Redis lost (restarted empty) is taken back by its holder’s renewal, or all at once by renewAll; one that expired, was taken, or was let go elsewhere is not', async () => {
    const key = newKey();
    await a.acquireLease(key, 'run-1', 60_000);
    await redis.inspect.del(leaseKey(key));
    expect(await a.renewLease(key, 'run-1', 60_000)).toBe(true);
    expect(await b.getLeaseOwner(key)).toBe('run-1');

    // Another process took it meanwhile: it is that one's.
    await redis.inspect.del(leaseKey(key));
    await b.acquireLease(key, 'run-2', 60_000);
    expect(await a.renewLease(key, 'run-1', 60_000)).toBe(false);
    expect(await a.getLeaseOwner(key)).toBe('run-2');

    // Another process resumed the run (the same owner) and let go of its lease when it ended: the
    // first holder's renewal does not take it back, and the lease is free for the next run.
    const resumed = newKey();
    await a.acquireLease(resumed, 'run-5', 60_000);
    expect(await b.acquireLease(resumed, 'run-5', 60_000)).toEqual({ acquired: true, owner: 'run-5' });
    await b.releaseLease(resumed, 'run-5');
    expect(await a.renewLease(resumed, 'run-5', 60_000)).toBe(false);
    expect(await a.getLeaseOwner(resumed)).toBeUndefined();
    expect(await b.acquireLease(resumed, 'run-6', 60_000)).toEqual({ acquired: true, owner: 'run-6' });

    // A process that held a lease beyond its own count of the TTL (stalled) does not take it back: it expired.
    const stalled = newKey();
    await a.acquireLease(stalled, 'run-3', 1);
    await vi.waitFor(async () => expect(await redis.inspect.get(leaseKey(stalled))).toBeNull());
    expect(await a.renewLease(stalled, 'run-3', 60_000)).toBe(false);
    expect(await a.getLeaseOwner(stalled)).toBeUndefined();

    // What a connection back after an outage does: every lease held here renewed at once.
    const leases = new RedisLeases(async () => redis.inspect, pubsubKeys(redis.prefix));
    const held = [newKey(), newKey()];
    for (const k of held) await leases.acquireLease(k, `run-${k}`, 60_000);
    await redis.inspect.del(held.map(leaseKey));
    await leases.renewAll();
    for (const k of held) expect(await b.getLeaseOwner(k)).toBe(`run-${k}`);
  });

  it('expires after its TTL: then another owner wins it', async () => {
    const key = newKey();
    await a.acquireLease(key, 'run-1', 50);
    await vi.waitFor(async () => expect(await b.getLeaseOwner(key)).toBeUndefined());
    expect(await b.renewLease(key, 'run-1', 1_000)).toBe(false);
    expect(await b.acquireLease(key, 'run-2', 1_000)).toEqual({ acquired: true, owner: 'run-2' });
  });

  it('holdsLease: known in the instance whose run holds it, without asking Redis; not in the other; gone once released, lost or expired', async () => {
    const key = newKey();
    expect(a.holdsLease(key)).toBe(false);
    await a.acquireLease(key, 'run-1', 60_000);
    await b.acquireLease(key, 'run-2', 60_000); // refused
    expect([a.holdsLease(key), b.holdsLease(key)]).toEqual([true, false]);
    await a.acquireLease(key, 'run-3', 60_000); // refused too, but run-1 still holds it here
    expect(a.holdsLease(key)).toBe(true);

    await a.transferLease(key, 'run-1', 'run-4', 60_000); // a follow-up run of the same instance
    expect(a.holdsLease(key)).toBe(true);
    await a.releaseLease(key, 'run-4');
    expect(a.holdsLease(key)).toBe(false);

    // Lost behind its back (taken over after expiry elsewhere): a failed renew tells it.
    await a.acquireLease(key, 'run-5', 60_000);
    await redis.inspect.set(leaseKey(key), 'run-6');
    expect(await a.renewLease(key, 'run-5', 60_000)).toBe(false);
    expect(a.holdsLease(key)).toBe(false);

    const brief = newKey();
    await b.acquireLease(brief, 'run-7', 50);
    await vi.waitFor(() => expect(b.holdsLease(brief)).toBe(false));
  });

  it('one of many racing owners wins, and every other one is told who', async () => {
    const key = newKey();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).acquireLease(key, `run-${i}`, 10_000)));
    const winners = answers.filter((answer) => answer.acquired);
    expect(winners).toHaveLength(1);
    expect(answers.every((answer) => answer.owner === winners[0].owner)).toBe(true);
  });
});

describe('leases of an instance that is gone', () => {
  const holderKey = (key: string) => `${redis.prefix}:lease-holder:${key}`;
  const aliveKey = (instance: string) => `${redis.prefix}:alive:${instance}`;

  it('each lease names the instance holding it, whose heartbeat is kept while it lives; a lease let go names none', async () => {
    const key = newKey();
    await a.acquireLease(key, 'run-1', 60_000);
    expect(await redis.inspect.get(holderKey(key))).toBe(a.instanceId);
    expect(
      await a.leaseHolders([
        { key, owner: 'run-1' },
        { key, owner: 'run-2' },
      ]),
    ).toEqual([a.instanceId, undefined]);
    expect(await redis.inspect.exists(aliveKey(a.instanceId))).toBe(1);
    // The heartbeat renews it every second from its own thread (TTL 3 s).
    await vi.waitFor(async () => expect(await redis.inspect.pTTL(aliveKey(a.instanceId))).toBeGreaterThan(2000), { timeout: 3000 });
    expect(await b.goneInstances([a.instanceId, 'never-was'])).toEqual(['never-was']);

    await a.transferLease(key, 'run-1', 'run-2', 60_000);
    await a.releaseLease(key, 'run-2');
    expect(await redis.inspect.exists(holderKey(key))).toBe(0);
  });

  it('the heartbeat goes on while the main thread is busy for longer than its TTL', async () => {
    const key = newKey();
    await a.acquireLease(key, 'run-busy', 60_000);
    const until = Date.now() + 4000;
    while (Date.now() < until); // a 4-second stall of this thread
    // Asked before any timer of this thread could beat (a plain connection, no watchdog to replace it).
    expect(await redis.inspect.exists(aliveKey(a.instanceId))).toBe(1);
  });

  it('is free to take at once, and reclaimed once: the first caller is told the run, later ones not', async () => {
    const gone = redis.pubsub();
    const [key, other] = [newKey(), newKey()];
    await gone.acquireLease(key, 'run-1', 60_000);
    await gone.acquireLease(other, 'run-2', 60_000);
    expect(await a.acquireLease(key, 'run-3', 60_000)).toEqual({ acquired: false, owner: 'run-1' });
    // A live instance's runs are not reclaimed.
    expect(await a.reclaimFromGone(gone.instanceId, [{ key, owner: 'run-1' }])).toEqual([]);

    await gone.close(); // its heartbeat ends (as when the process dies: the key lapses)
    expect(await a.goneInstances([gone.instanceId])).toEqual([gone.instanceId]);
    expect(await b.acquireLease(key, 'run-3', 60_000)).toEqual({ acquired: true, owner: 'run-3' });
    expect(await redis.inspect.get(holderKey(key))).toBe(b.instanceId);

    const runs = [
      { key, owner: 'run-1' },
      { key: other, owner: 'run-2' },
    ];
    expect(await a.reclaimFromGone(gone.instanceId, runs)).toEqual(['run-1', 'run-2']);
    expect(await b.reclaimFromGone(gone.instanceId, runs)).toEqual([]);
    // run-3's lease (taken by b) is left alone; run-2's is let go.
    expect(await a.getLeaseOwner(key)).toBe('run-3');
    expect(await a.getLeaseOwner(other)).toBeUndefined();
    expect(await a.acquireLease(other, 'run-4', 60_000)).toEqual({ acquired: true, owner: 'run-4' });
  });

  it('without a heartbeat (heartbeat: false) no holder is named, and the lease lasts its TTL', async () => {
    const plain = redis.pubsub({ heartbeat: false });
    const key = newKey();
    await plain.acquireLease(key, 'run-1', 60_000);
    expect(await redis.inspect.exists(holderKey(key))).toBe(0);
    expect(await a.leaseHolders([{ key, owner: 'run-1' }])).toEqual([null]);
    await plain.close();
    expect(await a.acquireLease(key, 'run-2', 60_000)).toEqual({ acquired: false, owner: 'run-1' });
  });
});
