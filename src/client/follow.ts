import { EventType, type BaseEvent } from '@ag-ui/client';
import { Observable } from 'rxjs';
import { BridgeRequestError, requestError } from './errors.js';
import { SseParser, type SseMessage } from './sse.js';
import type { FetchFn } from './types.js';

/** Where a followed stream is: opening, open, waiting to reopen after a drop, or stopped. */
export type ConnectionState = 'connecting' | 'live' | 'reconnecting' | 'closed';

/** A change of connection state, with what caused it. */
export interface ConnectionStatus {
  state: ConnectionState;
  /** Failed attempts in a row (0 while live). */
  attempt: number;
  /** With `reconnecting`: how long it waits before the next attempt, in milliseconds. */
  delayMs?: number;
  /** What broke the last connection or attempt, if anything did. */
  error?: unknown;
  /** The id it resumes from (sent as `Last-Event-ID`). */
  lastEventId?: string;
}

/** How a dropped stream is reopened. */
export interface ReconnectOptions {
  /** Delay before the first reconnect when the server sent no `retry:` hint (default 1000 ms). */
  initialDelayMs?: number;
  /** Cap of the exponential backoff (default 30 000 ms). */
  maxDelayMs?: number;
  /** Failed attempts in a row before giving up with the last error (default: never give up). */
  maxAttempts?: number;
  /** Random spread of each delay, 0–1 (default 0.2: a delay is 80–100 % of its nominal value). */
  jitter?: number;
}

/** Options of {@link followThreadEvents}. */
export interface ThreadEventsOptions {
  /** The full URL of `GET /threads/:threadId/events`, query (`resourceId`, `agentId`) included. */
  url: string;
  /** A `fetch` to use instead of the global one. */
  fetch?: FetchFn;
  /** Extra request headers (e.g. `Authorization`). */
  headers?: Record<string, string>;
  /** Resume after this id instead of starting live. */
  lastEventId?: string | number;
  /** Ask for `snapshot=1` (a history run first) when there is no id to resume from. */
  snapshot?: boolean;
  /**
   * How the id to resume from is sent: the `Last-Event-ID` header (default), or the `lastEventId`
   * query parameter (no CORS preflight for a cross-origin page).
   */
  lastEventIdIn?: 'header' | 'query';
  /** Reconnect policy, or `false` to end (error) when the connection drops. */
  reconnect?: ReconnectOptions | false;
  /** Called on every state change. */
  onStatus?: (status: ConnectionStatus) => void;
  /** Stops following (the observable completes). */
  signal?: AbortSignal;
  /** Waits before a reconnect (tests replace it; default `setTimeout`). Resolves early when `signal` aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** One AG-UI event of a thread stream, with its sequence id. */
export interface ThreadEventFrame {
  /** The SSE id (`undefined` only for an event the client made up, see `synthetic`). */
  id: string | undefined;
  event: BaseEvent;
  /**
   * Set on a `RUN_ERROR { code: "STREAM_GAP" }` the client inserts when a reconnect could not
   * replay the rest of an open run (the server sent a snapshot instead): it closes the broken run,
   * so the stream stays valid AG-UI (`verifyEvents`) and the snapshot that follows rebuilds it.
   */
  synthetic?: true;
}

const DEFAULTS = { initialDelayMs: 1000, maxDelayMs: 30_000, maxAttempts: Number.POSITIVE_INFINITY, jitter: 0.2 };

const defaultSleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });

/** 408, 425, 429 and 5xx are worth another try; any other error answer is final. */
const retryable = (status: number) => status === 408 || status === 425 || status === 429 || status >= 500;

function withQuery(url: string, params: Record<string, string>): string {
  const query = new URLSearchParams(params).toString();
  return query ? `${url}${url.includes('?') ? '&' : '?'}${query}` : url;
}

/** A frame that is not an AG-UI event: a broken server, not a broken connection (no retry). */
class StreamProtocolError extends Error {
  override name = 'StreamProtocolError';
}

function isEvent(value: unknown): value is BaseEvent {
  return !!value && typeof value === 'object' && !Array.isArray(value) && typeof (value as { type?: unknown }).type === 'string';
}

/**
 * Follows a thread's event stream (`GET /threads/:threadId/events`) over `fetch`, as an
 * EventSource would, but with headers: parses the SSE frames, emits each AG-UI event with its id,
 * and when the connection drops (network error, or the body ends) reopens it with `Last-Event-ID`
 * set to the last id seen, after the server's `retry:` hint (then exponential backoff while
 * attempts fail). An error answer other than 408/425/429/5xx ends it with a `BridgeRequestError`.
 * Unsubscribing (or `signal`) aborts the request and stops for good.
 *
 * @example
 * const sub = followThreadEvents({ url: `${base}/threads/t1/events?resourceId=u1`, snapshot: true }).subscribe({
 *   next: ({ id, event }) => console.log(id, event.type),
 * });
 * // later
 * sub.unsubscribe();
 */
