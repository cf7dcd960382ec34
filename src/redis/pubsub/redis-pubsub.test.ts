import { randomUUID } from 'node:crypto';
import type { Event, EventCallback } from '@mastra/core/events';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createClient } from 'redis';
import type { RedisClient } from './connections.js';
import type { RedisPubSub } from './redis-pubsub.js';
import { event, pubsubTestbed, recorder, REDIS_URL } from '../../../test/support/redis-pubsub.js';

// Several RedisPubSub instances on one real Redis, each standing for one process.

const redis = pubsubTestbed('pubsub');
beforeAll(() => redis.connect());
afterAll(() => redis.cleanup());

const newTopic = () => `topic-${randomUUID()}`;
const names = (n: number, prefix = 'e') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
/** The connections an instance holds open, by role (its connections are named after its instance id). */
async function connectionsOf(pubsub: RedisPubSub): Promise<string[]> {
  const clients = await redis.inspect.clientList();
  const mine = `mastra-pubsub:${pubsub.instanceId}:`;
  return clients
    .filter((c) => c.name.startsWith(mine))
    .map((c) => c.name.slice(mine.length))
    .sort();
}
const pending = async (topic: string, group: string) => (await redis.inspect.xPending(redis.topicKey(topic), group)).pending;
/** Fails the test, instead of hanging it, when `promise` takes longer than `ms`. */
function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe('publish', () => {
  it('resolves once the XADD is queued, not when Redis answers; flush() waits for the writes, which keep their order', async () => {
    // Our own client as the writer, so that the test can hold that one connection up.
    const writer: RedisClient = createClient({ url: REDIS_URL });
    const pubsub = redis.pubsub({ url: undefined, client: writer });
    const topic = newTopic();
    await pubsub.publish(topic, event('warm-up')); // connects
    await pubsub.flush();

    // A BLPOP on the writer: Redis answers nothing sent after it on that connection until the gate opens.
    const gate = `${redis.prefix}:gate`;
    const held = writer.blPop(gate, 0);
    for (const name of names(100)) await pubsub.publish(topic, event(name));
    expect(await redis.inspect.xLen(redis.topicKey(topic))).toBe(1);
    let flushed = false;
    const flushing = pubsub.flush().then(() => (flushed = true));
    await redis.inspect.ping();
    expect(flushed).toBe(false);

    await redis.inspect.lPush(gate, 'open');
    await held;
    await flushing;
    const entries = await redis.inspect.xRange(redis.topicKey(topic), '-', '+');
    expect((entries ?? []).map((e) => (JSON.parse(e.message.e) as Event).type)).toEqual(['warm-up', ...names(100)]);
  });

  it('trims each stream to about maxStreamLength entries (MAXLEN ~)', async () => {
    const pubsub = redis.pubsub({ maxStreamLength: 100 });
    const topic = newTopic();
    for (const name of names(2000)) await pubsub.publish(topic, event(name));
    await pubsub.flush();
    const length = await redis.inspect.xLen(redis.topicKey(topic));
    expect(length).toBeGreaterThanOrEqual(100);
    expect(length).toBeLessThan(1000);
  });

  it('streamIdleTtlMs: writes set the stream to expire (a publish, a group created on it); 0 sets none', async () => {
    const expiring = redis.pubsub({ streamIdleTtlMs: 60_000 });
    const [published, grouped, plain] = [newTopic(), newTopic(), newTopic()];
    await expiring.publish(published, event('x'));
    await expiring.flush();
    await expiring.subscribe(grouped, recorder().cb, { group: 'g' });
    const ttl = (topic: string) => redis.inspect.pTTL(redis.topicKey(topic));
    expect(await ttl(published)).toBeGreaterThan(50_000);
    expect(await ttl(published)).toBeLessThanOrEqual(60_000);
    expect(await ttl(grouped)).toBeGreaterThan(50_000);

    const lasting = redis.pubsub();
    await lasting.publish(plain, event('x'));
    await lasting.flush();
    expect(await ttl(plain)).toBe(-1);
  });

  it('localOnly: the very object, to this process only (fan-out subscribers and one member of each group); nothing written', async () => {
    const here = redis.pubsub();
    const elsewhere = redis.pubsub();
    const topic = newTopic();
    const [fan, memberA, memberB, remote] = [recorder(), recorder(), recorder(), recorder()];
    await here.subscribe(topic, fan.cb);
    await here.subscribe(topic, memberA.cb, { group: 'g' });
    await here.subscribe(topic, memberB.cb, { group: 'g' });
    await elsewhere.subscribe(topic, remote.cb);

    const data = { notJson: new Map([[1, { at: new Date() }]]) };
    await here.publish(topic, { type: 'local', runId: 'run-1', data }, { localOnly: true });
    await Promise.all([fan.received(1), vi.waitFor(() => expect(memberA.events.length + memberB.events.length).toBe(1))]);
    expect(fan.events[0].data).toBe(data);
    expect([...memberA.events, ...memberB.events][0].data).toBe(data);
    expect(fan.events[0]).toMatchObject({ type: 'local', id: expect.any(String), createdAt: expect.any(Date), deliveryAttempt: 1 });

    await here.publish(topic, event('shared'));
    await remote.received(1);
    expect(remote.types()).toEqual(['shared']);
    await here.flush();
    expect(await redis.inspect.xLen(redis.topicKey(topic))).toBe(1);
  });

  it('keepLocal and deliverAtOnce: kept events stay here; picked ones reach this process’s subscribers at once, once, and the others through Redis', async () => {
    const here = redis.pubsub({ keepLocal: (_topic, e) => e.type === 'chunk', deliverAtOnce: (_topic, e) => e.type === 'registered' });
    const elsewhere = redis.pubsub();
    const topic = newTopic();
    const [mine, remote] = [recorder(), recorder()];
    await here.subscribe(topic, mine.cb);
    await elsewhere.subscribe(topic, remote.cb);

    const publishing = here.publish(topic, event('registered'));
    // Handed over in the publish itself, before any read of the stream.
    expect(mine.types()).toEqual(['registered']);
    await publishing;
    await here.publish(topic, event('chunk'));
    await here.publish(topic, event('done'));
    await remote.received(2);
    await mine.received(3);
    await here.flush();
    expect(remote.types()).toEqual(['registered', 'done']);
    // Read back from the stream, the registration is not handed over again.
    await here.publish(topic, event('last'));
    await mine.received(4);
    expect(mine.types()).toEqual(['registered', 'chunk', 'done', 'last']);
    expect(await redis.inspect.xLen(redis.topicKey(topic))).toBe(3);
  });
});

