import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RedisClient } from './connections.js';
import { IdleExpiry } from './idle-expiry.js';

/** A writer that only counts its PEXPIREs. */
function writer() {
  const pExpire = vi.fn(async () => 1);
  return { client: { pExpire } as unknown as RedisClient, pExpire };
}

describe('IdleExpiry', () => {
  afterEach(() => vi.useRealTimers());

  it('sets a key’s TTL once per window, again in the next one', () => {
    vi.useFakeTimers();
    const expiry = new IdleExpiry(10_000);
    const { client, pExpire } = writer();
    for (let i = 0; i < 100; i++) void expiry.touch(client, 'a');
    void expiry.touch(client, 'b');
    expect(pExpire.mock.calls).toEqual([
      ['a', 10_000],
      ['b', 10_000],
    ]);
    vi.advanceTimersByTime(5_000); // the window: half the TTL
    void expiry.touch(client, 'a');
    expect(pExpire).toHaveBeenCalledTimes(3);
    expiry.stop();
  });

  it('the window is at most a minute, whatever the TTL', () => {
    vi.useFakeTimers();
    const expiry = new IdleExpiry(7 * 24 * 3600_000);
    const { client, pExpire } = writer();
    void expiry.touch(client, 'a');
    vi.advanceTimersByTime(59_999);
    void expiry.touch(client, 'a');
    expect(pExpire).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1);
    void expiry.touch(client, 'a');
    expect(pExpire).toHaveBeenCalledTimes(2);
    expiry.stop();
  });

  it('a forgotten key (its stream deleted) is set again at its next write', () => {
    const expiry = new IdleExpiry(10_000);
    const { client, pExpire } = writer();
    void expiry.touch(client, 'a');
    expiry.forget('a');
    void expiry.touch(client, 'a');
    expect(pExpire).toHaveBeenCalledTimes(2);
    expiry.stop();
  });

  it('a TTL of 0 sets nothing', () => {
    const expiry = new IdleExpiry(0);
    const { client, pExpire } = writer();
    expect(expiry.touch(client, 'a')).toBeUndefined();
    expect(pExpire).not.toHaveBeenCalled();
  });
});