export function followThreadEvents(options: ThreadEventsOptions): Observable<ThreadEventFrame> {
  return new Observable<ThreadEventFrame>((subscriber) => {
    const controller = new AbortController();
    // Nothing is reported after `closed`; unsubscribing reports `closed` at once.
    let closed = false;
    const onStatus = (status: ConnectionStatus) => {
      if (closed) return;
      closed = status.state === 'closed';
      options.onStatus?.(status);
    };
    const stop = () => {
      controller.abort();
      onStatus({ state: 'closed', attempt: 0 });
    };
    if (options.signal?.aborted) stop();
    options.signal?.addEventListener('abort', stop, { once: true });
    follow({ ...options, onStatus }, controller.signal, (frame) => subscriber.next(frame)).then(
      () => subscriber.complete(),
      (error: unknown) => (controller.signal.aborted ? subscriber.complete() : subscriber.error(error)),
    );
    return () => {
      options.signal?.removeEventListener('abort', stop);
      stop();
    };
  });
}

async function follow(options: ThreadEventsOptions, signal: AbortSignal, emit: (frame: ThreadEventFrame) => void): Promise<void> {
  const fetchFn: FetchFn = options.fetch ?? ((url, init) => fetch(url, init));
  const sleep = options.sleep ?? defaultSleep;
  const policy = options.reconnect === false ? undefined : { ...DEFAULTS, ...options.reconnect };
  const parser = new SseParser(options.lastEventId === undefined ? undefined : String(options.lastEventId));
  const request = `GET ${options.url}`;
  let retryHint: number | undefined;
  let failures = 0;
  let everLive = false;
  let runOpen = false;
  let lastError: unknown;
  const status = (state: ConnectionState, extra: Partial<ConnectionStatus> = {}) =>
    options.onStatus?.({ state, attempt: failures, ...(parser.lastEventId !== undefined && { lastEventId: parser.lastEventId }), ...extra });

  const deliver = (message: SseMessage) => {
    let event: unknown;
    try {
      event = JSON.parse(message.data);
    } catch {
      throw new StreamProtocolError(`Invalid event frame ${message.id ?? ''}: the data is not JSON`);
    }
    if (!isEvent(event)) throw new StreamProtocolError(`Invalid event frame ${message.id ?? ''}: not an object with a "type"`);
    if (event.type === EventType.RUN_STARTED) {
      if (runOpen) {
        const gap = { type: EventType.RUN_ERROR, message: 'The connection dropped and the rest of this run could not be replayed', code: 'STREAM_GAP' };
        emit({ id: undefined, event: gap as BaseEvent, synthetic: true });
      }
      runOpen = true;
    } else if (event.type === EventType.RUN_FINISHED || event.type === EventType.RUN_ERROR) {
      runOpen = false;
    }
    emit({ id: message.id, event });
  };

  const read = async (body: ReadableStream<Uint8Array>) => {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    const cancel = () => void reader.cancel().catch(() => {
      // the stream is being left: whatever cancelling it says, no one is listening
    });
    signal.addEventListener('abort', cancel, { once: true });
    parser.reset();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || signal.aborted) return;
        const chunk = parser.push(decoder.decode(value, { stream: true }));
        if (chunk.retry !== undefined) retryHint = chunk.retry;
        for (const message of chunk.messages) {
          if (signal.aborted) return;
          if (message.event === 'message') deliver(message);
        }
      }
    } finally {
      signal.removeEventListener('abort', cancel);
    }
  };

  status('connecting');
  try {
    await loop();
  } catch (error) {
    status('closed', { error });
    throw error;
  }
  status('closed');

  async function loop(): Promise<void> {
    while (!signal.aborted) {
      const lastEventId = parser.lastEventId;
      const query: Record<string, string> = {};
      if (lastEventId === undefined && options.snapshot) query.snapshot = '1';
      if (lastEventId !== undefined && options.lastEventIdIn === 'query') query.lastEventId = lastEventId;
      const headers: Record<string, string> = { Accept: 'text/event-stream', ...options.headers };
      if (lastEventId !== undefined && options.lastEventIdIn !== 'query') headers['Last-Event-ID'] = lastEventId;
      let response: Response | undefined;
      try {
        response = await fetchFn(withQuery(options.url, query), { method: 'GET', headers, signal });
      } catch (error) {
        if (signal.aborted) break;
        lastError = error;
      }
      if (response) {
        if (!response.ok) {
          const error = await requestError(response, request);
          if (!retryable(response.status)) throw error;
          lastError = error;
        } else if (!(response.headers.get('content-type') ?? '').includes('text/event-stream') || !response.body) {
          await response.body?.cancel().catch(() => {
            // an answer being thrown away: a body that will not cancel is dropped anyway
          });
          const type = response.headers.get('content-type') ?? 'none';
          throw new BridgeRequestError({ status: response.status, code: 'NOT_AN_EVENT_STREAM', message: `expected text/event-stream, got ${type}`, request });
        } else {
          failures = 0;
          everLive = true;
          status('live');
          try {
            await read(response.body);
            lastError = undefined;
          } catch (error) {
            if (signal.aborted) break;
            if (error instanceof StreamProtocolError) throw error;
            lastError = error;
          }
          if (signal.aborted) break;
        }
      }
      if (!policy) {
        if (lastError !== undefined) throw lastError;
        break;
      }
      failures++;
      if (failures > policy.maxAttempts) throw lastError ?? new Error('The event stream could not be reopened');
      const nominal = Math.min(policy.maxDelayMs, (retryHint ?? policy.initialDelayMs) * 2 ** (failures - 1));
      const delayMs = Math.round(nominal * (1 - Math.random() * Math.min(Math.max(policy.jitter, 0), 1)));
      status(everLive ? 'reconnecting' : 'connecting', { delayMs, ...(lastError !== undefined && { error: lastError }) });
      await sleep(delayMs, signal);
    }
  }
}