describe('subscribe without a group: fan-out', () => {
  it('every subscriber gets every event, in order, in this process and in another; Errors and Dates arrive as such', async () => {
    const a = redis.pubsub();
    const b = redis.pubsub();
    const topic = newTopic();
    const [first, second, remote] = [recorder(), recorder(), recorder()];
    await a.subscribe(topic, first.cb);
    await a.subscribe(topic, second.cb);
    await b.subscribe(topic, remote.cb);

    const failure = Object.assign(new TypeError('tool failed', { cause: new Error('socket hang up') }), { code: 'E_TOOL' });
    await a.publish(topic, event('error', { error: failure, at: new Date(42) }));
    for (const name of names(50)) await a.publish(topic, event(name));
    await Promise.all([first.received(51), second.received(51), remote.received(51)]);

    for (const r of [first, second, remote]) expect(r.types()).toEqual(['error', ...names(50)]);
    const received = remote.events[0];
    expect(received).toMatchObject({ type: 'error', runId: 'run-1', id: first.events[0].id, deliveryAttempt: 1 });
    expect(received.createdAt).toEqual(first.events[0].createdAt);
    const { error, at } = received.data as { error: TypeError & { code: string }; at: Date };
    expect(error).toBeInstanceOf(TypeError);
    expect([error.message, error.code, (error.cause as Error).message, error.stack]).toEqual(['tool failed', 'E_TOOL', 'socket hang up', failure.stack]);
    expect(at).toEqual(new Date(42));
  });

  it('all of them share one connection, however many topics; a new topic wakes the blocked read at once; unsubscribe stops delivery at once', async () => {
    // A read blocks a minute: only the wake-up can make a new topic's events arrive in time.
    const pubsub = redis.pubsub({ blockMs: 60_000 });
    const topics = Array.from({ length: 30 }, newTopic);
    const recorders = topics.map(() => recorder());
    for (const [i, topic] of topics.entries()) await pubsub.subscribe(topic, recorders[i].cb);
    expect(await connectionsOf(pubsub)).toEqual(['fan-out_reader', 'writer']);

    await pubsub.publish(topics[29], event('to the newest'));
    await within(5000, recorders[29].received(1), 'an event on the topic subscribed last');

    await pubsub.unsubscribe(topics[0], recorders[0].cb);
    await pubsub.publish(topics[0], event('too late'));
    await pubsub.publish(topics[1], event('marker'));
    await within(5000, recorders[1].received(1), 'the marker');
    expect(recorders[0].events).toEqual([]);
  });

  it('startFrom: earliest replays what the stream holds, latest only what comes after; with and without a group', async () => {
    const pubsub = redis.pubsub();
    const topic = newTopic();
    await pubsub.publish(topic, event('old-1'));
    await pubsub.publish(topic, event('old-2'));
    await pubsub.flush();

    const [latest, earliest, groupLatest, groupEarliest] = [recorder(), recorder(), recorder(), recorder()];
    // The latest one first: the earliest one then joins a topic the reader is already past.
    await pubsub.subscribe(topic, latest.cb, { startFrom: 'latest' });
    await pubsub.subscribe(topic, earliest.cb);
    await pubsub.subscribe(topic, groupLatest.cb, { group: 'late', startFrom: 'latest' });
    await pubsub.subscribe(topic, groupEarliest.cb, { group: 'early', startFrom: 'earliest' });
    await pubsub.publish(topic, event('new'));
    await pubsub.publish(topic, event('marker'));

    await Promise.all([latest.received(2), earliest.received(4), groupLatest.received(2), groupEarliest.received(4)]);
    expect(latest.types()).toEqual(['new', 'marker']);
    expect(groupLatest.types()).toEqual(['new', 'marker']);
    expect(earliest.types()).toEqual(['old-1', 'old-2', 'new', 'marker']);
    expect(groupEarliest.types()).toEqual(['old-1', 'old-2', 'new', 'marker']);
  });

  it('nack (or a rejected callback) redelivers to that subscriber alone, with the next attempt, up to the cap', async () => {
    const pubsub = redis.pubsub({ maxDeliveryAttempts: 3 });
    const topic = newTopic();
    const attempts: number[] = [];
    const flaky: EventCallback = async (e) => {
      attempts.push(e.deliveryAttempt ?? 0);
      throw new Error('not now');
    };
    const steady = recorder();
    await pubsub.subscribe(topic, flaky);
    await pubsub.subscribe(topic, steady.cb);
    await pubsub.publish(topic, event('x'));
    await vi.waitFor(() => expect(attempts).toEqual([1, 2, 3]));
    await pubsub.flush(); // no redelivery left scheduled
    expect(attempts).toEqual([1, 2, 3]);
    expect(steady.types()).toEqual(['x']);
  });
});

