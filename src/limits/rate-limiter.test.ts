import { describe, expect, it } from 'vitest';
import { TokenBucketLimiter } from './rate-limiter.js';

const perMinute = (requestsPerMinute: number) => ({ limits: { requestsPerMinute } });

describe('TokenBucketLimiter', () => {
  it('lets a burst of perMinute through per key, then refuses with when the next token comes', () => {
    let now = 0;
    const limiter = new TokenBucketLimiter(perMinute(60), () => now);
    for (let i = 0; i < 60; i++) expect(limiter.take('a')).toEqual({ allowed: true });
    expect(limiter.take('a')).toEqual({ allowed: false, retryAfterSec: 1 });
    expect(limiter.take('b')).toEqual({ allowed: true });
    now += 500;
    expect(limiter.take('a')).toMatchObject({ allowed: false, retryAfterSec: 0.5 });
    now += 500;
    expect(limiter.take('a')).toEqual({ allowed: true });
    limiter.stop();
  });

  it('refills up to perMinute, never beyond', () => {
    let now = 0;
    const limiter = new TokenBucketLimiter(perMinute(2), () => now);
    limiter.take('a');
    limiter.take('a');
    now += 10 * 60_000;
    expect(limiter.take('a').allowed).toBe(true);
    expect(limiter.take('a').allowed).toBe(true);
    expect(limiter.take('a').allowed).toBe(false);
    limiter.stop();
  });
});
