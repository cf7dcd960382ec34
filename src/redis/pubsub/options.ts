import type { Event } from '@mastra/core/events';
import type { RedisClient } from './connections.js';
import type { PubSubLogger } from './delivery.js';

/** An event as Mastra hands it to `publish`: no id or time yet. */
export type PublishedEvent = Omit<Event, 'id' | 'createdAt'>;

/** Options of {@link RedisPubSub}; every one has a default. */
export interface RedisPubSubOptions {
  /** Redis URL. Default `redis://127.0.0.1:6379`. Not with `client`. */
  url?: string;
  /**
   * A node-redis client of your own (TLS, credentials…), not connected yet. It becomes the
   * writer, its `duplicate()`s the readers. The pubsub owns it: it connects it on first use and
   * closes it in `close()`; do not share it. Not with `url`.
   */
  client?: RedisClient;
  /** Prefix of every key: topics are `<keyPrefix>:topic:<topic>`, leases `<keyPrefix>:lease:<key>`. Default `mastra`. */
  keyPrefix?: string;
  /** How long a blocking read waits for entries before it is sent again, in ms. Default 1000. */
  blockMs?: number;
  /** Entries kept per topic stream, approximately (`MAXLEN ~`); 0 keeps all. Default 10000. */
  maxStreamLength?: number;
  /**
   * Sliding expiry of a topic's stream, in ms, refreshed by writes to it (a group created on it, a
   * nack's redelivery, and publishes: the first in each window of half the TTL, at most a minute):
   * a stream left unwritten that long is deleted by Redis, entries and groups with it. Mastra
   * clears per-run topics itself, but never the per-thread ones (`agent.thread-stream.*`): set this
   * in production (e.g. 7 days) or they stay forever. Keep it above the longest quiet spell of a
   * live topic. 0 disables it. Default 0.
   */
  streamIdleTtlMs?: number;
  /** How often a group subscription claims entries other consumers left unacked, in ms; 0 never. Default 30000. */
  reclaimIntervalMs?: number;
  /** How long an entry must have been left unacked before it is claimed, in ms (above the longest handling). Default 60000. */
  reclaimIdleMs?: number;
  /** Deliveries of an event at most (the first one included); a nack of the last one drops it. `Infinity` for no cap. Default 5. */
  maxDeliveryAttempts?: number;
  /** Where failures are logged (a failed write, a dropped event…). Default: `console` for warnings and errors. */
  logger?: PubSubLogger;
  /**
   * Which failures are Redis being away (unreachable, closed, offline) rather than a defect: a
   * publish that fails so is logged at `warn`, once until a publish succeeds again (any other
   * failure at `error`, likewise once); a connection's error or a failed read likewise once until
   * it is back, not at every attempt. Default: none is (a failed publish is logged at `error`, and
   * every connection error and failed read).
   */
  isOutage?: (error: unknown) => boolean;
  /**
   * Where a subscription that names no `startFrom` starts, by topic. Mastra subscribes to a
   * thread's topic (`agent.thread-stream.*`) without one, and from `earliest` a new follower is
   * handed the thread's finished runs again as if live: `'latest'` for those avoids it.
   * Default: `earliest` for every topic (the PubSub contract).
   */
  defaultStartFrom?: (topic: string) => 'earliest' | 'latest';
  /**
   * Which published events stay in this process, as if published `localOnly`: delivered to this
   * process's subscribers, never written to Redis. Called on every publish (every chunk of a run):
   * keep it to a few comparisons. Default: none.
   */
  keepLocal?: (topic: string, event: PublishedEvent) => boolean;
  /**
   * Which published events (written to Redis for the other processes) this process's own
   * subscribers without a group get at once, as from a pub/sub in one process, rather than when
   * the reader reads them back (they are not handed over again then). For topics where a process
   * acts on its own events and must not wait on a read: Mastra's thread topics, where a run's
   * registration tells the process's own thread subscribers that the run is local. Default: none.
   */
  deliverAtOnce?: (topic: string, event: PublishedEvent) => boolean;
  /**
   * Told of every event this process publishes, before it is sent (on every chunk of a run: keep
   * it cheap). When it answers a promise, the publish waits for it (and Mastra, which awaits a
   * run's registration before the run streams, with it). Default: nobody.
   */
  onPublish?: (topic: string, event: PublishedEvent) => void | Promise<void>;
  /**
   * Told of every event read from Redis for this instance's subscribers without a group (once per
   * event, however many subscribers; not its own events on `deliverAtOnce` topics, handed over at
   * publish). Keep it cheap. Default: nobody.
   */
  onReceive?: (topic: string, event: Event) => void;
  /**
   * Whether this instance keeps a heartbeat (`<keyPrefix>:alive:<instance>`, renewed every second
   * from a thread of its own, from the first lease it takes) and names itself beside each lease it
   * takes: a lease whose holder's heartbeat is gone (the process died) is free at once, and
   * `reclaimFromGone` lets the others end its runs within seconds, not at the lease's TTL.
   * Only with `url` (a `client` of your own cannot be copied to that thread). Default `true`.
   */
  heartbeat?: boolean;
}

