import type { EntryFields } from './entry.js';

export interface StreamMessage {
  id: string;
  message: EntryFields;
}

/** What XREAD / XREADGROUP answer for one key. */
export interface StreamBatch {
  name: string;
  messages: StreamMessage[];
}

/**
 * The batches of an XREAD or XREADGROUP reply (node-redis answers them in this shape under RESP2
 * and RESP3 alike); none on a timeout. Entries trimmed away while pending come back without
 * fields: they are left out.
 *
 * @example
 * for (const { name, messages } of streamBatches(await reader.xRead(streams, { BLOCK: 1000 }))) …
 */
export function streamBatches(reply: unknown): StreamBatch[] {
  if (!Array.isArray(reply)) return [];
  return reply.map((batch: { name: unknown; messages: unknown }) => ({
    name: String(batch.name),
    messages: streamMessages(batch.messages),
  }));
}

/** The messages of a batch or of an XAUTOCLAIM / XRANGE reply, the ones without fields left out. */
export function streamMessages(messages: unknown): StreamMessage[] {
  if (!Array.isArray(messages)) return [];
  return messages
    .filter((m): m is { id: unknown; message: Record<string, unknown> } => !!m && typeof m === 'object' && !!(m as { message?: unknown }).message)
    .map((m) => ({ id: String(m.id), message: toFields(m.message) }));
}

function toFields(message: Record<string, unknown>): EntryFields {
  const fields: EntryFields = {};
  for (const [k, v] of Object.entries(message)) fields[k] = String(v);
  return fields;
}
