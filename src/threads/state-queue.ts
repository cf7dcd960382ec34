import type { Mastra } from '@mastra/core';
import type { ThreadLocks } from './thread-locks.js';
import { threadStateStore, type ThreadStates } from '../mastra/index.js';

/** What a queue keeps: an id, and the thread whose row holds it. */
export interface QueueEntry {
  id: string;
  threadId: string;
}

/** Where a queue's rows live in Mastra's `threadState` domain, and the prefix of its locks. */
export interface QueueNames {
  /** The `type` of each thread's row of entries. */
  entries: string;
  /** The `type` of the one row listing the threads that have entries. */
  index: string;
  /** Lock names: `<locks>:<threadId>` per thread, `<locks>:index` for the index. */
  locks: string;
}

/** A change to the list of threads that have entries. */
type IndexChange = (threads: string[]) => string[];

/** The `threadId` the index row is stored under (thread-state is read by thread only). */
const INDEX_OWNER = 'mastra-agui-bridge';

/**
 * Durable entries in Mastra's `threadState` storage domain, the storage the bridge already has: a
 * list per thread, and one index of the threads that have any (thread-state is read by key only).
 * Writes are serialised per thread (and for the index) with `ThreadLocks`, so with Redis locks
 * every process may write. The durable inbox and the webhook outbox each keep one.
 *
 * @example
 * const queue = new ThreadStateQueue<Entry>(mastra, locks, { entries: 'app.outbox', index: 'app.outbox-threads', locks: 'outbox' });
 * await queue.add({ id: 'e1', threadId: 't1' });
 * await queue.all(); // every entry of every thread
 */
export class ThreadStateQueue<T extends QueueEntry> {
  private domain?: Promise<ThreadStates | undefined>;
  /** Index changes waiting for the next write (`index`). */
  private readonly indexChanges: Array<{ change: IndexChange; done: () => void; failed: (error: unknown) => void }> = [];
  private writingIndex = false;
  /** Threads whose last entry this process removed, still in the index until its next write. */
  private readonly emptied = new Set<string>();

  constructor(
    private readonly mastra: Mastra,
    private readonly locks: ThreadLocks,
    private readonly names: QueueNames,
  ) {}

  /** Adds entries to one thread's row; resolves once they are stored and the thread is listed. */
  async add(threadId: string, added: readonly T[]): Promise<void> {
    const state = await this.state();
    if (!state || added.length === 0) return;
    const first = await this.locks.exclusive(this.lock(threadId), async () => {
      const entries = await this.entries(state, threadId);
      await state.setState({ threadId, type: this.names.entries, value: [...entries, ...added] });
      return entries.length === 0;
    });
    if (first) await this.index(state, (threads) => (threads.includes(threadId) ? threads : [...threads, threadId]));
  }

  /**
   * Changes one thread's entries under its lock: `change` answers the entries to keep (the same
   * array when nothing changes, which writes nothing).
   */
  async update(threadId: string, change: (entries: T[]) => T[]): Promise<void> {
    const state = await this.state();
    if (!state) return;
    const empty = await this.locks.exclusive(this.lock(threadId), async () => {
      const entries = await this.entries(state, threadId);
      const left = change(entries);
      if (left === entries) return false;
      if (left.length > 0) await state.setState({ threadId, type: this.names.entries, value: left });
      else await state.deleteState({ threadId, type: this.names.entries });
      return left.length === 0;
    });
    // The index lets go of it with its next write (`writeIndex`): a run's end writes once, not twice.
    if (empty) this.emptied.add(threadId);
  }

  async remove(threadId: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.update(threadId, (entries) => (entries.some((e) => ids.includes(e.id)) ? entries.filter((e) => !ids.includes(e.id)) : entries));
  }

  /** Every entry of every listed thread, thread by thread. */
  async all(): Promise<T[]> {
    const state = await this.state();
    if (!state) return [];
    const threads = (await state.getState<string[]>(this.indexKey)) ?? [];
    const all = await Promise.all(threads.map((threadId) => this.entries(state, threadId)));
    threads.forEach((threadId, i) => all[i].length === 0 && this.emptied.add(threadId));
    return all.flat();
  }

  async of(threadId: string): Promise<T[]> {
    const state = await this.state();
    return state ? this.entries(state, threadId) : [];
  }

  private lock(threadId: string): string {
    return `${this.names.locks}:${threadId}`;
  }

  private get indexKey(): { threadId: string; type: string } {
    return { threadId: INDEX_OWNER, type: this.names.index };
  }

  private async entries(state: ThreadStates, threadId: string): Promise<T[]> {
    return (await state.getState<T[]>({ threadId, type: this.names.entries })) ?? [];
  }

  /**
   * Changes the index. Every first entry of a thread changes it, under one lock for all threads
   * (a Redis lock in scale-out): the changes that queue up while a write is under way go
   * together in the next write, in order, rather than one write each.
   */
  private index(state: ThreadStates, change: IndexChange): Promise<void> {
    const written = new Promise<void>((done, failed) => this.indexChanges.push({ change, done, failed }));
    if (!this.writingIndex) void this.writeIndex(state);
    return written;
  }

  private async writeIndex(state: ThreadStates): Promise<void> {
    this.writingIndex = true;
    for (let batch = this.indexChanges.splice(0); batch.length > 0; batch = this.indexChanges.splice(0)) {
      try {
        await this.locks.exclusive(`${this.names.locks}:index`, async () => {
          const listed = batch.reduce((value, { change }) => change(value), (await state.getState<string[]>(this.indexKey)) ?? []);
          await state.setState({ ...this.indexKey, value: await this.withoutEmptied(state, listed) });
        });
        for (const { done } of batch) done();
      } catch (error) {
        for (const { failed } of batch) failed(error);
      }
    }
    this.writingIndex = false;
  }

  /**
   * The index without the threads this process emptied that are empty still. A listed thread with
   * no entries only costs a reader a read, so they go when the index is written anyway. Read
   * under the index lock: an entry added after the read is listed again by its own change, which
   * waits for this write and comes before its caller hears it is stored.
   */
  private async withoutEmptied(state: ThreadStates, threads: string[]): Promise<string[]> {
    const candidates = [...this.emptied].filter((threadId) => threads.includes(threadId));
    this.emptied.clear();
    if (candidates.length === 0) return threads;
    const counts = await Promise.all(candidates.map(async (threadId) => (await this.entries(state, threadId)).length));
    const gone = new Set(candidates.filter((_, i) => counts[i] === 0));
    return threads.filter((threadId) => !gone.has(threadId));
  }

  /**
   * Mastra's thread-state domain, looked up once; none without storage (nothing to keep then). A
   * lookup that failed (storage unreachable, or its tables being created by another process) is
   * tried again by the next call, not kept.
   */
  private state(): Promise<ThreadStates | undefined> {
    if (this.domain) return this.domain;
    const domain = threadStateStore(this.mastra);
    this.domain = domain;
    domain.catch(() => {
      if (this.domain === domain) this.domain = undefined;
    });
    return domain;
  }
}
