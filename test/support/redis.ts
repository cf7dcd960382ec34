import { randomUUID } from 'node:crypto';
import type { BridgeLogger, ResolvedConfig } from '../../src/config.js';
import { serviceDown } from '../../scripts/services.js';
import { connectRedis, type RedisConnection } from '../../src/redis/connection.js';

// Helpers for the tests of the Redis services (not part of the bridge itself).

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A logger that keeps quiet: the tests provoke the warnings on purpose. */
export const quietLogger: BridgeLogger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** The config fields the Redis services read. */
export const testConfig = (frontendToolTimeoutMs = 60_000) => ({ frontendToolTimeoutMs, logger: quietLogger }) as ResolvedConfig;

/**
 * Connections to the test Redis (`REDIS_URL`, default local), each standing for one bridge
 * process, all under one random prefix; `cleanup()` deletes that prefix's keys and closes them.
 *
 * @example
 * const redis = testRedis('locks');
 * afterAll(() => redis.cleanup());
 * const a = await redis.connect(); const b = await redis.connect();
 */
export function testRedis(name: string) {
  const prefix = `test:${name}:${randomUUID()}`;
  const opened: RedisConnection[] = [];
  return {
    prefix,
    async connect(): Promise<RedisConnection> {
      const connection = await connectRedis(url, prefix, quietLogger).catch((error: unknown) => {
        throw serviceDown('Redis', url, error);
      });
      opened.push(connection);
      return connection;
    },
    async cleanup(): Promise<void> {
      // Redis already gone (a test stopped it): nothing left to clean.
      const admin = await connectRedis(url, prefix, quietLogger).catch(() => undefined);
      if (admin) {
        for await (const keys of admin.client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 500 })) if (keys.length > 0) await admin.client.unlink(keys);
        opened.push(admin);
      }
      await Promise.all(opened.map((connection) => connection.close()));
    },
  };
}
