import { messagesById, recallPage, type MastraDBMessage, type MastraMemory, type Page, type StorageThreadType, type ThreadTarget } from '../mastra/index.js';
import { subagentThreads, type HistoryContext } from '../translate/history.js';
import type { StoredRunEnd } from '../translate/run-end.js';
import { runEndsOf } from './thread-metadata.js';

/*
 * What history reads beside a page of a thread's rows (`ThreadStore.history`): the sub-agents'
 * own rows, and the run ends that belong on the page.
 */

/** A thread's stored messages, with what the bridge needs beside them to show them as AG-UI messages. */
export interface ThreadHistory {
  stored: MastraDBMessage[];
  context: HistoryContext;
}

/** What the sub-agents the rows delegated to stored in their own threads (Mastra keeps them in the supervisor's memory). */
export async function subagentRows(memory: MastraMemory, stored: MastraDBMessage[]): Promise<Map<string, MastraDBMessage[]>> {
  const threads = [...subagentThreads(stored)];
  const rows = await Promise.all(threads.map(([, thread]) => recallPage(memory, thread, {})));
  return new Map(threads.flatMap(([toolCallId], i) => (rows[i].length > 0 ? [[toolCallId, rows[i]]] : [])));
}

/**
 * The run ends that belong with a page of `stored`: each goes with the row it follows
 * (`placeRunEnds`), the input its run answered when that is stored, else the last row created
 * before it. A page then holds those after its first row (any before it, on the first page) and
 * before the next page's first row. Two reads at most, only for a page of a thread with run ends.
 */
export async function runEndsOnPage(
  thread: StorageThreadType,
  memory: MastraMemory,
  scope: ThreadTarget,
  page: Page,
  stored: MastraDBMessage[],
): Promise<Record<string, StoredRunEnd> | undefined> {
  const ends = runEndsOf(thread);
  if (!ends || Object.keys(ends).length === 0 || page.limit === undefined) return ends;
  const { limit, offset = 0 } = page;
  const here = new Set(stored.map((row) => row.id));
  const anchors = Object.values(ends).flatMap(({ after }) => (after !== undefined && !here.has(after) ? [after] : []));
  const next = stored.length >= limit ? recallPage(memory, scope, { limit: 1, offset: (offset + 1) * limit }) : Promise.resolve([]);
  const [elsewhere, [following]] = await Promise.all([storedIds(memory, scope, anchors), next]);
  const from = offset > 0 ? (stored[0] ? new Date(stored[0].createdAt).getTime() : Infinity) : -Infinity;
  const until = following ? new Date(following.createdAt).getTime() : Infinity;
  const belongs = ({ after, at }: StoredRunEnd) => (after !== undefined && here.has(after)) || (!elsewhere.has(after ?? '') && at >= from && at < until);
  return Object.fromEntries(Object.entries(ends).filter(([, end]) => belongs(end)));
}

/** Which of `ids` the thread stores. */
async function storedIds(memory: MastraMemory, scope: ThreadTarget, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  return new Set((await messagesById(memory, [...ids])).filter((m) => m.threadId === scope.threadId).map((m) => m.id));
}
