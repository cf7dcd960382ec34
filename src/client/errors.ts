import type { ErrorBody, ErrorDetail } from './types.js';

/**
 * An error answer of the bridge (`{ error, code, details? }` with a non-2xx status), or a
 * non-JSON error answer from something in between (then `code` is `HTTP_<status>`).
 *
 * @example
 * try {
 *   await client.sendMessage('someone-elses-thread', 'hi');
 * } catch (error) {
 *   if (error instanceof BridgeRequestError && error.code === 'THREAD_NOT_FOUND') showNotFound();
 * }
 */
export class BridgeRequestError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** The bridge's error code (`INVALID_INPUT`, `THREAD_NOT_FOUND`, …), or `HTTP_<status>`. */
  readonly code: string;
  /** Which fields were wrong, for `400 INVALID_INPUT`. */
  readonly details: ErrorDetail[] | undefined;
  /** The method and URL of the request. */
  readonly request: string;

  constructor(init: { status: number; code: string; message: string; details?: ErrorDetail[]; request: string }) {
    super(`${init.request} → ${init.status} ${init.code}: ${init.message}`);
    this.name = 'BridgeRequestError';
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.request = init.request;
  }
}

function isErrorBody(value: unknown): value is ErrorBody {
  if (!value || typeof value !== 'object') return false;
  const body = value as Record<string, unknown>;
  return typeof body.error === 'string' && typeof body.code === 'string';
}

/** Builds the error for a non-2xx answer, reading its body (the body is consumed). */
export async function requestError(response: Response, request: string): Promise<BridgeRequestError> {
  const text = await response.text().catch(() => '');
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (isErrorBody(parsed)) {
    return new BridgeRequestError({ status: response.status, code: parsed.code, message: parsed.error, details: parsed.details, request });
  }
  const message = text.trim().slice(0, 500) || response.statusText || 'request failed';
  return new BridgeRequestError({ status: response.status, code: `HTTP_${response.status}`, message, request });
}
