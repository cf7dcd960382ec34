import type { Event } from '@mastra/core/events';
import type { LeasedRun } from './pubsub/index.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { consoleLogger } from '../logger.js';
import { GoneProcessRuns, type InstanceLeases } from './gone-process-runs.js';
import type { PublishedEvent } from './pubsub/index.js';
import { THREAD_TOPIC } from './thread-runs.js';

const topicOf = (thread: string) => `${THREAD_TOPIC}${encodeURIComponent(`user\0${thread}`)}`;
const event = (type: string, runId: string, data: Record<string, unknown> = {}) => ({ type, runId, data: { type, runId, ...data } }) as unknown as Event;

/** Leases as Redis would answer them: who holds which run, and which instances beat. */
function fakeLeases() {
  const holders = new Map<string, string | null>();
  const alive = new Set<string>(['me', 'b']);
  const published: Array<{ topic: string; event: PublishedEvent }> = [];
  const reclaimed = new Set<string>();
  const leases: InstanceLeases = {
    instanceId: 'me',
    leaseHolders: async (runs: readonly LeasedRun[]) => runs.map(({ owner }) => holders.get(owner)),
    goneInstances: async (ids) => ids.filter((id) => !alive.has(id)),
    reclaimFromGone: async (_instance, runs) => runs.map((r) => r.owner).filter((id) => !reclaimed.has(id) && reclaimed.add(id)),
    publish: async (topic, e) => void published.push({ topic, event: e }),
  };
  return { leases, holders, alive, published, reclaimed };
}

describe('GoneProcessRuns', () => {
  let fake: ReturnType<typeof fakeLeases>;
  let watch: GoneProcessRuns;
  beforeEach(() => {
    vi.useFakeTimers();
    fake = fakeLeases();
    watch = new GoneProcessRuns(() => fake.leases, { ...consoleLogger, warn: () => {} });
  });
  afterEach(() => {
    watch.stop();
    vi.useRealTimers();
  });

  it('ends the run of a process whose heartbeat is gone: Mastra’s run-failed with its stream id, on its thread’s topic, once', async () => {
    fake.holders.set('run-1', 'b');
    watch.received(topicOf('t1'), event('run-registered', 'run-1', { streamId: 'stream-1' }));
    await vi.advanceTimersByTimeAsync(600);
    expect(fake.published).toEqual([]);

    fake.alive.delete('b');
    await vi.advanceTimersByTimeAsync(600);
    expect(fake.published).toEqual([
      {
        topic: topicOf('t1'),
        event: {
          type: 'run-failed',
          runId: 'run-1',
          data: {
            type: 'run-failed',
            runId: 'run-1',
            streamId: 'stream-1',
            error: expect.stringContaining('lost its lease before publishing a terminal event'),
          },
        },
      },
    ]);
    await vi.advanceTimersByTimeAsync(2000);
    expect(fake.published).toHaveLength(1);
  });

  it('leaves alone a run that ended, its own runs, and runs with no holder named', async () => {
    fake.holders.set('run-ended', 'b');
    fake.holders.set('run-own', 'me');
    fake.holders.set('run-plain', null);
    for (const runId of ['run-ended', 'run-own', 'run-plain']) watch.received(topicOf(runId), event('run-registered', runId, { streamId: runId }));
    watch.received(topicOf('run-ended'), event('run-completed', 'run-ended'));
    await vi.advanceTimersByTimeAsync(600);
    fake.alive.clear();
    await vi.advanceTimersByTimeAsync(2000);
    expect(fake.published).toEqual([]);
  });

  it('publishes nothing for a run another process found gone first', async () => {
    fake.holders.set('run-2', 'b');
    fake.reclaimed.add('run-2');
    watch.received(topicOf('t2'), event('run-registered', 'run-2', { streamId: 's' }));
    fake.alive.delete('b');
    await vi.advanceTimersByTimeAsync(2000);
    expect(fake.published).toEqual([]);
  });

  it('a workflow run (no Mastra run): tells each watcher when its process is gone, even one not first to find it, and publishes nothing', async () => {
    fake.holders.set('wf-run', 'b');
    fake.reclaimed.add('wf-run'); // another process reclaimed it first
    const gone = vi.fn();
    watch.whenHolderGone('user\0t3', 'wf-run', gone);
    await vi.advanceTimersByTimeAsync(600);
    expect(gone).not.toHaveBeenCalled();

    fake.alive.delete('b');
    await vi.advanceTimersByTimeAsync(600);
    expect(gone).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(2000);
    expect(gone).toHaveBeenCalledTimes(1);
    expect(fake.published).toEqual([]);
  });

  it('forgets a workflow run that let its lease go, so its process stopping later tells no one', async () => {
    fake.holders.set('wf-done', 'b');
    const gone = vi.fn();
    watch.whenHolderGone('user\0t4', 'wf-done', gone);
    await vi.advanceTimersByTimeAsync(600);
    fake.holders.delete('wf-done'); // the run ended and released the lease
    await vi.advanceTimersByTimeAsync(20 * 500);
    fake.alive.delete('b');
    await vi.advanceTimersByTimeAsync(2000);
    expect(gone).not.toHaveBeenCalled();
  });
});
