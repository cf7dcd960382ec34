import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import { z } from 'zod';
import { conflict } from '../errors.js';
import type { IdempotencyRecord } from '../idempotency/idempotency-store.js';
import type { ThreadScope } from '../threads/thread-store.js';
import type { Services } from './services.js';

/** The answer header that marks a replayed answer. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** A route's JSON answer before it becomes a response: what is remembered for a retry. */
export interface Answer {
  status: number;
  body?: unknown;
}

const KEY_RULE = 'must be 1 to 256 printable ASCII characters';
/** The header of every idempotent route; optional (without it, nothing of this runs). */
export const IdempotencyHeaderSchema = z.object({
  'idempotency-key': z
    .string()
    .regex(/^[\x20-\x7e]{1,256}$/, KEY_RULE)
    .optional(),
});

/** Where an idempotent request stands: its route's key, the caller's scope, its `Idempotency-Key` and its body as sent. */
export interface IdempotentRequest {
  route: string;
  scope: ThreadScope;
  key: string;
  raw: unknown;
}

/**
 * Answers a steering request sent with an `Idempotency-Key` (`RouteSpec.idempotent`): the first
 * successful (2xx) answer is kept for `idempotencyTtlMs` under the thread, the route, the caller's
 * resource and the key:
 *
 * - a retry with the same body gets that answer again, with `Idempotent-Replayed: true`, and
 *   `handle` is not called (nothing is sent, stored or run twice);
 * - the same key with another body is `409 CONFLICT`;
 * - an error answer is not kept: a retry tries again;
 * - two requests with one key run one after the other (in this process: see `ThreadLocks`), so
 *   the second one replays the first.
 */
export async function idempotent(c: Context, s: Services, { route, scope, key, raw }: IdempotentRequest, handle: () => Promise<Answer>): Promise<Answer> {
  const recordKey = idempotencyRecordKey(route, scope.resourceId, key);
  const fingerprint = hash(canonical(raw));
  return s.locks.exclusive(`idempotency:${scope.threadId}:${recordKey}`, async () => {
    const found = await s.idempotency.get(scope.threadId, recordKey);
    if (found && found.expiresAt > Date.now()) {
      if (found.fingerprint !== fingerprint) {
        throw conflict(`Idempotency-Key "${key}" was already used on this route with a different request body: send a new request under a new key`);
      }
      c.header(REPLAYED_HEADER, 'true');
      return { status: found.status, body: found.body };
    }
    if (found) await s.idempotency.delete(scope.threadId, recordKey);
    const answer = await handle();
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
    return answer;
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