describe('subscribe with a group', () => {
  it('its members, in two processes and within one, share the events: each delivered once, all acked', async () => {
    const a = redis.pubsub();
    const b = redis.pubsub();
    const topic = newTopic();
    const [a1, a2, b1] = [recorder(), recorder(), recorder()];
    await a.subscribe(topic, a1.cb, { group: 'workers' });
    await a.subscribe(topic, a2.cb, { group: 'workers' });
    await b.subscribe(topic, b1.cb, { group: 'workers' });

    for (const name of names(60)) {
      await a.publish(topic, event(name));
      await a.flush(); // one at a time: both consumers are waiting for each
    }
    const all = () => [...a1.events, ...a2.events, ...b1.events];
    await vi.waitFor(() => expect(all()).toHaveLength(60));
    expect(
      all()
        .map((e) => e.type)
        .sort(),
    ).toEqual(names(60).sort());
    expect(new Set(all().map((e) => e.id)).size).toBe(60);
    for (const r of [a1, a2, b1]) expect(r.events.length).toBeGreaterThan(0);
    await Promise.all([a.flush(), b.flush()]);
    expect(await pending(topic, 'workers')).toBe(0);
  });

  it('nack: the event comes again (the original acked) with the next attempt, to that group only, until maxDeliveryAttempts; then dropped', async () => {
    const pubsub = redis.pubsub({ maxDeliveryAttempts: 3 });
    const topic = newTopic();
    const [nacker, otherGroup, fan] = [recorder('nack'), recorder(), recorder()];
    await pubsub.subscribe(topic, nacker.cb, { group: 'flaky' });
    await pubsub.subscribe(topic, otherGroup.cb, { group: 'steady' });
    await pubsub.subscribe(topic, fan.cb);

    await pubsub.publish(topic, event('job'));
    await nacker.received(3);
    await pubsub.flush();
    expect(nacker.events.map((e) => e.deliveryAttempt)).toEqual([1, 2, 3]);
    expect(new Set(nacker.events.map((e) => e.id)).size).toBe(1);
    expect(await pending(topic, 'flaky')).toBe(0);
    expect(await redis.inspect.xLen(redis.topicKey(topic))).toBe(3); // the original and two redeliveries

    // Past the cap nothing comes again; the redeliveries were for the nacking group alone.
    await pubsub.publish(topic, event('marker'));
    await Promise.all([nacker.received(4), otherGroup.received(2), fan.received(2)]);
    expect(nacker.types().slice(0, 4)).toEqual(['job', 'job', 'job', 'marker']);
    expect(otherGroup.types()).toEqual(['job', 'marker']);
    expect(fan.types()).toEqual(['job', 'marker']);
  });

  it('a rejected callback counts as a nack; an ack settles it for good', async () => {
    const pubsub = redis.pubsub();
    const topic = newTopic();
    const seen: number[] = [];
    await pubsub.subscribe(
      topic,
      async (e, ack) => {
        seen.push(e.deliveryAttempt ?? 0);
        if (e.deliveryAttempt === 1) throw new Error('first try fails');
        await ack?.();
        throw new Error('failing after the ack changes nothing');
      },
      { group: 'g' },
    );
    await pubsub.publish(topic, event('job'));
    await vi.waitFor(() => expect(seen).toEqual([1, 2]));
    await pubsub.flush();
    expect(seen).toEqual([1, 2]);
    expect(await pending(topic, 'g')).toBe(0);
  });

  it('reclaim: an entry a consumer took and never acked goes to another member once that consumer is gone', async () => {
    const gone = redis.pubsub();
    const survivor = redis.pubsub({ reclaimIntervalMs: 100, reclaimIdleMs: 300 });
    const topic = newTopic();
    const taken = recorder('none');
    await gone.subscribe(topic, taken.cb, { group: 'g' });
    await gone.publish(topic, event('job'));
    await taken.received(1);
    await gone.close();
    expect(await pending(topic, 'g')).toBe(1);

    const rescued = recorder();
    await survivor.subscribe(topic, rescued.cb, { group: 'g' });
    await within(10_000, rescued.received(1), 'the reclaimed entry');
    expect(rescued.events[0]).toMatchObject({ type: 'job', id: taken.events[0].id, deliveryAttempt: 2 });
    await survivor.flush();
    expect(await pending(topic, 'g')).toBe(0);
  });

  it('one connection per group and topic; the last member out closes it and leaves the group; close() closes everything', async () => {
    const pubsub = redis.pubsub();
    const [topic, other] = [newTopic(), newTopic()];
    const [fan, member, lone] = [recorder(), recorder(), recorder()];
    await pubsub.subscribe(topic, fan.cb);
    await pubsub.subscribe(topic, member.cb, { group: 'g' });
    await pubsub.subscribe(other, lone.cb, { group: 'h' });
    expect(await connectionsOf(pubsub)).toEqual(['fan-out_reader', 'group_g_reader', 'group_h_reader', 'writer']);

    await pubsub.unsubscribe(other, lone.cb);
    expect(await connectionsOf(pubsub)).toEqual(['fan-out_reader', 'group_g_reader', 'writer']);
    expect(await redis.inspect.xInfoConsumers(redis.topicKey(other), 'h')).toEqual([]);

    await pubsub.close();
    expect(await connectionsOf(pubsub)).toEqual([]);
    await expect(pubsub.publish(topic, event('x'))).rejects.toThrow(/closed/);
  });
});

