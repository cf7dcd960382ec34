import { defaultApplyEvents, enforceEvents, transformChunks, verifyEvents, type AbstractAgent, type BaseEvent, type Message } from '@ag-ui/client';
import { from, lastValueFrom, toArray } from 'rxjs';
import { errorMessage } from '../../src/text.js';

/** An AG-UI event as the tests read it (any field reachable). */
export type AnyEvent = BaseEvent & Record<string, any>;

/** One SSE frame: an event with its `id:`, a comment, or a `retry:` hint (a frame may hold several). */
export interface SseFrame {
  id?: number;
  event?: AnyEvent;
  comments: string[];
  retry?: number;
}

/** An event frame with its sequence id. */
export interface IdEvent {
  /**
   * The id a client would resume from after this event, as `EventSource` keeps it: the frame's own
   * `id:`, else the last one before it on this stream, else the `Last-Event-ID` it was opened with;
   * `NaN` when there is none (a client would send no id).
   */
  id: number;
  event: AnyEvent;
}

/** How the body ended: `done` (closed cleanly) or `error` (broken off), with the error. */
export interface SseEnd {
  kind: 'done' | 'error';
  error?: unknown;
}

type Waiter = { check: () => boolean; resolve: () => void; reject: (error: Error) => void; label: string };

/**
 * A plain SSE reader for `GET /threads/:threadId/events`: parses `id:` / `data:` / comments /
 * `retry:` frames as they arrive (LF framing only; a CR fails the reader), and lets a test wait on
 * what arrives, never on time.
 *
 * @example
 * const sse = await openSse(`${base}/threads/t1/events?resourceId=u1`);
 * await sse.waitForEvent((e) => e.type === 'RUN_FINISHED');
 * sse.close();
 */
export class SseReader {
  /** Every frame, in arrival order. */
  readonly frames: SseFrame[] = [];
  /** Every event frame with its id, in arrival order. */
  readonly events: IdEvent[] = [];
  /** Every comment line (without the leading `:` and one space). */
  readonly comments: string[] = [];
  /** The `retry:` hints seen. */
  readonly retries: number[] = [];
  /** Raw text read so far (for assertions on framing). */
  text = '';
  /** Set once the body ended. */
  end?: SseEnd;
  /** Resolves when the body ends, cleanly or not. */
  readonly ended: Promise<SseEnd>;

  private readonly controller?: AbortController;
  private waiters: Waiter[] = [];
  private buffer = '';
  private reader?: ReadableStreamDefaultReader<Uint8Array>;
  private closing = false;
  /** `EventSource`'s last event id: where a reconnect would resume. */
  private lastEventId: number;

  constructor(
    readonly response: Response,
    controller?: AbortController,
    lastEventId?: number | string,
  ) {
    this.controller = controller;
    this.lastEventId = lastEventId === undefined ? Number.NaN : Number(lastEventId);
    this.ended = this.pump();
  }

  get status(): number {
    return this.response.status;
  }

  /** Just the events, without ids. */
  get list(): AnyEvent[] {
    return this.events.map((e) => e.event);
  }

  /** Resolves once `check()` is true (re-checked on every frame); rejects if the body ends first. */
  waitFor(check: () => boolean, label = 'condition'): Promise<void> {
    if (check()) return Promise.resolve();
    if (this.end) return Promise.reject(this.endedError(label));
    return new Promise((resolve, reject) => this.waiters.push({ check, resolve, reject, label }));
  }

  /** The first event (from index `from` of `events`) that matches, already here or still to come. */
  async waitForEvent(predicate: (e: AnyEvent) => boolean, from = 0, label = 'event'): Promise<IdEvent & { index: number }> {
    let found = -1;
    const check = () => {
      found = this.events.findIndex((e, i) => i >= from && predicate(e.event));
      return found >= 0;
    };
    await this.waitFor(check, label);
    return { ...this.events[found], index: found };
  }

  /** Resolves once `n` events of `type` (counted from index `from`) have arrived. */
  waitForCount(type: string, n: number, from = 0): Promise<void> {
    return this.waitFor(() => this.events.slice(from).filter((e) => e.event.type === type).length >= n, `${n}× ${type}`);
  }

  /** Resolves once a comment equal to `text` has arrived. */
  waitForComment(text: string): Promise<void> {
    return this.waitFor(() => this.comments.includes(text), `comment "${text}"`);
  }

  /** Leaves: aborts the request (the server sees the client go) and waits for the reader to stop. */
  async close(): Promise<void> {
    this.closing = true;
    this.controller?.abort();
    await this.reader?.cancel().catch(() => {
      // closing: a reader that will not cancel is dropped with the response
    });
    await this.ended;
  }

