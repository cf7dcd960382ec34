import type { Context } from 'hono';
import { z } from 'zod';
import { BridgeError, invalidInput } from '../errors.js';
import { zodDetails } from './errors.js';
import { MAX_JSON_DEPTH, nestingExceeds } from './json-depth.js';

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
      void discardRest(reader);
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text.trim()) return {};
  // JSON only under a JSON media type: a `text/plain` body is what a cross-site form can send
  // without a CORS preflight, and it must not reach a hook that trusts cookies.
  if (!JSON_MEDIA_TYPE.test(c.req.header('content-type') ?? '')) {
    throw invalidInput('Content-Type must be application/json');
  }
  if (nestingExceeds(text, MAX_JSON_DEPTH)) {
    throw invalidInput(`JSON body nested deeper than ${MAX_JSON_DEPTH} levels`, [
      { path: '', message: `must be nested at most ${MAX_JSON_DEPTH} levels deep` },
    ]);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw invalidInput(`Malformed JSON body: ${(error as Error).message}`);
  }
}

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i;

/** How much of a refused body is still read and dropped (the bound @hono/node-server drains to). */
const DISCARD_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * Reads and drops the rest of a refused body, so that a client still uploading (curl, a proxy)
 * gets its 413 and keeps its connection. Cancelling instead leaves the rest unread under a paused
 * socket: @hono/node-server gives up draining it and destroys the socket, and the client sees a
 * reset (EPIPE) in place of the answer. Past the bound, the body is cancelled after all.
 */
async function discardRest(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  let dropped = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      dropped += value.byteLength;
      if (dropped > DISCARD_LIMIT_BYTES) break;
    }
  } catch {
    return; // the client went away: nothing left to drain
  }
  await reader.cancel().catch(() => {
    // the body is refused already; a reader that will not cancel is dropped with the request
  });
}

/**
 * Parses a value with a schema; a failure is `400 INVALID_INPUT` with the zod issues as details.
 * `at` is where the value sits when it is not the whole body/query (e.g. `forwardedProps`), so
 * that detail paths read `forwardedProps.agentId` rather than `agentId`.
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, where: 'body' | 'query' | 'path' | 'header', at?: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidInput(`Invalid ${where}`, zodDetails(result.error, at ?? (where === 'body' ? '' : where)));
  return result.data;
}
