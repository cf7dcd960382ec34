import type { LeaseProvider, PubSub } from '@mastra/core/events';
import type { SharedBindings } from '../config.js';
import { consoleLogger, redactingLogger, type BridgeLogger } from '../logger.js';
import { redisBindings } from './bindings.js';
import { connectRedis, type RedisConnection } from './connection.js';
import { RedisPubSub } from './pubsub/index.js';
import type { LocalLeases } from './thread-control.js';

/**
 * What several bridge processes share on one Redis: Mastra's pub/sub and leases (`pubsub`, for
 * `new Mastra({ pubsub })`), and the bridge's own state (`redis`: thread event logs, frontend
 * tool calls, locks, run announcements, thread control). Made by `createScaleOut`; passed to
 * `createBridge({ scaleOut })`.
 *
 * @example
 * const scaleOut = await createScaleOut({ url: process.env.REDIS_URL });
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

/** Mastra's per-thread topics. */
const THREAD_TOPIC = 'agent.thread-stream.';
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
  const pubsub = new RedisPubSub({
    url,
    keyPrefix: `${prefix}:mastra`,
    logger,
    // A thread's topic is never cleared by Mastra: a week without a write drops it.
    streamIdleTtlMs: THREAD_TOPIC_IDLE_MS,
    // A new follower of a thread starts at what happens next, not at its finished runs.
    defaultStartFrom: (topic) => (topic.startsWith(THREAD_TOPIC) ? 'latest' : 'earliest'),
  });
  return {
    pubsub,
    redis,
    bindings: redisBindings(redis, pubsub),
    close: async () => {
      await pubsub.close();
      await redis.close();
    },
  };
}
