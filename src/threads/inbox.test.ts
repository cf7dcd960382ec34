import { Mastra } from '@mastra/core';
import { InMemoryStore } from '@mastra/core/storage';
import { describe, expect, it } from 'vitest';
import { InProcessThreadLocks } from './thread-locks.js';
import { MastraInbox, type InboxEntry } from './inbox.js';

const entry = (id: string, threadId: string, acceptedAt: number): InboxEntry => ({
  id,
  kind: 'send',
  threadId,
  resourceId: 'u',
  agentId: 'demo',
  message: `message ${id}`,
  acceptedAt,
});

const inboxOn = (storage: InMemoryStore) => new MastraInbox(new Mastra({ storage, logger: false }), new InProcessThreadLocks());

/** The index of threads with entries, as stored. */
async function listed(storage: InMemoryStore): Promise<unknown> {
  const state = await new Mastra({ storage, logger: false }).getStorage()!.getStore('threadState');
  return state!.getState({ threadId: 'mastra-agui-bridge', type: 'mastra-agui-bridge.inbox-threads' });
}

describe('MastraInbox', () => {
  it('a storage whose first init failed (another process creating its tables) is read again by the next call', async () => {
    class FirstInitFails extends InMemoryStore {
      private failures = 1;
      override async init(): Promise<void> {
        if (this.failures-- > 0) throw new Error('relation "idx_om_lookup_key" already exists');
        return super.init();
      }
    }
    const inbox = inboxOn(new FirstInitFails());
    await expect(inbox.pending()).rejects.toThrow(/already exists/);
    await inbox.add(entry('a', 't1', 1));
    expect((await inbox.pending()).map((e) => e.id)).toEqual(['a']);
  });

  it('keeps entries in Mastra storage, across instances, oldest first over every thread', async () => {
    const storage = new InMemoryStore();
    const inbox = inboxOn(storage);
    await Promise.all([inbox.add(entry('b', 't1', 2)), inbox.add(entry('a', 't2', 1)), inbox.add(entry('c', 't1', 3))]);
    // Another instance on the same storage (a restarted process) sees them all.
    expect((await inboxOn(storage).pending()).map((e) => e.id)).toEqual(['a', 'b', 'c']);
  });

  it('removes entries; a thread with none left leaves the index with its next write', async () => {
    const storage = new InMemoryStore();
    const inbox = inboxOn(storage);
    await inbox.add(entry('a', 't1', 1));
    await inbox.add(entry('b', 't1', 2));
    await inbox.add(entry('c', 't2', 3));
    await inbox.remove('t1', ['a', 'unknown']);
    expect((await inbox.pending()).map((e) => e.id)).toEqual(['b', 'c']);
    await inbox.remove('t1', ['b']);
    await inbox.remove('t2', ['c']);
    expect(await inbox.pending()).toEqual([]);
    // A run's end does not write the index: the emptied threads go when the next run's entry is listed.
    expect(await listed(storage)).toEqual(['t1', 't2']);
    await inbox.add(entry('d', 't3', 4));
    expect(await listed(storage)).toEqual(['t3']);
  });

  it('an emptied thread that has an entry again by the next index write stays listed', async () => {
    const storage = new InMemoryStore();
    const inbox = inboxOn(storage);
    await inbox.add(entry('a', 't1', 1));
    await inbox.remove('t1', ['a']);
    // Another process (here another instance) gives t1 an entry: t1 had one already, so its index change is a no-op.
    await inboxOn(storage).add(entry('b', 't1', 2));
    await inbox.add(entry('c', 't2', 3));
    expect(await listed(storage)).toEqual(['t1', 't2']);
    expect((await inboxOn(storage).pending()).map((e) => e.id)).toEqual(['b', 'c']);
  });

  it('a restarted process lets go of the listed threads it finds empty with its next write', async () => {
    const storage = new InMemoryStore();
    const before = inboxOn(storage);
    await before.add(entry('a', 't1', 1));
    await before.remove('t1', ['a']);
    const after = inboxOn(storage);
    expect(await after.pending()).toEqual([]);
    await after.add(entry('b', 't2', 2));
    expect(await listed(storage)).toEqual(['t2']);
  });

  it('many threads at once: their index changes share writes, and none is lost; a failed write fails only its own callers', async () => {
    const storage = new InMemoryStore();
    const inbox = inboxOn(storage);
    const state = (await new Mastra({ storage, logger: false }).getStorage()!.getStore('threadState'))!;
    const writes: unknown[] = [];
    const setState = state.setState.bind(state);
    state.setState = async (args) => {
      if (args.type === 'mastra-agui-bridge.inbox-threads') writes.push(args.value);
      return setState(args);
    };
    const threads = Array.from({ length: 20 }, (_, i) => `t${i}`);
    await Promise.all(threads.map((t, i) => inbox.add(entry(`e${i}`, t, i))));
    expect((await inbox.pending()).map((e) => e.threadId)).toEqual(threads);
    expect(writes.length).toBeLessThan(threads.length);

    await Promise.all(threads.map((t, i) => inbox.remove(t, [`e${i}`])));
    expect(await inbox.pending()).toEqual([]);

    state.setState = async (args) => {
      if (args.type === 'mastra-agui-bridge.inbox-threads') throw new Error('storage away');
      return setState(args);
    };
    await expect(inbox.add(entry('x', 'tx', 1))).rejects.toThrow('storage away');
    state.setState = setState;
    await inbox.add(entry('y', 'ty', 2));
    expect((await inbox.pending()).map((e) => e.id)).toContain('y');
  });
});
