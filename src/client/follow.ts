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

function follow(options: ThreadEventsOptions, signal: AbortSignal, emit: (frame: ThreadEventFrame) => void): Promise<void> {
  return new Follower(options, signal, emit).run();
}

/** One following of a thread's stream: its connections, one after another, and what they share (the last id, the backoff, whether a run is open). */
class Follower {
  private readonly fetchFn: FetchFn;
  private readonly sleep: NonNullable<ThreadEventsOptions['sleep']>;
  private readonly policy: typeof DEFAULTS | undefined;
  private readonly parser: SseParser;
  private readonly request: string;
  private retryHint: number | undefined;
  private failures = 0;
  private everLive = false;
  private runOpen = false;
  private lastError: Error | undefined;

  constructor(
    private readonly options: ThreadEventsOptions,
    private readonly signal: AbortSignal,
    private readonly emit: (frame: ThreadEventFrame) => void,
  ) {
    this.fetchFn = options.fetch ?? ((url, init) => fetch(url, init));
    this.sleep = options.sleep ?? defaultSleep;
    this.policy = options.reconnect === false ? undefined : { ...DEFAULTS, ...options.reconnect };
    this.parser = new SseParser(options.lastEventId === undefined ? undefined : String(options.lastEventId));
    this.request = `GET ${options.url}`;
  }

  async run(): Promise<void> {
    this.status('connecting');
    try {
      await this.loop();
    } catch (error) {
      this.status('closed', { error });
      throw error;
    }
    this.status('closed');
  }

  private status(state: ConnectionState, extra: Partial<ConnectionStatus> = {}): void {
    const { lastEventId } = this.parser;
    this.options.onStatus?.({ state, attempt: this.failures, ...(lastEventId !== undefined && { lastEventId }), ...extra });
  }

  private async loop(): Promise<void> {
    const { signal } = this;
    while (!signal.aborted) {
      let response: Response | undefined;
      try {
        response = await this.open();
      } catch (error) {
        if (signal.aborted) break;
        this.lastError = asError(error);
      }
      if (response && (await this.stream(response)) === 'stopped') break;
      if (!this.policy) {
        if (this.lastError !== undefined) throw this.lastError;
        break;
      }
      await this.backOff(this.policy);
    }
  }

  /** Opens the stream after the last id seen (or with a snapshot, the first time, when asked). */
  private open(): Promise<Response> {
    const { options, parser } = this;
    const lastEventId = parser.lastEventId;
    const query: Record<string, string> = {};
    if (lastEventId === undefined && options.snapshot) query.snapshot = '1';
    if (lastEventId !== undefined && options.lastEventIdIn === 'query') query.lastEventId = lastEventId;
    const headers: Record<string, string> = { Accept: 'text/event-stream', ...options.headers };
    if (lastEventId !== undefined && options.lastEventIdIn !== 'query') headers['Last-Event-ID'] = lastEventId;
    return this.fetchFn(withQuery(options.url, query), { method: 'GET', headers, signal: this.signal });
  }

  /** Reads one answer to its end; an answer that cannot be retried throws. */
  private async stream(response: Response): Promise<'stopped' | 'ended'> {
    if (!response.ok) {
      const error = await requestError(response, this.request);
      if (!retryable(response.status)) throw error;
      this.lastError = asError(error);
      return 'ended';
    }
    if (!(response.headers.get('content-type') ?? '').includes('text/event-stream') || !response.body) {
      await response.body?.cancel().catch(() => {
        // an answer being thrown away: a body that will not cancel is dropped anyway
      });
      const type = response.headers.get('content-type') ?? 'none';
      throw new BridgeRequestError({
        status: response.status,
        code: 'NOT_AN_EVENT_STREAM',
        message: `expected text/event-stream, got ${type}`,
        request: this.request,
      });
    }
    this.failures = 0;
    this.everLive = true;
    this.status('live');
    try {
      await this.read(response.body);
      this.lastError = undefined;
    } catch (error) {
      if (this.signal.aborted) return 'stopped';
      if (error instanceof StreamProtocolError) throw error;
      this.lastError = asError(error);
    }
    return this.signal.aborted ? 'stopped' : 'ended';
  }

  /** Waits before the next attempt: the server's `retry:` hint (else the first delay), doubled per failure, with jitter. */
  private async backOff(policy: typeof DEFAULTS): Promise<void> {
    this.failures++;
    if (this.failures > policy.maxAttempts) throw this.lastError ?? new Error('The event stream could not be reopened');
    const nominal = Math.min(policy.maxDelayMs, (this.retryHint ?? policy.initialDelayMs) * 2 ** (this.failures - 1));
    const delayMs = Math.round(nominal * (1 - Math.random() * Math.min(Math.max(policy.jitter, 0), 1)));
    this.status(this.everLive ? 'reconnecting' : 'connecting', { delayMs, ...(this.lastError !== undefined && { error: this.lastError }) });
    await this.sleep(delayMs, this.signal);
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const { signal, parser } = this;
    const reader = body.getReader();
    const decoder = new TextDecoder();
    const cancel = () =>
      void reader.cancel().catch(() => {
        // the stream is being left: whatever cancelling it says, no one is listening
      });
    signal.addEventListener('abort', cancel, { once: true });
    parser.reset();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || signal.aborted) return;
        const chunk = parser.push(decoder.decode(value, { stream: true }));
        if (chunk.retry !== undefined) this.retryHint = chunk.retry;
        for (const message of chunk.messages) {
          if (signal.aborted) return;
          if (message.event === 'message') this.deliver(message);
        }
      }
    } finally {
      signal.removeEventListener('abort', cancel);
    }
  }

  /** Emits one frame's event; a run that starts while one is open means the rest of that one was lost: a `STREAM_GAP` error first. */
  private deliver(message: SseMessage): void {
    let event: unknown;
    try {
      event = JSON.parse(message.data);
    } catch {
      throw new StreamProtocolError(`Invalid event frame ${message.id ?? ''}: the data is not JSON`);
    }
    if (!isEvent(event)) throw new StreamProtocolError(`Invalid event frame ${message.id ?? ''}: not an object with a "type"`);
    if (event.type === EventType.RUN_STARTED) {
      if (this.runOpen) {
        const gap = { type: EventType.RUN_ERROR, message: 'The connection dropped and the rest of this run could not be replayed', code: 'STREAM_GAP' };
        this.emit({ id: undefined, event: gap, synthetic: true });
      }
      this.runOpen = true;
    } else if (event.type === EventType.RUN_FINISHED || event.type === EventType.RUN_ERROR) {
      this.runOpen = false;
    }
    this.emit({ id: message.id, event });
  }
}

/** What a failed attempt threw, as an `Error` (a fetch or a read throws one; anything else is kept as its cause). */
function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error('The event stream failed', { cause: error });
}
