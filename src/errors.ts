/** One problem with a request field: `path` is dotted (`forwardedProps.agentId`), `message` says what is wrong. */
export interface ErrorDetail {
  path: string;
  message: string;
}

export type ErrorCode =
  | 'INVALID_INPUT'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'AGENT_NOT_FOUND'
  | 'THREAD_NOT_FOUND'
  | 'RUN_NOT_FOUND'
  | 'TOOL_CALL_NOT_FOUND'
  | 'SCHEDULE_NOT_FOUND'
  | 'CONFLICT'
  /** A per-resource cap on what it keeps (`config.schedules.maxPerResource`). */
  | 'LIMIT_REACHED'
  /** A `/run` with `multitask: "reject"` on a thread that is running. */
  | 'THREAD_BUSY'
  | 'PAYLOAD_TOO_LARGE'
  | 'MEMORY_NOT_CONFIGURED'
  | 'INTERNAL_ERROR'
  /** A configured limit (requests per minute, open streams, concurrent runs). */
  | 'RATE_LIMITED'
  /** Storage, Redis or a key server unreachable: try again later. */
  | 'UNAVAILABLE'
  /** An unknown route (the standalone app's fallback). */
  | 'NOT_FOUND';

/**
 * An error the bridge answers with a definite status and code. Services throw these; the HTTP
 * layer maps them to `{ error, code, details? }` in one place.
 *
 * @example
 * throw new BridgeError(404, 'THREAD_NOT_FOUND', `Thread ${threadId} not found`);
 */
export class BridgeError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 429 | 500 | 503,
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    /** Headers the answer carries (`WWW-Authenticate` on a 401). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'BridgeError';
  }
}

export const invalidInput = (message: string, details?: ErrorDetail[]) => new BridgeError(400, 'INVALID_INPUT', message, details);
export const notFound = (code: 'AGENT_NOT_FOUND' | 'THREAD_NOT_FOUND' | 'RUN_NOT_FOUND' | 'TOOL_CALL_NOT_FOUND' | 'SCHEDULE_NOT_FOUND', message: string) =>
  new BridgeError(404, code, message);
/**
 * `404 RUN_NOT_FOUND`: a `resume` names an interrupt that does not wait on this thread, for any
 * reason (unknown, another thread's, answered already or being answered, superseded, declined),
 * whatever kind of run asked it: one situation, one code.
 */
export const interruptNotWaiting = (interruptId: string) => notFound('RUN_NOT_FOUND', `Nothing is waiting for interrupt ${interruptId} on this thread`);
export const conflict = (message: string) => new BridgeError(409, 'CONFLICT', message);
/** A `/run` with `multitask: "reject"` on a thread that is running. */
export const threadBusy = (message: string) => new BridgeError(409, 'THREAD_BUSY', message);
/** How a 401 says which credentials it wants (RFC 6750). */
const BEARER_CHALLENGE = 'Bearer realm="mastra-agui-bridge"';
/** `invalid` when a credential was sent and refused (RFC 6750's `invalid_token`), else no credential came. */
export const unauthorized = (message = 'Unauthorized', invalid = false) =>
  new BridgeError(401, 'UNAUTHORIZED', message, undefined, {
    'WWW-Authenticate': invalid ? `${BEARER_CHALLENGE}, error="invalid_token"` : BEARER_CHALLENGE,
  });
export const forbidden = (message: string) => new BridgeError(403, 'FORBIDDEN', message);
/** A limit refused the request; `Retry-After` in whole seconds (at least 1). */
export const rateLimited = (message: string, retryAfterSec: number) =>
  new BridgeError(429, 'RATE_LIMITED', message, undefined, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSec))) });
/** Something the answer depends on is down; `Retry-After` in seconds. */
export const unavailable = (message: string, retryAfterSec = 5) =>
  new BridgeError(503, 'UNAVAILABLE', message, undefined, { 'Retry-After': String(retryAfterSec) });

/** Thrown by `createBridge` when its configuration does not validate. */
export class BridgeConfigError extends Error {
  constructor(readonly details: ErrorDetail[]) {
    super(`Invalid mastra-agui-bridge config: ${details.map((d) => `${d.path || '(root)'}: ${d.message}`).join('; ')}`);
    this.name = 'BridgeConfigError';
  }
}
