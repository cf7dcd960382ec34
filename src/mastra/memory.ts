import type { Agent } from '@mastra/core/agent';
import { MessageList, type MessageListInput } from '@mastra/core/agent/message-list';
import type { MastraDBMessage, MastraMemory, StorageThreadType } from '@mastra/core/memory';
import type { ThreadTarget } from './runs.js';

/**
 * The door into Mastra's memory: threads, their stored messages, and working memory. The bridge
 * reads and writes through these calls only, so that what it asks of storage (which order, which
 * signals, one query or many) is in one place.
 */

export type { MastraDBMessage, MastraMemory, StorageThreadType };

/** A page of a list: `limit` rows after `offset` pages of them (no `limit`: every row). */
export interface Page {
  limit?: number;
  /** Page index (0-based): `offset` pages of `limit` items are skipped. */
  offset?: number;
}

/** The agent's memory (`undefined`: the agent keeps none). */
export async function memoryOf(agent: Agent): Promise<MastraMemory | undefined> {
  return (await agent.getMemory()) ?? undefined;
}

/** The stored thread `threadId`, whoever owns it; `null` when there is none. */
export function threadById(memory: MastraMemory, threadId: string): Promise<StorageThreadType | null> {
  return memory.getThreadById({ threadId });
}

/** Creates a thread (`threadId` absent: Mastra makes one up). */
export function createThread(
  memory: MastraMemory,
  thread: { resourceId: string; threadId?: string; title?: string; metadata?: Record<string, unknown> },
): Promise<StorageThreadType> {
  return memory.createThread(thread);
}

/** A resource's threads, newest first. */
export async function threadsOf(memory: MastraMemory, resourceId: string, page: Page): Promise<StorageThreadType[]> {
  const result = await memory.listThreads({
    filter: { resourceId },
    perPage: page.limit ?? false,
    page: page.limit ? (page.offset ?? 0) : 0,
    orderBy: { field: 'createdAt', direction: 'DESC' },
  });
  return result.threads;
}

/**
 * Writes a thread's title and metadata. Mastra's `updateThread` merges `metadata` into the stored
 * one (LibSQL and the in-memory store both spread the old keys back in), so it cannot remove a key:
 * `replace` rewrites the whole row with `saveThread` instead (`thread` as read, every column kept).
 */
export function writeThread(
  memory: MastraMemory,
  thread: StorageThreadType,
  change: { title: string; metadata: Record<string, unknown>; replace?: boolean },
): Promise<StorageThreadType> {
  const { title, metadata } = change;
  if (change.replace) return memory.saveThread({ thread: { ...thread, title, metadata, updatedAt: new Date() } });
  return memory.updateThread({ id: thread.id, title, metadata });
}

/** Deletes a thread and what it stores. */
export function deleteThread(memory: MastraMemory, threadId: string): Promise<void> {
  return memory.deleteThread(threadId);
}

/** A page of the thread's stored messages, oldest first, signals included. */
export async function recallPage(memory: MastraMemory, thread: ThreadTarget, page: Page): Promise<MastraDBMessage[]> {
  const { messages } = await memory.recall({
    threadId: thread.threadId,
    resourceId: thread.resourceId,
    perPage: page.limit ?? false,
    page: page.limit ? (page.offset ?? 0) : 0,
    hideSignals: [],
    orderBy: { field: 'createdAt', direction: 'ASC' },
  });
  return messages;
}

/**
 * The thread's last `rows` stored messages (signals included), oldest first: one query however
 * long the thread. With `resourceId`, Mastra reads the thread's row first to check its owner; a
 * caller that checked it on a row it read leaves it out.
 */
export async function recallTail(memory: MastraMemory, thread: { threadId: string; resourceId?: string }, rows: number): Promise<MastraDBMessage[]> {
  // No order given: Mastra reads the newest `perPage` and turns them round.
  const { messages } = await memory.recall({
    threadId: thread.threadId,
    resourceId: thread.resourceId,
    perPage: rows,
    page: 0,
    hideSignals: [],
    includeTotal: false,
  });
  return messages;
}

