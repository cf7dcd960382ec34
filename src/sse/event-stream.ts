import type { Event } from '@ag-ui/core';
import { EventEncoder } from '@ag-ui/encoder';

const PROTO_MEDIA_TYPE = 'application/vnd.ag-ui.event+proto';
/** Bytes the response may hold unread before `ready()` makes the producer wait. */
const HIGH_WATER_BYTES = 256 * 1024;
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
 * applies backpressure when the client reads slower than the producer.
 *
 * @example
 * const out = new EventStream(encoderFor(c.req.header('accept')));
 * out.onCancel(() => controller.abort());
 * out.send([{ type: EventType.RUN_STARTED, threadId, runId }]);
 * return out.response;
 */
export class EventStream {
  readonly response: Response;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private readonly encoder: EventEncoder;
  private readonly sse: boolean;
  private pendingText = '';
  private pendingBinary: Uint8Array[] = [];
  private pendingBinaryBytes = 0;
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

  constructor(encoder: EventEncoder, headers: Record<string, string> = {}) {
    this.encoder = encoder;
    this.sse = encoder.getContentType() !== PROTO_MEDIA_TYPE;
    const body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
        },
        pull: () => this.release(),
        cancel: () => this.cancelled(),
      },
      { highWaterMark: HIGH_WATER_BYTES, size: (chunk) => chunk.byteLength },
    );
    this.response = new Response(body, {
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
    for (let i = 0; i < events.length; i++) {
      if (this.sse) {
        const frame = shared ? sharedFrame(events[i]) : this.encoder.encodeSSE(events[i]);
        this.pendingText += firstId === undefined ? frame : `id: ${firstId + i}\n${frame}`;
      } else {
        const frame = this.encoder.encodeBinary(events[i]);
        this.pendingBinary.push(frame);
        this.pendingBinaryBytes += frame.byteLength;
      }
    }
    this.pending();
  }

  /** Writes raw SSE lines (comments, `retry:`); ignored on a protobuf stream. */
  raw(text: string): void {
    if (this.done || !this.sse) return;
    this.pendingText += text;
    this.pending();
  }

  /** Whether the client is behind: a producer should wait for `ready()` before it sends more. */
  get backlogged(): boolean {
    return !this.done && (this.controller.desiredSize ?? 1) <= 0;
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
    const queued = HIGH_WATER_BYTES - (this.controller.desiredSize ?? HIGH_WATER_BYTES);
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
    this.pendingText = '';
    this.pendingBinary = [];
    this.pendingBinaryBytes = 0;
    // Marked as a premature close: @hono/node-server then destroys the socket quietly instead of
    // logging the error with its stack (this is a cut-off we chose, not a failure).
    this.controller.error(Object.assign(new Error(reason), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    this.cancelled();
  }

  /** Flushes what is queued and ends the response. */
  close(): void {
    if (this.done) return;
    this.flush();
    this.done = true;
    try {
      this.controller.close();
    } catch {
      // already closed by a cancel
    }
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
      setImmediate(this.endTurn);
    }
    const now = performance.now();
    if (this.pendingSince < 0) this.pendingSince = now;
    const piledUp = this.pendingText.length >= FLUSH_CHARS || this.pendingBinaryBytes >= FLUSH_CHARS;
    if (!this.flushedAny || piledUp || now - this.pendingSince >= MAX_HOLD_MS) this.flush();
  }

  private readonly endTurn = (): void => {
    this.flush();
    this.inTurn = false;
    this.turnBytes = 0;
  };

  private flush(): void {
    this.pendingSince = -1;
    if (this.done) return;
    if (this.pendingText) {
      this.enqueue(utf8.encode(this.pendingText));
      this.pendingText = '';
    }
    if (this.pendingBinary.length > 0) {
      this.enqueue(Buffer.concat(this.pendingBinary));
      this.pendingBinary = [];
      this.pendingBinaryBytes = 0;
    }
  }

  private enqueue(chunk: Uint8Array): void {
    this.flushedAny = true;
    this.turnBytes += chunk.byteLength;
    if (chunk.byteLength > this.largestChunk) this.largestChunk = chunk.byteLength;
    this.controller.enqueue(chunk);
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
