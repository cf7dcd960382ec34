/** One dispatched Server-Sent Events message (the lines between two blank lines). */
export interface SseMessage {
  /** The `event:` field, `"message"` when absent. */
  event: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
  /** The last event id when this message was dispatched (its own `id:`, or the one before it): what an EventSource reports as `lastEventId`. */
  id?: string;
}

/** What one chunk of a body yielded: messages, comments and the `retry:` hint, in order of arrival. */
export interface SseChunkResult {
  messages: SseMessage[];
  /** Comment lines (`: keep-alive`), without the colon and one leading space. */
  comments: string[];
  /** The last valid `retry:` value in this chunk, in milliseconds. */
  retry?: number;
}

/** Largest unterminated frame the parser holds before it gives up (the server never sends one this big). */
const MAX_BUFFER_CHARS = 16 * 1024 * 1024;

/**
 * An incremental Server-Sent Events parser, as the HTML standard's EventSource parses: LF, CRLF
 * or CR line ends, `data:` lines joined by `\n`, `id:` (ignored when it contains NUL; it becomes
 * `lastEventId` only once its message is complete, so a message cut off mid-way is asked for
 * again), `retry:` (digits only), comments, a leading BOM. A message with no `data:` line is not
 * dispatched, but its `id:` still moves `lastEventId`.
 *
 * Feed it decoded text in chunks of any size (a chunk may end anywhere, even between CR and LF).
 *
 * @example
 * const parser = new SseParser();
 * const { messages } = parser.push('id: 7\ndata: {"type":"RUN_STARTED"}\n\n');
 * // messages[0] → { event: 'message', data: '{"type":"RUN_STARTED"}', id: '7' }; parser.lastEventId → '7'
 */
export class SseParser {
  /** The last event id of a dispatched message (what an EventSource sends as `Last-Event-ID`). */
  lastEventId: string | undefined;

  private buffer = '';
  private started = false;
  private pendingCR = false;
  private data: string[] = [];
  private hasData = false;
  private eventType = '';
  /** The id of the message being read: it becomes `lastEventId` when the message is complete. */
  private idBuffer: string | undefined;

  /** @param lastEventId where a resumed stream starts (the id sent as `Last-Event-ID`). */
  constructor(lastEventId?: string) {
    this.lastEventId = lastEventId;
    this.idBuffer = lastEventId;
  }

  /** Parses `text` and returns what it completed. */
  push(text: string): SseChunkResult {
    const out: SseChunkResult = { messages: [], comments: [] };
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    // A CR ending the previous chunk was a line end already; a LF right after it is part of it.
    if (this.pendingCR && text.startsWith('\n')) text = text.slice(1);
    this.pendingCR = false;
    this.buffer += text;
    let start = 0;
    for (;;) {
      const cr = this.buffer.indexOf('\r', start);
      const lf = this.buffer.indexOf('\n', start);
      if (cr < 0 && lf < 0) break;
      const end = cr < 0 ? lf : lf < 0 ? cr : Math.min(cr, lf);
      const line = this.buffer.slice(start, end);
      let next = end + 1;
      if (this.buffer[end] === '\r') {
        if (end + 1 < this.buffer.length) {
          if (this.buffer[end + 1] === '\n') next = end + 2;
        } else {
          this.pendingCR = true;
        }
      }
      start = next;
      this.line(line, out);
    }
    this.buffer = this.buffer.slice(start);
    if (this.buffer.length > MAX_BUFFER_CHARS) throw new Error(`SSE frame larger than ${MAX_BUFFER_CHARS} characters`);
    return out;
  }

  /** Forgets a half-received message before a new connection; `lastEventId` is kept. */
  reset(): void {
    this.started = false;
    this.buffer = '';
    this.pendingCR = false;
    this.data = [];
    this.hasData = false;
    this.eventType = '';
    this.idBuffer = this.lastEventId;
  }

  private line(line: string, out: SseChunkResult): void {
    if (line === '') return this.dispatch(out);
    if (line.startsWith(':')) {
      out.comments.push(line.slice(1).replace(/^ /, ''));
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    switch (field) {
      case 'data':
        this.data.push(value);
        this.hasData = true;
        break;
      case 'event':
        this.eventType = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.idBuffer = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) out.retry = Number(value);
        break;
      default:
      // unknown fields are ignored
    }
  }

  private dispatch(out: SseChunkResult): void {
    this.lastEventId = this.idBuffer;
    if (this.hasData) {
      out.messages.push({ event: this.eventType || 'message', data: this.data.join('\n'), ...(this.lastEventId !== undefined && { id: this.lastEventId }) });
    }
    this.data = [];
    this.hasData = false;
    this.eventType = '';
  }
}
