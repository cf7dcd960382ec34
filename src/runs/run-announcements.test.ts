import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RunAnnouncements } from './run-announcements.js';

describe('RunAnnouncements', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const announcement = { messages: [{ id: 'u1', role: 'user' as const, content: 'hi' }] };

  it('keeps a run\'s announcement while it runs and for 30 s after it ends, for followers that read late', () => {
    const runs = new RunAnnouncements();
    const done = runs.announce('r1', announcement);
    expect(runs.get('r1')).toBe(announcement);
    vi.advanceTimersByTime(60_000);
    expect(runs.get('r1')).toBe(announcement);
    done();
    vi.advanceTimersByTime(29_999);
    expect(runs.get('r1')).toBe(announcement);
    vi.advanceTimersByTime(1);
    expect(runs.get('r1')).toBeUndefined();
    expect(runs.get('never')).toBeUndefined();
  });

  it('does not drop a newer announcement under the same run id', () => {
    const runs = new RunAnnouncements();
    runs.announce('r1', announcement)();
    const newer = { messages: [] };
    runs.announce('r1', newer);
    vi.advanceTimersByTime(30_000);
    expect(runs.get('r1')).toBe(newer);
  });
});
