import { ServerResponse } from 'node:http';

/** Bytes the response may hold unread before the producer is told to wait. */
export const HIGH_WATER_BYTES = 256 * 1024;

/**
 * Where an `EventStream` writes its bytes: the body of the web `Response` it answers with, or,
 * under `@hono/node-server`, Node's `ServerResponse` itself.
 */
export interface ResponseSink {
  /** The body to answer with. */
  readonly body: ReadableStream<Uint8Array>;
  write(chunk: Uint8Array): void;
  /** Bytes written that the client has not taken yet. */
  readonly queuedBytes: number;
  /** Ends the body once everything written has gone. */
  end(): void;
  /** Breaks the response off. */
  fail(error: Error): void;
}

/** What a sink tells its stream: the client has room again, or it went away. */
export interface SinkEvents {
  drained(): void;
  cancelled(): void;
}

/** The `ServerResponse` of a request `@hono/node-server` serves over HTTP/1 (its `env.outgoing`), if any. */
export function nodeResponseOf(env: unknown): ServerResponse | undefined {
  const outgoing = (env as { outgoing?: unknown } | undefined)?.outgoing;
  return outgoing instanceof ServerResponse ? outgoing : undefined;
}

/**
 * A sink for the request: straight to Node's response where there is one, else the web body.
 *
 * @example
 * const sink = responseSink(nodeResponseOf(c.env), { drained, cancelled });
 * new Response(sink.body, { headers });
 */
export function responseSink(outgoing: ServerResponse | undefined, events: SinkEvents): ResponseSink {
  return outgoing ? new NodeSink(outgoing, events) : new WebSink(events);
}

/** Bytes through a web `ReadableStream`: what any fetch-style server reads. */
class WebSink implements ResponseSink {
  readonly body: ReadableStream<Uint8Array>;
  private controller!: ReadableStreamDefaultController<Uint8Array>;

  constructor(events: SinkEvents) {
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
        },
        pull: () => events.drained(),
        cancel: () => events.cancelled(),
      },
      { highWaterMark: HIGH_WATER_BYTES, size: (chunk) => chunk.byteLength },
    );
  }

  write(chunk: Uint8Array): void {
    this.controller.enqueue(chunk);
  }

  get queuedBytes(): number {
    return HIGH_WATER_BYTES - (this.controller.desiredSize ?? HIGH_WATER_BYTES);
  }

  end(): void {
    try {
      this.controller.close();
    } catch {
      // already closed by a cancel
    }
  }

  fail(error: Error): void {
    this.controller.error(error);
  }
}

/**
 * Bytes written to Node's `ServerResponse` directly: no web stream between the writer and the
 * socket (docs/performance.md). `@hono/node-server` still answers the request with the `Response`
 * the middlewares saw, so its status and every header they set go out as they would; its body
 * (`body`) carries nothing and ends when this sink ends, at which the server ends the response.
 *
 * Bytes wait until the server has read the body and written the headers: a handler that threw
 * after making the stream answers with another response, whose body this one must never join. A
 * response whose headers say it is encoded (a host's compression wraps the body) gets its bytes
 * through `body` instead, as a web sink's.
 */
class NodeSink implements ResponseSink {
  readonly body: ReadableStream<Uint8Array>;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  /** Chunks written before the headers went out. */
  private early: Uint8Array[] = [];
  private earlyBytes = 0;
  /** The server asked for the body: this response is the one it sends. */
  private read = false;
  private lookingAgain = false;
  private ended = false;
  /** Once the headers are out: whether bytes go straight to the socket (else through `body`). */
  private direct: boolean | undefined;
  /**
   * Bytes written since the socket said it was full (`write` answered false) until it drains: what
   * a web body would still hold (its server hands the socket a chunk, then waits for the drain),
   * so that "behind" means the same on both sinks.
   */
  private backlog = 0;
  private full = false;

  constructor(
    private readonly outgoing: ServerResponse,
    events: SinkEvents,
  ) {
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
        },
        // Called only for a read (no high-water mark): the server reads the body just before it writes the headers.
        pull: () => {
          this.read = true;
          this.start();
        },
        cancel: () => events.cancelled(),
      },
      { highWaterMark: 0 },
    );
    outgoing.on('drain', () => {
      this.full = false;
      this.backlog = 0;
      events.drained();
    });
  }

  write(chunk: Uint8Array): void {
    if (!this.start()) {
      this.early.push(chunk);
      this.earlyBytes += chunk.byteLength;
      return;
    }
    this.send(chunk);
  }

  get queuedBytes(): number {
    return this.direct === false ? 0 : this.earlyBytes + this.backlog;
  }

  end(): void {
    this.ended = true;
    // Before the headers are out, `start` ends it once they are.
    if (this.direct !== undefined) this.finish();
    else this.start();
  }

  fail(error: Error): void {
    this.early = [];
    this.controller.error(error);
  }

  /**
   * Whether bytes may go: the server read the body and wrote the headers (then the early bytes go
   * first). Read but not yet written, it looks again once the turn ends.
   */
  private start(): boolean {
    if (this.direct !== undefined) return true;
    if (!this.read) return false;
    if (!this.outgoing.headersSent) {
      this.lookAgain();
      return false;
    }
    this.direct = !encoded(this.outgoing);
    const early = this.early;
    this.early = [];
    this.earlyBytes = 0;
    for (const chunk of early) this.send(chunk);
    if (this.ended) this.finish();
    return true;
  }

  private lookAgain(): void {
    if (this.lookingAgain || this.outgoing.destroyed) return;
    this.lookingAgain = true;
    setImmediate(() => {
      this.lookingAgain = false;
      this.start();
    });
  }

  private send(chunk: Uint8Array): void {
    if (!this.direct) return this.controller.enqueue(chunk);
    if (this.full) this.backlog += chunk.byteLength;
    if (!this.outgoing.write(chunk)) this.full = true;
  }

  private finish(): void {
    try {
      this.controller.close();
    } catch {
      // already closed by a cancel
    }
  }
}

/**
 * Whether the headers sent say the body is encoded (a host's compression wraps the body we answer
 * with). `@hono/node-server` passes them to `writeHead` at once, which leaves `getHeader` blind to
 * them: the header block as sent (`_header`, which Node keeps and Express has long read) tells.
 */
function encoded(outgoing: ServerResponse): boolean {
  const sent = (outgoing as unknown as { _header?: unknown })._header;
  return typeof sent === 'string' && /\r\ncontent-encoding:/i.test(sent);
}
