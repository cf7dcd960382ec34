import type { MastraMemory } from '@mastra/core/memory';
import { notFound } from '../errors.js';
import { messagesById, recallTail, threadById, type StorageThreadType, type ThreadTarget } from '../mastra/index.js';
import { toAguiMessages } from '../translate/history.js';
import { contextOf } from './thread-metadata.js';
import type { ThreadHistory } from './history-context.js';

/** Message ids, each with the thread that stores it (`undefined`: none does). */
export type IdHolders = ReadonlyMap<string, string | undefined>;

/** What a new run's input is checked against (`recentHistory`). */
export interface RecentHistory extends ThreadHistory {
  /** Ids of `stored` as stored and as AG-UI messages show them, and those of the asked ids the thread stores. */
  storedIds: Set<string>;
  /** The thread's row as read (the caller's own): what the rest of the request needs of it, without reading it again. */
  thread: StorageThreadType;
  /** Every asked id, with the thread that stores it: what `ThreadStore.checkIds` needs of them. */
  lookedUp: IdHolders;
}

/** Stored messages a new run reads back: enough for the ids history makes up (tool results, steps) at the thread's end. */
const RECENT_ROWS = 20;

/**
 * What a new run's input is checked against, in three reads however long the thread: the thread
 * (`undefined` when it does not exist yet; another resource's is `404`), its last stored messages,
 * and which thread stores each of `ids` (the input's tail, `tailIds`), of any age.
 *
 * @example
 * const recent = await recentHistory(memory, { threadId, resourceId }, tailIds(input.messages));
 * recent?.storedIds.has('m1'); // the thread stores it already
 */
export async function recentHistory(memory: MastraMemory, scope: ThreadTarget, ids: readonly string[]): Promise<RecentHistory | undefined> {
  const thread = await threadById(memory, scope.threadId);
  if (!thread) return undefined;
  if (thread.resourceId !== scope.resourceId) throw notFound('THREAD_NOT_FOUND', `Thread ${scope.threadId} not found`);
  // The owner is checked on the row just read: Mastra need not read it again for the tail.
  const [stored, byId] = await Promise.all([recallTail(memory, { threadId: scope.threadId }, RECENT_ROWS), messagesById(memory, ids)]);
  const lookedUp = new Map<string, string | undefined>(ids.map((id) => [id, undefined]));
  for (const row of byId) lookedUp.set(row.id, row.threadId);
  const context = contextOf(thread, []);
  const here = byId.filter((m) => m.threadId === scope.threadId).map((m) => m.id);
  const storedIds = new Set([...stored.map((m) => m.id), ...toAguiMessages(stored, context).map((m) => m.id), ...here]);
  return { stored, context, storedIds, thread, lookedUp };
}