describe('clearTopic', () => {
  it('deletes the stream and its groups; never throws, not even once closed', async () => {
    const pubsub = redis.pubsub();
    const topic = newTopic();
    const member = recorder();
    await pubsub.subscribe(topic, member.cb, { group: 'g' });
    await pubsub.publish(topic, event('x'));
    await member.received(1);
    await pubsub.unsubscribe(topic, member.cb);
    expect(await redis.inspect.xInfoGroups(redis.topicKey(topic))).toHaveLength(1);

    await pubsub.clearTopic(topic);
    expect(await redis.inspect.exists(redis.topicKey(topic))).toBe(0);
    await expect(pubsub.clearTopic(topic)).resolves.toBeUndefined();
    await pubsub.close();
    await expect(pubsub.clearTopic(topic)).resolves.toBeUndefined();
  });

  it('subscribers still attached, with and without a group, get what is published after it', async () => {
    const pubsub = redis.pubsub();
    const topic = newTopic();
    const [fan, member] = [recorder(), recorder()];
    await pubsub.subscribe(topic, fan.cb);
    await pubsub.subscribe(topic, member.cb, { group: 'g' });
    await pubsub.publish(topic, event('before'));
    await Promise.all([fan.received(1), member.received(1)]);

    await pubsub.clearTopic(topic);
    await pubsub.publish(topic, event('after'));
    await Promise.all([fan.received(2), member.received(2)]);
    expect(fan.types()).toEqual(['before', 'after']);
    expect(member.types()).toEqual(['before', 'after']);
  });
});

