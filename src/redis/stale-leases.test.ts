import { describe, expect, it } from 'vitest';
import { quietLogger } from '../../test/support/redis.js';
import { StaleLeases } from './stale-leases.js';
import { LocalThreadRuns, THREAD_TOPIC } from './thread-runs.js';

/** Leases held in this process, as the Redis pub/sub keeps them; `released` records what was let go. */
function leasesOf(held: Array<{ key: string; owner: string }>) {
  const released: string[] = [];
  return {
    released,
    heldLeases: () => held.filter(({ owner }) => !released.includes(owner)),
    releaseLease: async (_key: string, owner: string) => void released.push(owner),
  };
}

const key = (thread: string) => `alice\0${thread}`;
const topic = (thread: string) => `${THREAD_TOPIC}${encodeURIComponent(key(thread))}`;
const publish = (runs: LocalThreadRuns, thread: string, type: string, runId: string) => runs.published(topic(thread), { type, runId, data: { type, runId } });

describe('StaleLeases', () => {
  it('lets go of a lease a run still holds 5 s after it was over; not before, not a suspended run’s, not a run never over', async () => {
    const runs = new LocalThreadRuns();
    const leases = leasesOf([
      { key: key('t-over'), owner: 'r-over' },
      { key: key('t-suspended'), owner: 'r-suspended' },
      { key: key('t-running'), owner: 'r-running' },
      { key: key('t-turn'), owner: 'r-turn' }, // a /run's turn, taken before Mastra registers the run
    ]);
    for (const [thread, runId] of [
      ['t-over', 'r-over'],
      ['t-suspended', 'r-suspended'],
      ['t-running', 'r-running'],
    ])
      await publish(runs, thread, 'run-registered', runId);
    await publish(runs, 't-over', 'run-completed', 'r-over');
    await publish(runs, 't-suspended', 'run-suspended', 'r-suspended');
    const over = runs.overSince('r-over')!;
    const watch = new StaleLeases(leases, runs, quietLogger);

    await watch.check(over + 4_999);
    expect(leases.released).toEqual([]);
    await watch.check(over + 5_000);
    expect(leases.released).toEqual(['r-over']);
    await watch.check(over + 60_000);
    expect(leases.released).toEqual(['r-over']);
  });

  it('a run that failed is over; a run never seen is not', async () => {
    const runs = new LocalThreadRuns();
    await publish(runs, 't', 'run-registered', 'r1');
    await publish(runs, 't', 'run-failed', 'r1');
    expect(runs.overSince('r1')).toBeTypeOf('number');
    expect(runs.overSince('r2')).toBeUndefined();
  });
});
