import { context } from '@opentelemetry/api';
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import type { BridgeLogger } from '../logger.js';
import { errorMessage } from '../text.js';
import { requestError, requestResource, setRequestId, takeErrorsOnRequestLine } from './context.js';

/** The header a request id comes in and goes back out in. */
export const REQUEST_ID_HEADER = 'X-Request-Id';

/** An incoming id is kept only if short and plain: it goes into every log line of the request. */
const SAFE_REQUEST_ID = /^[\w.:-]{1,64}$/;

/** What every request line says. No URL, query, header or body: they may hold tokens and contents. */
export interface RequestLogFields {
  reqId: string;
  method: string;
  /** The route pattern (`/agui/threads/:threadId/events`), never the concrete path. */
  route: string;
  status: number;
  durationMs: number;
  resourceId?: string;
}

/**
 * The caller's `X-Request-Id` when it is short and safe (letters, digits, `_ . : -`, at most 64),
 * else a new UUID.
 *
 * @example
 * requestIdFrom('req-42');      // 'req-42'
 * requestIdFrom('a b\nforged'); // a new UUID
 */
export function requestIdFrom(header: string | undefined): string {
  return header !== undefined && SAFE_REQUEST_ID.test(header) ? header : randomUUID();
}

/**
 * One log line per request, at `info`: request id, method, route pattern, status, duration,
 * resource. A `500` for an unexpected error is at `error`, with its stack (logged there, once);
 * another 5xx at `warn`. A stream (SSE or protobuf) is logged when its headers go out and again
 * when it ends. The request id (the caller's, or a new one) goes back in `X-Request-Id`.
 */
export function requestLog(logger: BridgeLogger, route: string): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    const reqId = requestIdFrom(c.req.header(REQUEST_ID_HEADER));
    setRequestId(c, reqId);
    takeErrorsOnRequestLine(c);
    await next();
    sendBack(c, reqId);
    const fields = lineFields(c, reqId, route, started);
    if (fields.status >= 500) logFailure(logger, fields, requestError(c));
    else if (!isStream(c.res)) logger.info('request', { ...fields });
    else {
      logger.info('stream opened', { ...fields });
      // Written from the socket's close, outside the request: in its trace all the same.
      const request = context.active();
      onResponseClosed(c, () => context.with(request, () => logger.info('stream closed', { ...fields, durationMs: elapsedMs(started) })));
    }
  };
}

/** A 5xx: a defect at `error` with its stack; an answer the bridge meant (503, a missing memory) at `warn`. */
function logFailure(logger: BridgeLogger, fields: RequestLogFields, error: unknown): void {
  if (error === undefined) return logger.warn('request failed', { ...fields });
  // Under `err`, where pino's serializer writes its type, message and stack.
  logger.error('request failed', { ...fields, err: error instanceof Error ? error : new Error(errorMessage(error)) });
}

/** Sets `X-Request-Id` on the answer; a response with immutable headers is copied first. */
function sendBack(c: Context, reqId: string): void {
  try {
    c.res.headers.set(REQUEST_ID_HEADER, reqId);
  } catch {
    c.res = new Response(c.res.body, c.res);
    c.res.headers.set(REQUEST_ID_HEADER, reqId);
  }
}

function lineFields(c: Context, reqId: string, route: string, started: number): RequestLogFields {
  const resourceId = requestResource(c);
  return { reqId, method: c.req.method, route, status: c.res.status, durationMs: elapsedMs(started), ...(resourceId !== undefined && { resourceId }) };
}

const elapsedMs = (started: number) => Math.round((performance.now() - started) * 1000) / 1000;

function isStream(res: Response): boolean {
  const type = res.headers.get('content-type') ?? '';
  return type.startsWith('text/event-stream') || type.startsWith('application/vnd.ag-ui.event+proto');
}

/**
 * Runs `listener` when the response ends (complete, or the client left), where the Node server
 * (`@hono/node-server`, which Mastra's server also runs on) tells: its `close` event costs nothing
 * per chunk, where wrapping the body would. Elsewhere there is no second line.
 */
function onResponseClosed(c: Context, listener: () => void): void {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  outgoing?.once('close', listener);
}