describe('connections', () => {
  it('a client of your own becomes the writer, its duplicates the readers; close() closes it', async () => {
    const client: RedisClient = createClient({ url: REDIS_URL, name: 'callers-own-client' });
    const pubsub = redis.pubsub({ url: undefined, client });
    const topic = newTopic();
    const fan = recorder();
    await pubsub.subscribe(topic, fan.cb);
    await pubsub.publish(topic, event('x'));
    await fan.received(1);
    expect(client.isOpen).toBe(true);
    expect(await connectionsOf(pubsub)).toEqual(['fan-out_reader']); // the writer keeps the caller's name
    await pubsub.close();
    expect(client.isOpen).toBe(false);
  });

  it('a Redis that is not there: publish and subscribe reject at once, saying so', async () => {
    const pubsub = redis.pubsub({ url: 'redis://127.0.0.1:1' });
    await expect(pubsub.publish(newTopic(), event('x'))).rejects.toThrow(/could not connect/);
    await expect(pubsub.subscribe(newTopic(), recorder().cb)).rejects.toThrow(/could not connect/);
    await expect(pubsub.subscribe(newTopic(), recorder().cb, { group: 'g' })).rejects.toThrow(/could not connect/);
  });
});

describe('what failing publishes log', () => {
  it('Redis away: many failed publishes log one warning (isOutage) and no error; once one went through and Redis is away again, one more', async () => {
    const { startFaultProxy } = await import('../../../test/support/fault-proxy.js');
    const { isUnavailable } = await import('../../translate/failure.js');
    const proxy = await startFaultProxy(REDIS_URL);
    // The writer is ours, so the test can tell when it is offline; it fails commands at once, as the pubsub's own do.
    const writer: RedisClient = createClient({ url: proxy.urlFor(REDIS_URL), disableOfflineQueue: true, socket: { reconnectStrategy: () => 50 } });
    const lines = { warn: [] as string[], error: [] as string[] };
    const pubsub = redis.pubsub({
      url: undefined,
      client: writer,
      isOutage: isUnavailable,
      logger: { warn: (m: string) => void lines.warn.push(m), error: (m: string) => void lines.error.push(m) },
    });
    const topic = newTopic();
    try {
      await pubsub.publish(topic, event('warm-up'));
      await pubsub.flush();
      const outage = async () => {
        const offline = new Promise((resolve) => writer.once('reconnecting', resolve));
        proxy.mode('refuse');
        await offline;
        for (const name of names(200)) await pubsub.publish(topic, event(name));
        await pubsub.flush(); // waits for the failed writes, logged
      };
      const heal = async () => {
        const ready = new Promise((resolve) => writer.once('ready', resolve));
        proxy.mode('forward');
        await ready;
        await pubsub.publish(topic, event('through'));
        await pubsub.flush();
      };
      // Per outage: one line for the publishes, one for the writer's connection (not one per reconnect attempt).
      const publishes = () => lines.warn.filter((line) => line.includes('publish to'));
      const connection = () => lines.warn.filter((line) => line.includes('writer connection'));
      await outage();
      expect(publishes()).toEqual([expect.stringMatching(/^\[RedisPubSub\] Redis is unavailable: publish to .* failed/)]);
      expect(connection()).toEqual([expect.stringMatching(/Redis is unavailable: not logged again until it is back/)]);
      expect(lines.warn).toHaveLength(2);
      expect(lines.error).toEqual([]);
      await outage(); // the same outage: no publish went through since
      expect(lines.warn).toHaveLength(2);
      await heal();
      await outage();
      expect([publishes().length, connection().length, lines.warn.length, lines.error.length]).toEqual([2, 2, 4, 0]);
      await heal();
      expect(((await redis.inspect.xRange(redis.topicKey(topic), '-', '+')) ?? []).map((e) => (JSON.parse(e.message.e) as Event).type)).toEqual([
        'warm-up',
        'through',
        'through',
      ]);
    } finally {
      proxy.mode('forward');
      await pubsub.close();
      await proxy.close();
    }
  });

  it('without isOutage every failure is a defect: logged at error, once until a publish succeeds', async () => {
    const { startFaultProxy } = await import('../../../test/support/fault-proxy.js');
    const proxy = await startFaultProxy(REDIS_URL);
    const writer: RedisClient = createClient({ url: proxy.urlFor(REDIS_URL), disableOfflineQueue: true, socket: { reconnectStrategy: () => 50 } });
    const lines = { warn: [] as string[], error: [] as string[] };
    const pubsub = redis.pubsub({
      url: undefined,
      client: writer,
      logger: { warn: (m: string) => void lines.warn.push(m), error: (m: string) => void lines.error.push(m) },
    });
    try {
      await pubsub.publish(newTopic(), event('warm-up'));
      const offline = new Promise((resolve) => writer.once('reconnecting', resolve));
      proxy.mode('refuse');
      await offline;
      for (const name of names(20)) await pubsub.publish(newTopic(), event(name));
      await pubsub.flush();
      expect(lines.error).toEqual([expect.stringMatching(/^\[RedisPubSub\] publish to .* failed \(further failures are not logged until one succeeds\)/)]);
      expect(lines.warn.filter((line) => line.includes('publish to'))).toEqual([]);
    } finally {
      proxy.mode('forward');
      await pubsub.close();
      await proxy.close();
    }
  });
});

describe('options', () => {
  it('are checked once, in the constructor', async () => {
    const { RedisPubSub } = await import('./redis-pubsub.js');
    expect(() => new RedisPubSub({ blockMs: 0 })).toThrow(RangeError);
    expect(() => new RedisPubSub({ maxDeliveryAttempts: 0 })).toThrow(RangeError);
    expect(() => new RedisPubSub({ streamIdleTtlMs: -1 })).toThrow(RangeError);
    expect(() => new RedisPubSub({ maxDeliveryAttempts: Number.POSITIVE_INFINITY })).not.toThrow();
    expect(new RedisPubSub().supportedModes).toEqual(['pull']);
  });
});