  private async pump(): Promise<SseEnd> {
    const body = this.response.body;
    if (!body) return this.finish({ kind: 'done' });
    this.reader = body.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { value, done } = await this.reader.read();
        if (done) break;
        const chunk = decoder.decode(value, { stream: true });
        this.text += chunk;
        this.buffer += chunk;
        if (this.buffer.includes('\r')) throw new Error('SSE frame with CR framing');
        this.parseFrames();
      }
      if (this.buffer.trim()) throw new Error(`SSE body ended inside a frame: ${JSON.stringify(this.buffer.slice(0, 200))}`);
      return this.finish({ kind: 'done' });
    } catch (error) {
      return this.finish(this.closing ? { kind: 'done' } : { kind: 'error', error });
    }
  }

  private parseFrames(): void {
    for (let end = this.buffer.indexOf('\n\n'); end >= 0; end = this.buffer.indexOf('\n\n')) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      this.addFrame(parseFrame(block));
    }
  }

  private addFrame(frame: SseFrame): void {
    this.frames.push(frame);
    this.comments.push(...frame.comments);
    if (frame.retry !== undefined) this.retries.push(frame.retry);
    if (frame.id !== undefined) this.lastEventId = frame.id;
    if (frame.event) this.events.push({ id: this.lastEventId, event: frame.event });
    this.waiters = this.waiters.filter((w) => (w.check() ? (w.resolve(), false) : true));
  }

  private finish(end: SseEnd): SseEnd {
    this.end = end;
    for (const w of this.waiters) w.reject(this.endedError(w.label));
    this.waiters = [];
    return end;
  }

  private endedError(label: string): Error {
    const tail = this.events.slice(-8).map((e) => `${e.id}:${e.event.type}`);
    return new Error(`SSE body ended (${this.end?.kind}: ${errorMessage(this.end?.error ?? '')}) before ${label}; last events: ${tail.join(', ')}`);
  }
}

/** Parses one SSE block (the text between blank lines). */
export function parseFrame(block: string): SseFrame {
  const frame: SseFrame = { comments: [] };
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) {
      frame.comments.push(line.slice(1).replace(/^ /, ''));
      continue;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') data.push(value);
    else if (field === 'id') frame.id = Number(value);
    else if (field === 'retry') frame.retry = Number(value);
  }
  if (data.length > 0) frame.event = JSON.parse(data.join('\n')) as AnyEvent;
  return frame;
}

export interface OpenSseOptions {
  /** Sent as the `Last-Event-ID` header. */
  lastEventId?: number | string;
  headers?: Record<string, string>;
}

/** Opens the stream and starts reading it at once. Non-2xx answers are read too (check `status`). */
export async function openSse(url: string, options: OpenSseOptions = {}): Promise<SseReader> {
  const controller = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers };
  if (options.lastEventId !== undefined) headers['last-event-id'] = String(options.lastEventId);
  const response = await fetch(url, { headers, signal: controller.signal });
  return new SseReader(response, controller, options.lastEventId ?? options.headers?.['last-event-id']);
}

/** Starts reading a response that was fetched earlier and left unread (a slow client catching up). */
export function readSse(response: Response, controller?: AbortController): SseReader {
  return new SseReader(response, controller);
}

/** The events split into brackets, each from its `RUN_STARTED` through its terminal event (the last one maybe still open). */
export function brackets(events: AnyEvent[]): AnyEvent[][] {
  const out: AnyEvent[][] = [];
  for (const event of events) {
    if (event.type === 'RUN_STARTED') out.push([]);
    out[out.length - 1]?.push(event);
  }
  return out;
}

export const isTerminal = (e: AnyEvent) => e.type === 'RUN_FINISHED' || e.type === 'RUN_ERROR';

/**
 * Runs a whole thread stream through `@ag-ui/client`'s strict pipeline (enforce → transform →
 * verify) and returns what it let through, with every `console.warn` the client printed.
 */
export async function verifyThreadEvents(events: AnyEvent[]): Promise<{ verified: BaseEvent[]; warnings: string[] }> {
  const warnings: string[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => warnings.push(args.map(String).join(' '));
  try {
    const verified = await lastValueFrom(from(events).pipe(enforceEvents(), transformChunks(), verifyEvents(), toArray()));
    return { verified, warnings };
  } finally {
    console.warn = warn;
  }
}

/**
 * The messages a client ends up with after folding `events` with `@ag-ui/client`'s own reducer
 * (what `HttpAgent` keeps in `agent.messages`), starting from no messages.
 */
export async function foldMessages(events: AnyEvent[]): Promise<Message[]> {
  const agent = { messages: [], state: {}, pendingInterrupts: [] } as unknown as AbstractAgent;
  const input = { threadId: 'fold', runId: 'fold', messages: [], tools: [], context: [], state: {}, forwardedProps: {} };
  let messages: Message[] = [];
  const warnings: string[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => warnings.push(args.map(String).join(' '));
  try {
    const mutations = await lastValueFrom(defaultApplyEvents(input, from(events), agent, []).pipe(toArray()));
    for (const mutation of mutations) if (mutation.messages) messages = mutation.messages;
  } finally {
    console.warn = warn;
  }
  if (warnings.length > 0) throw new Error(`client warnings while folding: ${warnings.join(' | ')}`);
  return messages;
}
