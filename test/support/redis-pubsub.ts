import { randomUUID } from 'node:crypto';
import type { Event, EventCallback } from '@mastra/core/events';
import { createClient } from 'redis';
import { serviceDown } from '../../scripts/services.js';
import type { RedisClient } from '../../src/redis/pubsub/connections.js';
import type { PubSubLogger } from '../../src/redis/pubsub/delivery.js';
import { RedisPubSub, type RedisPubSubOptions } from '../../src/redis/pubsub/redis-pubsub.js';

// Helpers for the tests of RedisPubSub (not part of it).

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Keeps quiet: the tests provoke warnings on purpose. */
export const quietLogger: PubSubLogger = { debug: () => {}, warn: () => {}, error: () => {} };

/**
 * A test file's corner of the test Redis: a random key prefix, the RedisPubSubs made under it
 * (each standing for one process), and a plain connection to look at the keys. `cleanup()`
 * closes them all and deletes the prefix's keys.
 *
 * @example
 * const redis = pubsubTestbed('fanout');
 * beforeAll(() => redis.connect());
 * afterAll(() => redis.cleanup());
 * const pubsub = redis.pubsub({ blockMs: 200 });
 */
export function pubsubTestbed(name: string) {
  const prefix = `test:${name}:${randomUUID()}`;
  const made: RedisPubSub[] = [];
  let inspect: RedisClient | undefined;
  return {
    prefix,
    /** Connects the inspecting client; fails at once, saying how to start Redis, when it is not there. */
    async connect(): Promise<RedisClient> {
      const client: RedisClient = createClient({ url: REDIS_URL, socket: { reconnectStrategy: false } });
      client.on('error', () => {});
      await client.connect().catch((error: unknown) => {
        throw serviceDown('Redis', REDIS_URL, error);
      });
      inspect = client;
      return client;
    },
    get inspect(): RedisClient {
      if (!inspect) throw new Error('call connect() first');
      return inspect;
    },
    pubsub(options: RedisPubSubOptions = {}): RedisPubSub {
      const pubsub = new RedisPubSub({ url: REDIS_URL, keyPrefix: prefix, logger: quietLogger, ...options });
      made.push(pubsub);
      return pubsub;
    },
    topicKey: (topic: string) => `${prefix}:topic:${topic}`,
    async cleanup(): Promise<void> {
      await Promise.all(made.map((pubsub) => pubsub.close()));
      if (!inspect) return;
      for await (const keys of inspect.scanIterator({ MATCH: `${prefix}:*`, COUNT: 500 })) if (keys.length > 0) await inspect.unlink(keys);
      await inspect.close();
    },
  };
}

/** A callback that keeps what it is given and acks it (unless told otherwise), and a way to wait for it. */
export function recorder(settle: 'ack' | 'nack' | 'none' = 'ack') {
  const events: Event[] = [];
  let waiters: Array<{ done: () => boolean; resolve: () => void }> = [];
  const cb: EventCallback = async (event, ack, nack) => {
    events.push(event);
    waiters = waiters.filter((w) => (w.done() ? (w.resolve(), false) : true));
    if (settle === 'ack') await ack?.();
    if (settle === 'nack') await nack?.();
  };
  const until = (done: () => boolean) => (done() ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ done, resolve })));
  return {
    cb,
    events,
    types: () => events.map((e) => e.type),
    /** Resolves once `n` events arrived. */
    received: (n: number) => until(() => events.length >= n),
    until,
  };
}

/** An event to publish: type and runId, with `data`. */
export const event = (type: string, data: unknown = {}) => ({ type, runId: 'run-1', data });
