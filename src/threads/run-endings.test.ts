import { describe, expect, it } from 'vitest';
import { RunEndings } from './run-endings.js';

describe('RunEndings', () => {
  it('waits for a tracked run to wind down, failed or not, and not for an untracked one', async () => {
    const endings = new RunEndings();
    let end!: () => void;
    endings.track('r1', new Promise<void>((resolve) => (end = resolve)));
    let ended = false;
    const waiting = endings.ended('t1', 'r1', Date.now() + 10_000).then(() => (ended = true));
    await Promise.resolve();
    expect(ended).toBe(false);
    end();
    await waiting;
    expect(ended).toBe(true);
    endings.track('r2', Promise.reject(new Error('failed run')));
    await endings.ended('t1', 'r2', Date.now() + 10_000);
    await endings.ended('t1', 'nobody', Date.now() + 10_000); // at once
  });

  it('gives up at the deadline', async () => {
    const endings = new RunEndings();
    endings.track('r1', new Promise<void>(() => {}));
    const started = Date.now();
    await endings.ended('t1', 'r1', Date.now() + 50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });
});
