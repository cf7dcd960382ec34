import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ZodError } from 'zod';
import type { BridgeLogger } from '../logger.js';
import { BridgeError, type ErrorDetail } from '../errors.js';
import { errorsOnRequestLine, requestId, setRequestError } from '../observability/context.js';
import { isUnavailable, UNAVAILABLE_MESSAGE } from '../translate/failure.js';

/** The wire shape of every error answer. */
export interface ErrorBody {
  error: string;
  code: string;
  details?: ErrorDetail[];
}

/** Dotted paths and messages of a zod failure, for `details`. */
export function zodDetails(error: ZodError, prefix = ''): ErrorDetail[] {
  const dotted = (path: PropertyKey[]) => [prefix, ...path.map(String)].filter(Boolean).join('.');
  return error.issues.flatMap((issue) =>
    // A strict object reports its unknown keys on the object itself (path ''): name each key, so a
    // client can tell which field to drop.
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: dotted([...issue.path, key]), message: `Unrecognized key: "${key}"` }))
      : [{ path: dotted(issue.path), message: issue.message }],
  );
}

/**
 * Maps anything thrown by a handler or service to a status and an error body: the one place where
 * errors become HTTP. Unexpected errors are logged with their stack and answered `500 INTERNAL_ERROR`.
 */
export function toErrorBody(error: unknown, logger: BridgeLogger, reqId?: string): { status: ContentfulStatusCode; body: ErrorBody } {
  if (error instanceof BridgeError) {
    return { status: error.status, body: { error: error.message, code: error.code, ...(error.details && { details: error.details }) } };
  }
  if (error instanceof ZodError) {
    return { status: 400, body: { error: 'Invalid input', code: 'INVALID_INPUT', details: zodDetails(error) } };
  }
  const message = error instanceof Error ? error.message : String(error);
  if (isUnavailable(error)) {
    // An outage, not a defect: the client is told to come back, the log says what failed.
    logger.warn(`Dependency unavailable: ${message}`);
    return { status: 503, body: { error: UNAVAILABLE_MESSAGE, code: 'UNAVAILABLE' } };
  }
  logger.error(`Unexpected error: ${message}`, { stack: error instanceof Error ? error.stack : undefined });
  return { status: 500, body: { error: internalErrorMessage(reqId), code: 'INTERNAL_ERROR' } };
}

/** What a client is told of a defect: nothing of its detail (that is in the log), the request id to quote. */
export function internalErrorMessage(reqId: string | undefined): string {
  return reqId ? `Internal error (request id ${reqId})` : 'Internal error';
}

/** `Retry-After` of an answer to an outage, in seconds. */
const OUTAGE_RETRY_AFTER = { 'Retry-After': '2' };

/** Takes the unexpected error off the log for the request log to write, on the request's own line. */
const quiet: BridgeLogger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/**
 * Writes an error answer. Where the request log runs, an unexpected error goes on the request's
 * line (at `error`, with its stack and the request id) instead of a line of its own.
 */
export function errorResponse(c: Context, error: unknown, logger: BridgeLogger): Response {
  const onRequestLine = errorsOnRequestLine(c);
  const { status, body } = toErrorBody(error, onRequestLine && !isUnavailable(error) ? quiet : logger, requestId(c));
  if (onRequestLine && body.code === 'INTERNAL_ERROR') setRequestError(c, error);
  const headers = error instanceof BridgeError ? error.headers : status === 503 ? OUTAGE_RETRY_AFTER : undefined;
  return c.json(body, status, headers);
}
