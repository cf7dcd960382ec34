import type { MastraDBMessage } from '@mastra/core/memory';
import { z } from 'zod';
import { partsText } from './history.js';

/** A stored message as a plain JSON history item (e.g. for a `GET …/messages` route). */
export const ThreadMessageSchema = z.object({ id: z.string(), role: z.string(), content: z.unknown(), createdAt: z.string(), threadId: z.string() });

export type ThreadMessage = z.infer<typeof ThreadMessageSchema>;

/**
 * The plain history shape of one stored message: `content` is the text when every part is a text
 * part, else the stored content object (`{ format: 2, parts, … }`) unchanged. `threadId` is `''`
 * when the row has none.
 *
 * @example
 * toThreadMessage(row); // { id: 'm1', role: 'user', content: 'hi', createdAt: '2026-01-01T00:00:00.000Z', threadId: 't1' }
 */
export function toThreadMessage(stored: MastraDBMessage): ThreadMessage {
  const parts = stored.content.parts;
  const plain = parts.length > 0 && parts.every((part) => part.type === 'text');
  return {
    id: stored.id,
    role: stored.role,
    content: plain ? partsText(parts) : stored.content,
    createdAt: new Date(stored.createdAt).toISOString(),
    threadId: stored.threadId ?? '',
  };
}
