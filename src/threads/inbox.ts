import type { Mastra } from '@mastra/core';
import type { ThreadStateStorage } from '@mastra/core/storage';
import { inject, injectable } from 'inversify';
import type { ThreadLocks } from './thread-locks.js';
import { TOKENS } from '../tokens.js';

/** A message the bridge acknowledged and Mastra may not have stored yet. */
export interface InboxEntry {
  /** The id the message is stored under: the signal id, or the last new message id of a `/run`. */
  id: string;
  /**
   * How it was sent: `send` wakes an idle thread or joins its run, `queue` waits for the next run,
   * `signal` is a stored signal (`POST …/signals`), `run` is a `/run` (its messages are stored
   * before `RUN_STARTED`; what is kept is the answer).
   */
  kind: 'send' | 'queue' | 'signal' | 'run';
  threadId: string;
  resourceId: string;
  agentId: string;
  /** The message as the route took it (`send-message` / `queue-message`), the signal, or a `/run`'s new Mastra input messages. */
  message: unknown;
  /** When it was accepted (epoch ms): recovery keeps this order. */
  acceptedAt: number;
}

/**
 * Messages acknowledged with `202` and not yet known to be answered, kept where a crash cannot
 * reach them: committed before the answer, removed once the thread's history holds the message
 * and an answer after it. On start-up the bridge sends what is left again, under the same ids.
 * One binding in the container; the default keeps entries in Mastra's storage.
 *
 * @example
 * await inbox.add(entry);      // before the 202
 * await inbox.pending();       // after a restart: every entry not removed
 * await inbox.remove(entry.threadId, [entry.id]);
 */
export interface DurableInbox {
  add(entry: InboxEntry): Promise<void>;
  remove(threadId: string, ids: readonly string[]): Promise<void>;
  /** Every entry, oldest first. */
  pending(): Promise<InboxEntry[]>;
  /** One thread's entries, in the order they were accepted. */
  of(threadId: string): Promise<InboxEntry[]>;
}

/**
 * What cutting a thread's run does to its acknowledged messages (API.md: a cut answer is an answer;
 * every acknowledged message is answered once, in order). `around` runs the cut (an abort, an
 * interrupting run's) as one step with the inbox, so that no process takes the cut run's messages
 * for a dead process's meanwhile; afterwards the messages the cut run took count as answered.
 *
 * @example
 * const { aborted } = await cuts.around({ threadId, resourceId, agentId }, () => control.abort(agent, thread));
 */
export interface InboxCuts {
  around<T>(thread: { threadId: string; resourceId: string; agentId: string }, cut: () => Promise<T>): Promise<T>;
}

const ENTRIES = 'mastra-agui-bridge.inbox';
/** A change to the list of threads that have entries. */
type IndexChange = (threads: string[]) => string[];

/** The slot listing the threads that have entries (thread-state is read by thread only). */
const INDEX = { threadId: 'mastra-agui-bridge', type: 'mastra-agui-bridge.inbox-threads' };

/**
 * Entries in Mastra's `threadState` storage domain: a list per thread, and one index of the
 * threads that have any. Writes are serialised per thread (and for the index) with `ThreadLocks`.
 */
@injectable()
export class MastraInbox implements DurableInbox {
  private domain?: Promise<ThreadStateStorage | undefined>;
  /** Index changes waiting for the next write (`index`). */
  private readonly indexChanges: Array<{ change: IndexChange; done: () => void; failed: (error: unknown) => void }> = [];
  private writingIndex = false;
  /** Threads whose last entry this process removed, still in the index until its next write. */
  private readonly emptied = new Set<string>();

  constructor(
    @inject(TOKENS.Mastra) private readonly mastra: Mastra,
    @inject(TOKENS.ThreadLocks) private readonly locks: ThreadLocks,
  ) {}

