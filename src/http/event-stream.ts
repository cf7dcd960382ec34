import type { Event } from '@ag-ui/core';
import { EventEncoder } from '@ag-ui/encoder';

const PROTO_MEDIA_TYPE = 'application/vnd.ag-ui.event+proto';
/** Bytes the response may hold unread before `ready()` makes the producer wait. */
const HIGH_WATER_BYTES = 256 * 1024;
const utf8 = new TextEncoder();

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
 * Frames written in one event-loop turn are coalesced into one chunk (one socket write), flushed on
 * the next turn, so a burst of tiny deltas does not cost a syscall each while the first frame still
 * leaves at once. `ready()` applies backpressure when the client reads slower than the producer.
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
  private scheduled = false;
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
    if (this.done) return;
    for (let i = 0; i < events.length; i++) {
      if (this.sse) {
        const frame = this.encoder.encodeSSE(events[i]);
        this.pendingText += firstId === undefined ? frame : `id: ${firstId + i}\n${frame}`;
      } else {
        this.pendingBinary.push(this.encoder.encodeBinary(events[i]));
      }
    }
    this.schedule();
  }

  /** Writes raw SSE lines (comments, `retry:`); ignored on a protobuf stream. */
  raw(text: string): void {
    if (this.done || !this.sse) return;
    this.pendingText += text;
    this.schedule();
  }

  /** Resolves when the client has room for more; at once unless it is behind. */
  ready(): Promise<void> {
    if (this.done || (this.controller.desiredSize ?? 1) > 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * Bytes flushed to the response that the client has not taken yet: how far behind it is. What
   * was written in this turn and not flushed yet does not count: a burst (a replay, a snapshot, a
   * large message) says nothing about the reader, and counting it cut off clients that keep up.
   */
  get queuedBytes(): number {
    if (this.done) return 0;
    return HIGH_WATER_BYTES - (this.controller.desiredSize ?? HIGH_WATER_BYTES);
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

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    if (this.done) return;
    if (this.pendingText) {
      this.controller.enqueue(utf8.encode(this.pendingText));
      this.pendingText = '';
    }
    if (this.pendingBinary.length > 0) {
      this.controller.enqueue(Buffer.concat(this.pendingBinary));
      this.pendingBinary = [];
    }
  };

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
