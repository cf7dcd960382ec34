import type { Context } from 'hono';
import type { z } from 'zod';
import { BridgeError, invalidInput } from '../errors.js';
import { zodDetails } from './errors.js';

const tooLarge = (limit: number) => new BridgeError(413, 'PAYLOAD_TOO_LARGE', `Request body exceeds ${limit} bytes`);

/**
 * Reads a JSON body, refusing more than `limit` bytes before they are buffered: a declared
 * `Content-Length` over the limit is refused at once, an undeclared one as soon as it passes it.
 * An empty body reads as `{}`.
 */
export async function readJsonBody(c: Context, limit: number): Promise<unknown> {
  const declared = Number(c.req.header('content-length'));
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  const body = c.req.raw.body;
  if (!body) return {};
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text.trim()) return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw invalidInput(`Malformed JSON body: ${(error as Error).message}`);
  }
}

/** Parses a value with a schema; a failure is `400 INVALID_INPUT` with the zod issues as details. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, where: 'body' | 'query' | 'path'): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidInput(`Invalid ${where}`, zodDetails(result.error, where === 'body' ? '' : where));
  return result.data;
}

/** Reads and validates a JSON body in one step. */
export async function parseBody<S extends z.ZodType>(c: Context, schema: S, limit: number): Promise<z.output<S>> {
  return parseInput(schema, await readJsonBody(c, limit), 'body');
}
