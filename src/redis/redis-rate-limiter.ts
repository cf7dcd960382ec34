import { inject, injectable } from 'inversify';
import { LuaScript } from './pubsub/index.js';
import type { ResolvedConfig } from '../config.js';
import { TOKENS } from '../tokens.js';
import type { RateDecision, RateLimiter } from '../limits/rate-limiter.js';
import type { RedisConnection } from './connection.js';
import { redisKeys, type RedisKeys } from './keys.js';

/** Counts one request in its window. KEYS: the window's key. ARGV: window ms. Answers [count, ms left]. */
const COUNT = new LuaScript(`
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {count, redis.call('PTTL', KEYS[1])}
`);

const WINDOW_MS = 60_000;

/**
 * Requests per minute per key, shared by every process on one Redis: a fixed one-minute window (one
 * `INCR` per request, in a script with its expiry). A key may get up to twice `perMinute` across a
 * window boundary: the price of one round trip and one key per resource and minute.
 */
@injectable()
export class RedisRateLimiter implements RateLimiter {
  private readonly keys: RedisKeys;
  private readonly perMinute: number;

  constructor(
    @inject(TOKENS.Redis) private readonly redis: RedisConnection,
    @inject(TOKENS.Config) { limits }: Pick<ResolvedConfig, 'limits'>,
  ) {
    this.keys = redisKeys(redis.prefix);
    this.perMinute = limits.requestsPerMinute ?? Infinity;
  }

  async take(key: string): Promise<RateDecision> {
    const window = Math.floor(Date.now() / WINDOW_MS);
    const [count, leftMs] = (await COUNT.run(this.redis.client, [this.keys.rate(key, window)], [String(WINDOW_MS)])) as [number, number];
    return count <= this.perMinute ? { allowed: true } : { allowed: false, retryAfterSec: Math.max(leftMs, 0) / 1000 };
  }
}
