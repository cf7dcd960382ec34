import type { ServerResponse } from 'node:http';
import type { Event } from '@ag-ui/core';
import { EventEncoder } from '@ag-ui/encoder';
import { HIGH_WATER_BYTES, responseSink, type ResponseSink } from './response-sink.js';

export { nodeResponseOf } from './response-sink.js';

const PROTO_MEDIA_TYPE = 'application/vnd.ag-ui.event+proto';
/** Pending frames past this many characters (or bytes, for protobuf) are flushed mid-turn. */
const FLUSH_CHARS = 16 * 1024;
/**
 * How long, inside one long turn, a frame waits for others to share its write: under a frame at
 * 60 Hz, so no reader sees the difference, while a saturated server makes far fewer writes
 * (docs/performance.md has the numbers).
 */
const MAX_HOLD_MS = 10;
const utf8 = new TextEncoder();
/** SSE frames do not depend on the request (only protobuf does): one encoder serves every shared frame. */
const sseEncoder = new EventEncoder();
/** The SSE frame of each event sent with `sendShared`, for as long as the event lives (a feed's replay ring). */
const sharedFrames = new WeakMap<Event, string>();

function sharedFrame(event: Event): string {
  let frame = sharedFrames.get(event);
  if (frame === undefined) {
    frame = sseEncoder.encodeSSE(event);
    sharedFrames.set(event, frame);
  }
  return frame;
}

/**
 * The SSE bytes of each batch sent with `sendShared` (a feed hands the same array to all of its
 * clients): frames and ids joined and UTF-8 encoded once, so a thread with 10,000 followers encodes
 * a batch once, not 10,000 times.
 */
const sharedBatches = new WeakMap<readonly Event[], { firstId: number | undefined; bytes: Uint8Array }>();

function sharedBatch(events: readonly Event[], firstId: number | undefined): Uint8Array {
  const cached = sharedBatches.get(events);
  if (cached && cached.firstId === firstId) return cached.bytes;
  let text = '';
  for (let i = 0; i < events.length; i++) text += firstId === undefined ? sharedFrame(events[i]) : `id: ${firstId + i}\n${sharedFrame(events[i])}`;
  const bytes = utf8.encode(text);
  sharedBatches.set(events, { firstId, bytes });
  return bytes;
}

/**
 * Streams with frames pending, flushed when the event-loop turn ends: one `setImmediate` for all
 * of them, not one per stream (a thread's fan-out touches every follower's stream each turn).
 */
const endingTurn = new Set<() => void>();

function endTurnLater(endTurn: () => void): void {
  if (endingTurn.size === 0) setImmediate(endTurns);
  endingTurn.add(endTurn);
}

function endTurns(): void {
  const ends = [...endingTurn];
  endingTurn.clear();
  for (const endTurn of ends) endTurn();
}

/**
 * An encoder for a request: protobuf only when `Accept` names it explicitly. `@ag-ui/encoder`
 * picks protobuf for any Accept that admits it, `*∕*` included, which would hand curl binary.
 */
export function encoderFor(accept: string | undefined): EventEncoder {
  return accept?.includes(PROTO_MEDIA_TYPE) ? new EventEncoder({ accept }) : new EventEncoder();
}

/**
 * One streamed HTTP response of AG-UI events (SSE with LF framing, or protobuf frames).
 *
 * Frames are coalesced into one chunk (one socket write), flushed when the event-loop turn ends,
 * when the oldest pending frame has waited `MAX_HOLD_MS`, or once `FLUSH_CHARS` are pending. A
 * burst of tiny deltas (or a thread's run start and its user echo, sent to a thousand clients)
 * thus costs one syscall, not one each, and a Mastra loop that streams a whole answer in one
 * turn (a zero-delay model never waits for I/O) still reaches the client as it goes, not at the
 * end. There is no timer: the hold is checked when the next frame comes, so a frame never waits
 * past the end of its turn. The response's first frame is never held: a run's `RUN_STARTED`
 * leaves before Mastra's loop starts, however busy the event loop is with other runs. `ready()`
 * applies backpressure when the client reads slower than the producer. Under `@hono/node-server`
 * (`outgoing`: the request's `ServerResponse`, `nodeResponseOf(c.env)`) the bytes go to Node's
 * response directly, with no web stream on the way (`response-sink.ts`).
 */
export class EventStream {
  readonly response: Response;
  private readonly sink: ResponseSink;
  private readonly encoder: EventEncoder;
  private readonly sse: boolean;
  /** What waits for the next write, in order: SSE text, or bytes (a shared batch, protobuf frames). */
  private pendingParts: Array<string | Uint8Array> = [];
  /** The pending parts' length (characters or bytes): when to flush mid-turn. */
  private pendingSize = 0;
  /** Bytes flushed since the turn began: not yet a sign that the client is behind (see `queuedBytes`). */
  private turnBytes = 0;
  /** The largest chunk ever written: a client reading one large frame is not behind (see `queuedBytes`). */
  private largestChunk = 0;
  /** Set from the first frame of a turn until the turn ends. */
  private inTurn = false;
  /** When the oldest pending frame was queued (`performance.now()`), or -1 with nothing pending. */
  private pendingSince = -1;
  /** Whether anything was flushed yet: the response's first bytes are never held. */
  private flushedAny = false;
  private done = false;
  private waiters: Array<() => void> = [];
  private cancelListeners: Array<() => void> = [];

  constructor(encoder: EventEncoder, headers: Record<string, string> = {}, outgoing?: ServerResponse) {
    this.encoder = encoder;
    this.sse = encoder.getContentType() !== PROTO_MEDIA_TYPE;
    this.sink = responseSink(outgoing, { drained: () => this.release(), cancelled: () => this.cancelled() });
    this.response = new Response(this.sink.body, {
      status: 200,
      headers: {
        'Content-Type': encoder.getContentType(),
        'Cache-Control': 'no-cache',
        'X-Accel-Buffering': 'no',
        ...headers,
      },
    });
  }

