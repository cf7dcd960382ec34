/**
 * What kind of failure an error is, for the one decision the bridge makes about it: a dependency
 * (storage, Redis) that cannot be reached right now is `503 UNAVAILABLE` / `RUN_ERROR
 * { code: "UNAVAILABLE" }` and heals; anything else is the model's or a defect.
 */
import { errorMessage } from '../text.js';

/** Socket and DNS errors of Node, and PostgreSQL's "connection exception" / "cannot connect now" SQLSTATEs. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ERR_SOCKET_CLOSED',
  'ERR_STREAM_DESTROYED',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  // LibSQL / SQLite: the file is locked by another writer for longer than its busy timeout.
  'SQLITE_BUSY',
]);

/** node-redis errors for a dead, closing or timed-out connection (by class: `name` is `Error`). */
const UNREACHABLE_NAMES = new Set([
  'ConnectionTimeoutError',
  'SocketClosedUnexpectedlyError',
  'SocketTimeoutError',
  'ClientClosedError',
  'ClientOfflineError',
  'DisconnectsClientError',
  'ReconnectStrategyError',
]);

/** Messages of drivers that say the same without a code (pg's pool, node-redis' timeouts). */
const UNREACHABLE_MESSAGES =
  /connection terminated|timeout exceeded when trying to connect|connection timeout|query read timeout|timeout expired|not queryable|the client is closed|the client is offline|disconnects client|socket closed unexpectedly|socket timeout|^(LOADING|MASTERDOWN|TRYAGAIN|CLUSTERDOWN)\b/i;

/** Errors of the model provider (the AI SDK names its errors `AI_…`): never a dependency of ours. */
const MODEL_NAMES = /^AI_/;

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** The error and everything it wraps (`cause`, an `AggregateError`'s `errors`), at most 8 deep. */
function* chain(error: unknown, depth = 0): Generator<ErrorLike> {
  if (depth > 8 || !error || typeof error !== 'object') return;
  const e = error as ErrorLike;
  yield e;
  yield* chain(e.cause, depth + 1);
  if (Array.isArray(e.errors)) for (const inner of e.errors) yield* chain(inner, depth + 1);
}

/**
 * Whether `error` says storage or Redis cannot be reached right now (refused, reset, timed out).
 *
 * @example
 * isUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })); // true
 * isUnavailable(new Error('relation "x" does not exist')); // false
 */
export function isUnavailable(error: unknown): boolean {
  for (const e of chain(error)) {
    if (typeof e.name === 'string' && MODEL_NAMES.test(e.name)) return false;
    if (typeof e.code === 'string' && UNREACHABLE_CODES.has(e.code)) return true;
    if (typeof e.name === 'string' && UNREACHABLE_NAMES.has(e.name)) return true;
    if (UNREACHABLE_NAMES.has((e as { constructor?: { name?: string } }).constructor?.name ?? '')) return true;
    if (typeof e.message === 'string' && UNREACHABLE_MESSAGES.test(e.message)) return true;
  }
  return false;
}

/** What a client is told when a run or a request was cut by storage or Redis. */
export const UNAVAILABLE_MESSAGE = 'Storage or Redis is unavailable; try again shortly';

// Hosts with a port, URLs with a scheme of a data store, and absolute paths of more than one part:
// what a driver's message carries about where it connects, and no client should learn.
const ADDRESS = /(?:\b\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:]+\]|\b[a-z0-9-]*[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)*):\d{2,5}\b/gi;
const STORE_URL = /\b(?:https?|postgres(?:ql)?|rediss?|libsql|file|mysql|mongodb(?:\+srv)?):\/?\/?\S+/gi;
const ABSOLUTE_PATH = /(?<![\w.])\/(?:[\w.-]+\/)+[\w.-]+/g;

/**
 * An error message with the addresses, store URLs and file paths it names taken out, for what a
 * client receives (`RUN_ERROR.message`); the whole message still goes to the log.
 *
 * @example
 * redactInternals('connect ECONNREFUSED 127.0.0.1:5433'); // 'connect ECONNREFUSED <address>'
 */
export function redactInternals(message: string): string {
  return message.replace(STORE_URL, '<address>').replace(ADDRESS, '<address>').replace(ABSOLUTE_PATH, '<path>');
}

/** The `RUN_ERROR` of a run whose process was lost before the run finished. */
export const LOST_RUN = { code: 'UNAVAILABLE', message: 'The run stopped before it finished: the process running it was lost' } as const;

/**
 * The `RUN_ERROR` code and message for a run cut by `error`: `UNAVAILABLE` with a plain sentence when
 * storage or Redis failed it, else `code` with the error's own message, internals taken out.
 *
 * @example
 * runFailure(new Error('demo model failure'), 'MODEL_ERROR'); // { code: 'MODEL_ERROR', message: 'demo model failure' }
 */
export function runFailure(error: unknown, code: string): { code: string; message: string } {
  return isUnavailable(error) ? { code: 'UNAVAILABLE', message: UNAVAILABLE_MESSAGE } : { code, message: redactInternals(errorMessage(error)) };
}

/**
 * Why a run Mastra streamed itself (one a signal woke) failed, in the words its `RUN_ERROR` on the
 * thread's stream used: a guardrail's reason (`TRIPWIRE`), else the error Mastra kept on the output.
 *
 * @example
 * wokenRunFailure({ error: new Error('model down') }); // { code: 'MODEL_ERROR', message: 'model down' }
 */
export function wokenRunFailure(output: { tripwire?: unknown; error?: unknown }): { code: string; message: string } {
  if (output.tripwire) return { code: 'TRIPWIRE', message: (output.tripwire as { reason?: string }).reason || GUARDRAIL_STOPPED };
  return runFailure(output.error ?? 'The run failed', 'MODEL_ERROR');
}

/** What a run a guardrail stopped without a reason says. */
export const GUARDRAIL_STOPPED = 'The run was stopped by a guardrail';
