import { describe, expect, it } from 'vitest';
import { GIVE_UP_AFTER_MS, retryDelayMs } from './backoff.js';

describe('retryDelayMs', () => {
  it('the first retry comes within 5 s, each later one up to twice as late, never past an hour', () => {
    expect(retryDelayMs(1, () => 0)).toBe(1_000);
    expect(retryDelayMs(1, () => 1)).toBe(2_000);
    expect(retryDelayMs(2, () => 1)).toBe(4_000);
    expect(retryDelayMs(5, () => 0.5)).toBe(24_000);
    expect(retryDelayMs(40, () => 1)).toBe(3_600_000);
  });

  it('keeps trying for about a day: the waits up to the give-up add to more than 20 attempts', () => {
    let elapsed = 0;
    let attempts = 0;
    while (elapsed <= GIVE_UP_AFTER_MS) elapsed += retryDelayMs(++attempts, () => 1);
    expect(attempts).toBeGreaterThan(20);
  });
});
