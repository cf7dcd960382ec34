import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InProcessRunAnnouncements } from './run-announcements.js';

describe('InProcessRunAnnouncements', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const announcement = { messages: [{ id: 'u1', role: 'user' as const, content: 'hi' }] };

  it("keeps a run's announcement while it runs and for 30 s after it ends, for followers that read late", async () => {
    const runs = new InProcessRunAnnouncements();
    await runs.announce('r1', announcement);
    expect(await runs.get('r1')).toBe(announcement);
    vi.advanceTimersByTime(60_000);
    expect(await runs.get('r1')).toBe(announcement);
    runs.ended('r1');
    vi.advanceTimersByTime(29_999);
    expect(await runs.get('r1')).toBe(announcement);
    vi.advanceTimersByTime(1);
    expect(await runs.get('r1')).toBeUndefined();
    expect(await runs.get('never')).toBeUndefined();
  });

  it('does not drop a newer announcement under the same run id', async () => {
    const runs = new InProcessRunAnnouncements();
    await runs.announce('r1', announcement);
    runs.ended('r1');
    const newer = { messages: [] };
    await runs.announce('r1', newer);
    vi.advanceTimersByTime(30_000);
    expect(await runs.get('r1')).toBe(newer);
  });
});