  /** Whether the stream is closed (by us or by the client). */
  get closed(): boolean {
    return this.done;
  }

  /** Queues events; with `id`, each SSE frame carries `id: <id + index>` (EventSource resumption). */
  send(events: readonly Event[], firstId?: number): void {
    this.append(events, firstId, false);
  }

  /**
   * Like `send`, for event objects that go to many streams (a thread's fan-out): each one's SSE
   * frame is encoded once, by the first stream that sends it, and reused by the others.
   */
  sendShared(events: readonly Event[], firstId?: number): void {
    this.append(events, firstId, true);
  }

  private append(events: readonly Event[], firstId: number | undefined, shared: boolean): void {
    if (this.done) return;
    if (this.sse && shared) this.queue(sharedBatch(events, firstId));
    else {
      for (let i = 0; i < events.length; i++) {
        if (!this.sse) this.queue(this.encoder.encodeBinary(events[i]));
        else {
          const frame = this.encoder.encodeSSE(events[i]);
          this.queue(firstId === undefined ? frame : `id: ${firstId + i}\n${frame}`);
        }
      }
    }
    this.pending();
  }

  /** Adds a part to what is pending; text joins the text before it. */
  private queue(part: string | Uint8Array): void {
    const last = this.pendingParts.length - 1;
    if (typeof part === 'string' && typeof this.pendingParts[last] === 'string') this.pendingParts[last] += part;
    else this.pendingParts.push(part);
    this.pendingSize += typeof part === 'string' ? part.length : part.byteLength;
  }

  /** Writes raw SSE lines (comments, `retry:`); ignored on a protobuf stream. */
  raw(text: string): void {
    if (this.done || !this.sse) return;
    this.queue(text);
    this.pending();
  }

  /** Whether the client is behind: a producer should wait for `ready()` before it sends more. */
  get backlogged(): boolean {
    return !this.done && this.sink.queuedBytes >= HIGH_WATER_BYTES;
  }

  /** Resolves when the client has room for more; at once unless it is behind. */
  ready(): Promise<void> {
    if (!this.backlogged) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * Bytes flushed to the response that the client has not taken yet: how far behind it is. What
   * was written in this turn does not count: a burst (a replay, a snapshot, a large message) says
   * nothing about the reader, and counting it cut off clients that keep up. Nor does one chunk the
   * size of the largest ever written: a client still reading a message larger than the limit (a
   * long pasted text on `RUN_STARTED.input`) is reading, not behind.
   */
  get queuedBytes(): number {
    if (this.done) return 0;
    const queued = this.sink.queuedBytes;
    // The response is read in order: whatever of this turn's bytes is still queued sits behind
    // the older bytes, so taking it off leaves what was queued before the turn, or nothing.
    return Math.max(0, queued - this.turnBytes - this.largestChunk);
  }

  /**
   * Drops what is queued and breaks the response off (a client too slow to keep up). The
   * `onCancel` listeners run: to whoever holds the stream the client is gone all the same, and a
   * holder that never heard of it would keep the client's resources forever.
   */
  abort(reason: string): void {
    if (this.done) return;
    this.pendingParts = [];
    this.pendingSize = 0;
    // Marked as a premature close: @hono/node-server then destroys the socket quietly instead of
    // logging the error with its stack (this is a cut-off we chose, not a failure).
    this.sink.fail(Object.assign(new Error(reason), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    this.cancelled();
  }

  /** Flushes what is queued and ends the response. */
  close(): void {
    if (this.done) return;
    this.flush();
    this.done = true;
    this.sink.end();
    this.release();
  }

  /** Runs `listener` once if the stream ends before `close()`: the client went away, or `abort()` cut it off. */
  onCancel(listener: () => void): void {
    this.cancelListeners.push(listener);
  }

  /** Flushes when frames pile up or the oldest has waited long enough; else when the turn ends. */
  private pending(): void {
    if (!this.inTurn) {
      this.inTurn = true;
      endTurnLater(this.endTurn);
    }
    const now = performance.now();
    if (this.pendingSince < 0) this.pendingSince = now;
    if (!this.flushedAny || this.pendingSize >= FLUSH_CHARS || now - this.pendingSince >= MAX_HOLD_MS) this.flush();
  }

  /** The event-loop turn in which frames were queued has ended (`endTurns`): what is pending goes. */
  private readonly endTurn = (): void => {
    this.flush();
    this.inTurn = false;
    this.turnBytes = 0;
  };

  private flush(): void {
    this.pendingSince = -1;
    if (this.done) return;
    const parts = this.pendingParts;
    if (parts.length === 0) return;
    this.pendingParts = [];
    this.pendingSize = 0;
    // One part (a follower's usual turn: one shared batch) is written as it is, shared bytes and all.
    if (parts.length === 1) this.enqueue(typeof parts[0] === 'string' ? utf8.encode(parts[0]) : parts[0]);
    else this.enqueue(Buffer.concat(parts.map((part) => (typeof part === 'string' ? utf8.encode(part) : part))));
  }

  private enqueue(chunk: Uint8Array): void {
    this.flushedAny = true;
    this.turnBytes += chunk.byteLength;
    if (chunk.byteLength > this.largestChunk) this.largestChunk = chunk.byteLength;
    this.sink.write(chunk);
  }

  private release(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  private cancelled(): void {
    if (this.done) return;
    this.done = true;
    this.release();
    for (const listener of this.cancelListeners) listener();
  }
}
