import { describe, expect, it } from 'vitest';
import { keepsRunChunksLocal, LocalThreadRuns, THREAD_TOPIC } from './thread-runs.js';

const topic = `${THREAD_TOPIC}${encodeURIComponent('alice\0trip-7')}`;
const part = (type: string) => ({ type: 'stream-part', runId: 'r1', data: { type: 'stream-part', part: { type } } });

describe('keepsRunChunksLocal', () => {
  it('keeps a run’s chunks in its process, but for the ones that end it', () => {
    expect(keepsRunChunksLocal(topic, part('text-delta'))).toBe(true);
    expect(keepsRunChunksLocal(topic, part('start'))).toBe(true);
    for (const end of ['finish', 'error', 'abort', 'tripwire']) expect(keepsRunChunksLocal(topic, part(end))).toBe(false);
  });

  it('lets Mastra’s control events and other topics through', () => {
    expect(keepsRunChunksLocal(topic, { type: 'run-registered', runId: 'r1', data: {} })).toBe(false);
    expect(keepsRunChunksLocal(topic, { type: 'signal-enqueued', runId: 'r1', data: {} })).toBe(false);
    expect(keepsRunChunksLocal('background-tasks', part('text-delta'))).toBe(false);
  });
});

describe('LocalThreadRuns', () => {
  it('knows the threads with a run of this process, from its registration to its end, and tells of each run', async () => {
    const runs = new LocalThreadRuns();
    const told: string[] = [];
    runs.onRun(async (threadKey) => void told.push(threadKey));
    await runs.published(topic, { type: 'run-registered', runId: 'r1', data: {} });
    await runs.published(topic, part('text-delta'));
    expect(runs.running('alice\0trip-7')).toBe(true);
    expect(told).toEqual(['alice\0trip-7']);
    await runs.published(topic, { type: 'run-suspended', runId: 'r1', data: {} });
    expect(runs.running('alice\0trip-7')).toBe(false);
    await runs.published(topic, { type: 'run-registered', runId: 'r2', data: {} });
    await runs.published(topic, { type: 'run-completed', runId: 'r2', data: {} });
    expect(runs.running('alice\0trip-7')).toBe(false);
    expect(told).toHaveLength(2);
  });

  it('holds a run’s registration until its listeners are done: the run streams after that', async () => {
    const runs = new LocalThreadRuns();
    let release = () => {};
    runs.onRun(() => new Promise<void>((resolve) => (release = resolve)));
    let registered = false;
    const publishing = runs.published(topic, { type: 'run-registered', runId: 'r1', data: {} })!.then(() => (registered = true));
    await Promise.resolve();
    expect(registered).toBe(false);
    release();
    await publishing;
    expect(registered).toBe(true);
    expect(runs.published(topic, part('text-delta'))).toBeUndefined();
  });
});
