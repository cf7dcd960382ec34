import type { LeaseProvider, PubSub } from '@mastra/core/events';
import type { SharedBindings } from '../config.js';
import { consoleLogger, redactingLogger, type BridgeLogger } from '../logger.js';
import { redisBindings } from './bindings.js';
import { connectRedis, type RedisConnection } from './connection.js';
import { RedisPubSub } from './pubsub/index.js';
import type { LocalLeases } from './thread-holders.js';
import { keepsRunChunksLocal, LocalThreadRuns, THREAD_TOPIC } from './thread-runs.js';
import { StaleLeases } from './stale-leases.js';
import { GoneProcessRuns } from './gone-process-runs.js';
import { isUnavailable } from '../translate/failure.js';

/**
 * What several bridge processes share on one Redis: Mastra's pub/sub and leases (`pubsub`, for
 * `new Mastra({ pubsub })`), and the bridge's own state (`redis`: thread event logs, frontend
 * tool calls, locks, run announcements, thread control). Made by `createScaleOut`; passed to
 * `createBridge({ scaleOut })`.
 *
 * @example
 * const scaleOut = await createScaleOut({ url: process.env.REDIS_URL! });
 * const mastra = new Mastra({ agents, storage: new PostgresStore({ id: 'app', connectionString }), pubsub: scaleOut.pubsub });
 * const bridge = createBridge({ scaleOut });
 * // at shutdown, after the server closed:
 * await scaleOut.close();
 */
export interface ScaleOut extends SharedBindings {
  pubsub: PubSub & LeaseProvider & LocalLeases;
  redis: RedisConnection;
  close(): Promise<void>;
}

const THREAD_TOPIC_IDLE_MS = 7 * 24 * 3600 * 1000;

export interface ScaleOutOptions {
  /** `redis://` or `rediss://`. */
  url: string;
  /** What every key and channel starts with; processes that share threads share it. Default `mastra-agui-bridge`. */
  prefix?: string;
  logger?: BridgeLogger;
}

/**
 * Connects to Redis for several bridge processes: Mastra's pub/sub and leases under
 * `<prefix>:mastra`, the bridge's state under `<prefix>`. Fails at once when Redis is not reachable.
 *
 * @example
 * const scaleOut = await createScaleOut({ url: 'redis://127.0.0.1:6379' });
 */
export async function createScaleOut({ url, prefix = 'mastra-agui-bridge', logger: given = consoleLogger }: ScaleOutOptions): Promise<ScaleOut> {
  const logger = redactingLogger(given);
  const redis = await connectRedis(url, prefix, logger);
  const runs = new LocalThreadRuns();
  // Made before the pub/sub it watches, which tells it of the runs of other processes as it reads them.
  const goneRuns = new GoneProcessRuns(() => pubsub, logger);
  const pubsub: RedisPubSub = new RedisPubSub({
    url,
    keyPrefix: `${prefix}:mastra`,
    logger,
    // Redis away is an outage (logged at warn, once), as the bridge tells it everywhere else.
    isOutage: isUnavailable,
    // A thread's topic is never cleared by Mastra: a week without a write drops it.
    streamIdleTtlMs: THREAD_TOPIC_IDLE_MS,
    // A new follower of a thread starts at what happens next, not at its finished runs.
    defaultStartFrom: (topic) => (topic.startsWith(THREAD_TOPIC) ? 'latest' : 'earliest'),
    // A run's chunks stay in its process, which writes them into the thread's log for the others.
    keepLocal: keepsRunChunksLocal,
    // The rest of a thread's topic reaches this process's own thread subscribers at once: a run's
    // registration must find its run still here (a short run is over before a read comes back).
    deliverAtOnce: (topic) => topic.startsWith(THREAD_TOPIC),
    onPublish: (topic, event) => runs.published(topic, event),
    // A run of another process that died is ended within seconds, not at its lease's TTL.
    onReceive: (topic, event) => goneRuns.received(topic, event),
  });
  const staleLeases = new StaleLeases(pubsub, runs, logger);
  staleLeases.start();
  return {
    pubsub,
    redis,
    bindings: redisBindings(redis, pubsub, runs, goneRuns),
    close: async () => {
      staleLeases.stop();
      goneRuns.stop();
      await pubsub.close();
      await redis.close();
    },
  };
}
