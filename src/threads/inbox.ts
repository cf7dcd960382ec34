import type { Mastra } from '@mastra/core';
import { inject, injectable } from 'inversify';
import type { ThreadLocks } from './thread-locks.js';
import { ThreadStateQueue } from './state-queue.js';
import { TOKENS } from '../tokens.js';
import { withTraceparent } from '../observability/trace-context.js';

/** A message the bridge acknowledged and Mastra may not have stored yet. */
export interface InboxEntry {
  /** The id the message is stored under: the signal id, or the last new message id of a `/run`; a workflow `/run`'s run id. */
  id: string;
  /**
   * How it was sent: `send` wakes an idle thread or joins its run, `queue` waits for the next run,
   * `signal` is a stored signal (`POST …/signals`), `run` is a `/run` (its messages are stored
   * before `RUN_STARTED`; what is kept is the answer), `workflow` is a workflow `/run` while it
   * streams (`message`: `{ inputId? }`, the user message it answers): cut, it is settled, not run again.
   */
  kind: 'send' | 'queue' | 'signal' | 'run' | 'workflow';
  threadId: string;
  resourceId: string;
  agentId: string;
  /** The message as the route took it (`send-message` / `queue-message`), the signal, or a `/run`'s new Mastra input messages. */
  message: unknown;
  /** When it was accepted (epoch ms): recovery keeps this order. */
  acceptedAt: number;
  /** The W3C `traceparent` of the request that sent it: the run recovery starts for it joins that trace. */
  traceparent?: string;
}

/** An entry accepted now, in the trace of the request that sent it (recovery's run joins that trace). */
export function inboxEntry(kind: InboxEntry['kind'], id: string, scope: Pick<InboxEntry, 'threadId' | 'resourceId' | 'agentId'>, message: unknown): InboxEntry {
  const { threadId, resourceId, agentId } = scope;
  return { id, kind, threadId, resourceId, agentId, message, acceptedAt: Date.now(), ...withTraceparent() };
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
 * What cutting a thread's run does to its acknowledged messages (docs/api.md "Acknowledged means
 * committed": an answer a cut ended is an answer; every acknowledged message is answered once, in
 * order). `around` runs the cut (an abort, an interrupting run's) as one step with the inbox, so
 * that no process takes the cut run's messages for a dead process's meanwhile; afterwards the
 * messages the cut run took count as answered.
 */
export interface InboxCuts {
  around<T>(thread: { threadId: string; resourceId: string; agentId: string }, cut: () => Promise<T>): Promise<T>;
}

/**
 * Entries in Mastra's `threadState` storage domain (`ThreadStateQueue`): a list per thread, and
 * one index of the threads that have any.
 */
@injectable()
export class MastraInbox implements DurableInbox {
  private readonly queue: ThreadStateQueue<InboxEntry>;

  constructor(@inject(TOKENS.Mastra) mastra: Mastra, @inject(TOKENS.ThreadLocks) locks: ThreadLocks) {
    this.queue = new ThreadStateQueue(mastra, locks, { entries: 'mastra-agui-bridge.inbox', index: 'mastra-agui-bridge.inbox-threads', locks: 'inbox' });
  }

  add(entry: InboxEntry): Promise<void> {
    return this.queue.add(entry.threadId, [entry]);
  }

  remove(threadId: string, ids: readonly string[]): Promise<void> {
    return this.queue.remove(threadId, ids);
  }

  async pending(): Promise<InboxEntry[]> {
    return (await this.queue.all()).sort((a, b) => a.acceptedAt - b.acceptedAt);
  }

  of(threadId: string): Promise<InboxEntry[]> {
    return this.queue.of(threadId);
  }
}
