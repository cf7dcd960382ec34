import { inject, injectable, unmanaged } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import { TOKENS } from '../tokens.js';

/** A request let through, or refused with when to try again. */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSec: number };

/**
 * Counts requests per key (a resource); `take` answers whether one more may go now. A port: bound
 * to `TokenBucketLimiter` in one process, `RedisRateLimiter` with `scaleOut`. Asked only when
 * `limits.requestsPerMinute` is set.
 */
export interface RateLimiter {
  take(key: string): RateDecision | Promise<RateDecision>;
}

/** How often buckets that have filled up again are dropped (they hold nothing a new one would not). */
const SWEEP_MS = 60_000;

/**
 * Requests per minute per key, in this process: a token bucket of `perMinute` tokens, refilled
 * continuously (a burst of `perMinute`, then one every `60 / perMinute` s). Idle keys cost nothing
 * after a sweep.
 */
@injectable()
export class TokenBucketLimiter implements RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly perMinute: number;
  private readonly perMs: number;
  private sweeper?: NodeJS.Timeout;

  constructor(
    @inject(TOKENS.Config) { limits }: Pick<ResolvedConfig, 'limits'>,
    @unmanaged() private readonly now: () => number = Date.now,
  ) {
    this.perMinute = limits.requestsPerMinute ?? Infinity;
    this.perMs = this.perMinute / 60_000;
  }

  take(key: string): RateDecision {
    // Started by the first request: a bridge without a rate limit never has a timer for it.
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.perMinute, at: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * this.perMs);
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    return { allowed: false, retryAfterSec: (1 - bucket.tokens) / this.perMs / 1000 };
  }

  stop(): void {
    clearInterval(this.sweeper);
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.at) * this.perMs >= this.perMinute) this.buckets.delete(key);
    }
  }
}
