import type { Context } from 'hono';

// What handlers learn of a request, for the request log: Hono context keys, used only below.
const RESOURCE_ID = 'resourceId';
const REQUEST_ID = 'requestId';
const REQUEST_ERROR = 'requestError';
const ERRORS_ON_REQUEST_LINE = 'errorsOnRequestLine';

/**
 * Records the resource the request was resolved to (`ResourceResolver`), for the request log.
 *
 * @example
 * setRequestResource(c, 'user-42');
 * requestResource(c); // 'user-42'
 */
export function setRequestResource(c: Context, resourceId: string): void {
  c.set(RESOURCE_ID, resourceId);
}

export function requestResource(c: Context): string | undefined {
  const value: unknown = c.get(RESOURCE_ID);
  return typeof value === 'string' ? value : undefined;
}

/** Records the request's id (the request log sets it first thing). */
export function setRequestId(c: Context, requestId: string): void {
  c.set(REQUEST_ID, requestId);
}

export function requestId(c: Context): string | undefined {
  const value: unknown = c.get(REQUEST_ID);
  return typeof value === 'string' ? value : undefined;
}

/**
 * Whether an unexpected error of this request goes on its request log line (with its stack)
 * rather than on a line of its own: true once the request log runs for it.
 */
export function errorsOnRequestLine(c: Context): boolean {
  return c.get(ERRORS_ON_REQUEST_LINE) === true;
}

/** Says that the request log will write the request's unexpected error (see `errorsOnRequestLine`). */
export function takeErrorsOnRequestLine(c: Context): void {
  c.set(ERRORS_ON_REQUEST_LINE, true);
}

/** Keeps the unexpected error a request was answered `500` for, for its log line. */
export function setRequestError(c: Context, error: unknown): void {
  c.set(REQUEST_ERROR, error);
}

export function requestError(c: Context): unknown {
  return c.get(REQUEST_ERROR);
}
