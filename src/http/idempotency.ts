import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';
import { conflict } from '../errors.js';
import type { IdempotencyRecord } from '../idempotency/idempotency-store.js';
import type { ThreadScope } from '../threads/thread-store.js';
import { threadScope } from './handlers/threads.js';
import { parseInput, readJsonBody } from './request.js';
import type { Services } from './services.js';

/** The request header that makes a steering request idempotent. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** The answer header that marks a replayed answer. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** A route's answer before it becomes a response: what is remembered for a retry. */
export interface Answer {
  status: ContentfulStatusCode;
  body: unknown;
}

const KEY_RULE = 'must be 1 to 256 printable ASCII characters';
export const KeyHeaderSchema = z.object({
  'idempotency-key': z.string().regex(/^[\x20-\x7e]{1,256}$/, KEY_RULE),
});

/**
 * Serves a steering route (`POST /threads/:threadId/<route>`): reads its body with `schema`,
 * resolves the caller's scope on the thread and answers what `handle` answers. With an
 * `Idempotency-Key` header, the first successful (2xx) answer is kept for `idempotencyTtlMs`
 * under the thread, the route, the caller's resource and the key:
 *
 * - a retry with the same body gets that answer again, with `Idempotent-Replayed: true`, and
 *   `handle` is not called (nothing is sent, stored or run twice);
 * - the same key with another body is `409 CONFLICT`;
 * - an error answer is not kept: a retry tries again;
 * - two requests with one key run one after the other (in this process: see `ThreadLocks`), so
 *   the second one replays the first.
 *
 * Without the header nothing of this runs (no storage access). A malformed key is
 * `400 INVALID_INPUT` (`header.idempotency-key`).
 *
 * @example
 * export const sendMessage = (c: Context, s: Services) =>
 *   idempotent(c, s, 'send-message', SendMessageSchema, async (body, scope) => ({ status: 202, body: await s.signals.sendMessage(scope, body) }));
 */
export async function idempotent<S extends z.ZodType<{ resourceId?: string; agentId?: string }>>(
  c: Context,
  s: Services,
  route: string,
  schema: S,
  handle: (body: z.output<S>, scope: ThreadScope) => Promise<Answer>,
): Promise<Response> {
  const key = idempotencyKey(c);
  const raw = await readJsonBody(c, s.config.maxBodyBytes);
  const body = parseInput(schema, raw, 'body');
  const scope = await threadScope(c, s, body);
  if (key === undefined) return respond(c, await handle(body, scope));

  const recordKey = idempotencyRecordKey(route, scope.resourceId, key);
  const fingerprint = hash(canonical(raw));
  return s.locks.exclusive(`idempotency:${scope.threadId}:${recordKey}`, async () => {
    const found = await s.idempotency.get(scope.threadId, recordKey);
    if (found && found.expiresAt > Date.now()) {
      if (found.fingerprint !== fingerprint) {
        throw conflict(`Idempotency-Key "${key}" was already used on this route with a different request body: send a new request under a new key`);
      }
      return respond(c, { status: found.status as ContentfulStatusCode, body: found.body }, true);
    }
    if (found) await s.idempotency.delete(scope.threadId, recordKey);
    const answer = await handle(body, scope);
    if (answer.status >= 200 && answer.status < 300) {
      // The answer as its JSON, which is what a replay sends (dates as ISO strings).
      const json = JSON.parse(JSON.stringify(answer.body ?? null)) as unknown;
      const record: IdempotencyRecord = { status: answer.status, body: json, fingerprint, expiresAt: Date.now() + s.config.idempotencyTtlMs };
      // The request took effect: a record that cannot be written costs a retry its replay, not this answer.
      await s.idempotency.put(scope.threadId, recordKey, record).catch((error: unknown) =>
        s.config.logger.error(`Could not keep the answer for Idempotency-Key "${key}" on thread ${scope.threadId}: ${(error as Error)?.message}`, {
          stack: (error as Error)?.stack,
        }),
      );
    }
    return respond(c, answer);
  });
}

/**
 * The key a record is stored under (in the thread's slot): the route, the caller's resource and
 * the client's key, hashed, so that a client-chosen string never reaches storage as it is and
 * one key used on two routes, or by two resources, names two records.
 */
export function idempotencyRecordKey(route: string, resourceId: string, key: string): string {
  return hash([route, resourceId, key]);
}

/** The request's `Idempotency-Key`, validated; `undefined` when it sent none. */
function idempotencyKey(c: Context): string | undefined {
  const value = c.req.header(IDEMPOTENCY_KEY_HEADER);
  if (value === undefined) return undefined;
  return parseInput(KeyHeaderSchema, { 'idempotency-key': value }, 'header')['idempotency-key'];
}

function respond(c: Context, answer: Answer, replayed = false): Response {
  if (replayed) c.header(REPLAYED_HEADER, 'true');
  return c.json(answer.body as object, answer.status);
}

/** SHA-256, hex, of a string or of a value's JSON. */
function hash(value: unknown): string {
  return createHash('sha256')
    .update(typeof value === 'string' ? value : JSON.stringify(value))
    .digest('hex');
}

/** A JSON value's text with its object keys sorted: two bodies that differ only in key order are the same request. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