  async add(entry: InboxEntry): Promise<void> {
    const state = await this.state();
    if (!state) return;
    const added = await this.locks.exclusive(`inbox:${entry.threadId}`, async () => {
      const entries = await this.entries(state, entry.threadId);
      await state.setState({ threadId: entry.threadId, type: ENTRIES, value: [...entries, entry] });
      return entries.length === 0;
    });
    if (added) await this.index(state, (threads) => (threads.includes(entry.threadId) ? threads : [...threads, entry.threadId]));
  }

  async remove(threadId: string, ids: readonly string[]): Promise<void> {
    const state = await this.state();
    if (!state || ids.length === 0) return;
    const empty = await this.locks.exclusive(`inbox:${threadId}`, async () => {
      const left = (await this.entries(state, threadId)).filter((e) => !ids.includes(e.id));
      if (left.length > 0) await state.setState({ threadId, type: ENTRIES, value: left });
      else await state.deleteState({ threadId, type: ENTRIES });
      return left.length === 0;
    });
    // The index lets go of it with its next write (`writeIndex`): a run's end writes once, not twice.
    if (empty) this.emptied.add(threadId);
  }

  async pending(): Promise<InboxEntry[]> {
    const state = await this.state();
    if (!state) return [];
    const threads = (await state.getState<string[]>(INDEX)) ?? [];
    const all = await Promise.all(threads.map((threadId) => this.entries(state, threadId)));
    threads.forEach((threadId, i) => all[i].length === 0 && this.emptied.add(threadId));
    return all.flat().sort((a, b) => a.acceptedAt - b.acceptedAt);
  }

  async of(threadId: string): Promise<InboxEntry[]> {
    const state = await this.state();
    return state ? this.entries(state, threadId) : [];
  }

  private async entries(state: ThreadStateStorage, threadId: string): Promise<InboxEntry[]> {
    return (await state.getState<InboxEntry[]>({ threadId, type: ENTRIES })) ?? [];
  }

  /**
   * Changes the index. Every run that starts on a thread with no other entry changes it, under one
   * lock for all threads (a Redis lock in scale-out): the changes that queue up while a write is
   * under way go together in the next write, in order, rather than one write each.
   */
  private index(state: ThreadStateStorage, change: IndexChange): Promise<void> {
    const written = new Promise<void>((done, failed) => this.indexChanges.push({ change, done, failed }));
    if (!this.writingIndex) void this.writeIndex(state);
    return written;
  }

  private async writeIndex(state: ThreadStateStorage): Promise<void> {
    this.writingIndex = true;
    for (let batch = this.indexChanges.splice(0); batch.length > 0; batch = this.indexChanges.splice(0)) {
      try {
        await this.locks.exclusive('inbox:index', async () => {
          const listed = batch.reduce((value, { change }) => change(value), (await state.getState<string[]>(INDEX)) ?? []);
          await state.setState({ ...INDEX, value: await this.withoutEmptied(state, listed) });
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
   * no entries only costs recovery a read, so they go when the index is written anyway. Read
   * under the index lock: an entry added after the read is listed again by its own change, which
   * waits for this write and comes before its acknowledgement.
   */
  private async withoutEmptied(state: ThreadStateStorage, threads: string[]): Promise<string[]> {
    const candidates = [...this.emptied].filter((threadId) => threads.includes(threadId));
    this.emptied.clear();
    if (candidates.length === 0) return threads;
    const counts = await Promise.all(candidates.map(async (threadId) => (await this.entries(state, threadId)).length));
    const gone = new Set(candidates.filter((_, i) => counts[i] === 0));
    return threads.filter((threadId) => !gone.has(threadId));
  }

  /** Mastra's thread-state domain, looked up once; none without storage (nothing to keep then). */
  private state(): Promise<ThreadStateStorage | undefined> {
    this.domain ??= (async () => (await this.mastra.getStorage()?.getStore('threadState')) ?? undefined)();
    return this.domain;
  }
}