export type ResolvedOptions = Required<Omit<RedisPubSubOptions, 'url' | 'client'>> & { source: { url: string } | { client: RedisClient } };

const consoleLogger: PubSubLogger = {
  warn: (message, ...args) => console.warn(message, ...args),
  error: (message, ...args) => console.error(message, ...args),
};

/** Every option of {@link RedisPubSub} with its default, checked: a value out of range is a `RangeError` at construction. */
export function resolveOptions(options: RedisPubSubOptions): ResolvedOptions {
  if (options.url !== undefined && options.client !== undefined) throw new TypeError('RedisPubSub: give either url or client, not both');
  const resolved: ResolvedOptions = {
    source: options.client ? { client: options.client } : { url: options.url ?? 'redis://127.0.0.1:6379' },
    keyPrefix: options.keyPrefix ?? 'mastra',
    blockMs: options.blockMs ?? 1000,
    maxStreamLength: options.maxStreamLength ?? 10_000,
    streamIdleTtlMs: options.streamIdleTtlMs ?? 0,
    reclaimIntervalMs: options.reclaimIntervalMs ?? 30_000,
    reclaimIdleMs: options.reclaimIdleMs ?? 60_000,
    maxDeliveryAttempts: options.maxDeliveryAttempts ?? 5,
    logger: options.logger ?? consoleLogger,
    isOutage: options.isOutage ?? (() => false),
    defaultStartFrom: options.defaultStartFrom ?? (() => 'earliest'),
    keepLocal: options.keepLocal ?? (() => false),
    deliverAtOnce: options.deliverAtOnce ?? (() => false),
    onPublish: options.onPublish ?? (() => {}),
    onReceive: options.onReceive ?? (() => {}),
    heartbeat: options.heartbeat ?? true,
  };
  for (const name of ['blockMs', 'maxStreamLength', 'streamIdleTtlMs', 'reclaimIntervalMs', 'reclaimIdleMs'] as const) {
    const value = resolved[name];
    // blockMs 0 would be BLOCK 0: wait forever.
    const least = name === 'blockMs' ? 1 : 0;
    if (!Number.isSafeInteger(value) || value < least) throw new RangeError(`RedisPubSub: ${name} must be a whole number ≥ ${least}, got ${value}`);
  }
  const attempts = resolved.maxDeliveryAttempts;
  if (attempts !== Number.POSITIVE_INFINITY && (!Number.isSafeInteger(attempts) || attempts < 1)) {
    throw new RangeError(`RedisPubSub: maxDeliveryAttempts must be a whole number ≥ 1 or Infinity, got ${attempts}`);
  }
  if (!resolved.keyPrefix) throw new RangeError('RedisPubSub: keyPrefix must not be empty');
  return resolved;
}
