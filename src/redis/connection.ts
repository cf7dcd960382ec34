import type { RedisClientType } from 'redis';
import { failFastThenReconnect, HANDSHAKE_TIMEOUTS, loadRedis, REDIS_PEER, RedisNotInstalledError, RepeatedFailures, watchConnection } from './pubsub/index.js';
import { consoleLogger, type BridgeLogger } from '../logger.js';
import { isUnavailable } from '../translate/failure.js';
import { errorMessage } from '../text.js';

/** A node-redis client as `createClient()` makes it (RESP3, no modules of its own). */
export type RedisClient = RedisClientType;

/**
 * What the Redis-backed services share: a connection for commands (and publishes), one for
 * subscriptions only (a connection that subscribes is kept out of the command path, so a busy
 * channel never delays a lock), and the prefix every key and channel starts with.
 *
 * @example
 * const redis = await connectRedis('redis://127.0.0.1:6379', 'bridge');
 * const locks = new RedisThreadLocks(redis, config);
 * // at shutdown
 * await redis.close();
 */
export interface RedisConnection {
  client: RedisClient;
  subscriber: RedisClient;
  prefix: string;
  /** Closes both connections, letting commands already sent finish. */
  close(): Promise<void>;
}

/**
 * Opens the command and subscriber connections: the first connect fails at once when Redis is not
 * reachable (`failFastThenReconnect`), then both reconnect by themselves, errors going to `logger`.
 *
 * @example
 * const redis = await connectRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'bridge', config.logger);
 */
export async function connectRedis(url: string, prefix: string, logger: BridgeLogger = consoleLogger): Promise<RedisConnection> {
  const { createClient } = await loadRedis().catch((error: unknown) => {
    // In the bridge's words: its scale-out is what needs it here.
    if (!(error instanceof RedisNotInstalledError)) throw error;
    throw new Error(`redis is not installed; RedisPubSub and the bridge's scale-out (REDIS_URL, createScaleOut) need it: npm install ${REDIS_PEER}`, {
      cause: error.cause,
    });
  });
  const reconnect = failFastThenReconnect();
  let connected = false;
  // Commands fail at once while the connection is down (a 503 to the caller, not a wait), and a
  // connection that stops answering is replaced by its watchdog: see `watchConnection`.
  const client: RedisClient = createClient({ url, disableOfflineQueue: true, socket: { reconnectStrategy: reconnect.strategy, ...HANDSHAKE_TIMEOUTS } });
  const subscriber = client.duplicate();
  // node-redis emits 'error' on every failed (re)connect; unheard, it would crash the process.
  // Redis away is said once per outage, until the connection is ready again.
  for (const [name, c] of [
    ['commands', client],
    ['subscriber', subscriber],
  ] as const) {
    const failures = new RepeatedFailures(isUnavailable);
    c.on('ready', () => failures.succeeded());
    c.on('error', (error: unknown) => {
      const level = connected ? failures.failed(error) : undefined;
      if (level === 'warn') logger.warn(`Redis ${name} connection: ${errorMessage(error)} (Redis is unavailable: not logged again until it is back)`);
      else if (level === 'error') logger.warn(`Redis ${name} connection: ${errorMessage(error)}`);
    });
  }
  const clients = [client, subscriber];
  try {
    await Promise.all(clients.map((c) => c.connect()));
  } catch (error) {
    for (const c of clients) if (c.isOpen) c.destroy();
    throw error;
  }
  connected = true;
  reconnect.connected();
  const watchdogs = [
    watchConnection(client, { onReplaced: (why) => logger.warn(`Redis commands connection replaced: ${why}`) }),
    watchConnection(subscriber, { onReplaced: (why) => logger.warn(`Redis subscriber connection replaced: ${why}`) }),
  ];
  return {
    client,
    subscriber,
    prefix,
    close: async () => {
      for (const watchdog of watchdogs) watchdog.stop();
      await Promise.all(clients.filter((c) => c.isOpen).map((c) => c.close()));
    },
  };
}