/** The stored messages with these ids, in any thread: one query by id. */
export async function messagesById(memory: MastraMemory, ids: readonly string[]): Promise<MastraDBMessage[]> {
  if (ids.length === 0) return [];
  const store = await memory.storage.getStore('memory');
  const { messages } = (await store?.listMessagesById({ messageIds: [...ids] })) ?? { messages: [] };
  return messages;
}

/** Stores messages (an upsert by id: a message stored again replaces the first copy). */
export async function saveMessages(memory: MastraMemory, messages: MastraDBMessage[]): Promise<void> {
  if (messages.length > 0) await memory.saveMessages({ messages });
}

/** Deletes stored messages by id. */
export function deleteMessages(memory: MastraMemory, ids: string[]): Promise<void> {
  return memory.deleteMessages(ids);
}

/** Input messages as Mastra stores them in the thread (what it would store for a run's input). */
export function inputRows(thread: ThreadTarget, messages: MessageListInput): MastraDBMessage[] {
  const list = new MessageList({ threadId: thread.threadId, resourceId: thread.resourceId });
  list.add(messages, 'input');
  return list.get.all.db();
}

/** Texts as assistant messages in the thread, under the given ids, a millisecond apart (history orders by creation time). */
export function assistantRows(thread: ThreadTarget, texts: ReadonlyArray<{ id: string; text: string }>): MastraDBMessage[] {
  const now = Date.now();
  return texts.map(({ id, text }, i) => ({
    id,
    role: 'assistant',
    threadId: thread.threadId,
    resourceId: thread.resourceId,
    createdAt: new Date(now + i),
    type: 'text',
    content: { format: 2, parts: [{ type: 'text', text }] },
  }));
}

/** `Memory.updateMessages`, and the storage's: both take whole new content for a message. */
type UpdatesMessages = { updateMessages(args: { messages: Array<Pick<MastraDBMessage, 'id' | 'content'>> }): Promise<unknown> };

/** Replaces a stored message's content. `Memory` re-embeds what it updates (semantic recall must not find the old text); else the store writes it. */
export async function rewriteMessage(memory: MastraMemory, message: Pick<MastraDBMessage, 'id' | 'content'>): Promise<void> {
  const writer = typeof (memory as Partial<UpdatesMessages>).updateMessages === 'function' ? memory : await memory.storage.getStore('memory');
  await (writer as unknown as UpdatesMessages | undefined)?.updateMessages({ messages: [message] });
}

/** The memory's working-memory settings: off, or its scope and schema (none: Markdown). */
export function workingMemoryConfig(memory: MastraMemory): { scope: 'thread' | 'resource'; schema?: unknown } | undefined {
  const config = memory.getMergedThreadConfig({}).workingMemory;
  if (!config?.enabled) return undefined;
  const schema = 'schema' in config ? config.schema : undefined;
  return { scope: config.scope === 'thread' ? 'thread' : 'resource', ...(schema !== undefined && { schema }) };
}

/** The stored working memory's text (`null`/empty: none yet). */
export function readWorkingMemory(memory: MastraMemory, scope: ThreadTarget): Promise<string | null> {
  return memory.getWorkingMemory(scope);
}

/** Thread-scoped working memory's text in a thread's row: where Mastra keeps it, and reads it from (`metadata.workingMemory`). */
export function threadWorkingMemory(row: StorageThreadType): string | null {
  const text = row.metadata?.workingMemory;
  return typeof text === 'string' && text !== '' ? text : null;
}

/** Replaces the stored working memory's text. */
export async function writeWorkingMemory(memory: MastraMemory, scope: ThreadTarget, text: string): Promise<void> {
  await memory.updateWorkingMemory({ ...scope, workingMemory: text });
}
