import { describe, expect, it } from 'vitest';
import { feedBase, IDS_PER_MS } from './feed-base.js';

describe('feedBase', () => {
  const now = 1_767_225_600_000; // 2026-01-01, in ms

  it('a thread this process does not remember: the clock, in thousandths of a millisecond', () => {
    expect(feedBase(undefined, now)).toBe(now * IDS_PER_MS);
  });

  it('a remembered last id above the clock base: right after it', () => {
    const remembered = now * IDS_PER_MS + 41;
    expect(feedBase(remembered, now)).toBe(remembered + 1);
  });

  it('a remembered last id below the clock base: the clock', () => {
    expect(feedBase(24, now)).toBe(now * IDS_PER_MS);
  });

  it('grows with the clock, so a restart (nothing remembered) starts above the ids of earlier feeds', () => {
    const earlier = feedBase(undefined, now);
    const handedOut = earlier + 5 * IDS_PER_MS - 1; // fewer than IDS_PER_MS per ms over 5 ms
    expect(feedBase(undefined, now + 5)).toBeGreaterThan(handedOut);
  });

  it('stays a safe integer (16 digits) for the clock of the next two centuries', () => {
    const base = feedBase(undefined, Date.UTC(2250, 0, 1));
    expect(Number.isSafeInteger(base)).toBe(true);
    expect(String(feedBase(undefined, now))).toHaveLength(16);
  });
});
