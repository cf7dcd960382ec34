import { EventType, type Event } from '@ag-ui/core';
import { EventEncoder } from '@ag-ui/encoder';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { encoderFor, EventStream } from './event-stream.js';

// EventStream on its own: what a client reads from `response.body`, chunk by chunk. The writer
// coalesces by event-loop turn, so the tests step turns themselves: `settled()` lets promises run
// but no turn end, `nextTurn()` lets the stream's end-of-turn flush run. The clock
// (`performance.now()`, which times how long a frame is held) is frozen, and moved by hand.

const PROTO = 'application/vnd.ag-ui.event+proto';
const HIGH_WATER_BYTES = 256 * 1024;
const FLUSH_CHARS = 16 * 1024;
const utf8 = new TextEncoder();
const text = new TextDecoder();

const started = (runId = 'r1'): Event => ({ type: EventType.RUN_STARTED, threadId: 't1', runId });
const delta = (content: string): Event => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: content });
/** An SSE frame as the wire carries it. */
const frame = (event: Event) => `data: ${JSON.stringify(event)}\n\n`;
const bytesOf = (event: Event) => utf8.encode(frame(event)).byteLength;

/** Lets pending promises run (a reader takes what is queued) without ending the event-loop turn. */
async function settled(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

/** Ends the current turn: the stream's end-of-turn flush (queued earlier) runs before this resolves. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A client that keeps up: reads the body in the background and keeps each chunk as it came. */
function client(out: EventStream) {
  const reader = out.response.body!.getReader();
  const chunks: Uint8Array[] = [];
  const state = { ended: false, error: undefined as unknown };
  const finished = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        chunks.push(value);
      }
      state.ended = true;
    } catch (error) {
      state.error = error;
    }
  })();
  return {
    chunks,
    state,
    finished,
    /** Each chunk (one socket write) as text. */
    texts: () => chunks.map((c) => text.decode(c)),
    cancel: () => reader.cancel(),
  };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['performance'] });
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('EventStream frames', () => {
  it('an SSE frame is "data: <json>" and a blank line, LF only; with a first id each frame carries "id: <n>", counting up', async () => {
    const out = new EventStream(new EventEncoder());
    const body = client(out);
    out.send([started()]);
    out.send([delta('a'), delta('b')], 41);
    out.close();
    await body.finished;

    const wire = body.texts().join('');
    expect(wire).toBe(
      'data: {"type":"RUN_STARTED","threadId":"t1","runId":"r1"}\n\n' +
        'id: 41\ndata: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a"}\n\n' +
        'id: 42\ndata: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"b"}\n\n',
    );
    expect(wire).not.toContain('\r');
  });

  it('raw lines (comments, retry:) go out verbatim, in order with the frames', async () => {
    const out = new EventStream(new EventEncoder());
    const body = client(out);
    out.raw('retry: 3000\n\n');
    out.raw(': connected\n\n');
    out.send([started()], 1);
    out.close();
    await body.finished;
    expect(body.texts().join('')).toBe(`retry: 3000\n\n: connected\n\nid: 1\n${frame(started())}`);
  });

  it('the response is text/event-stream, not cached, not buffered by a proxy, with the extra headers given', () => {
    const out = new EventStream(new EventEncoder(), { 'X-Run-Id': 'r1' });
    expect(out.response.status).toBe(200);
    expect(Object.fromEntries(out.response.headers)).toEqual({
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      'x-run-id': 'r1',
    });
  });

  it('encoderFor picks protobuf only when Accept names its media type: not for */* nor for no Accept', () => {
    expect(encoderFor(undefined).getContentType()).toBe('text/event-stream');
    expect(encoderFor('*/*').getContentType()).toBe('text/event-stream');
    expect(encoderFor('text/event-stream').getContentType()).toBe('text/event-stream');
    expect(encoderFor(`${PROTO}, text/event-stream;q=0.5`).getContentType()).toBe(PROTO);
  });
});

describe('EventStream.sendShared', () => {
  it('encodes an event once for every stream it goes to, and each stream numbers it with its own id', async () => {
    const encodeSSE = vi.spyOn(EventEncoder.prototype, 'encodeSSE');
    const [a, b] = [new EventStream(new EventEncoder()), new EventStream(new EventEncoder())];
    const [readA, readB] = [client(a), client(b)];
    const shared = delta('fan-out');

    a.sendShared([shared], 7);
    b.sendShared([shared], 100);
    expect(encodeSSE).toHaveBeenCalledTimes(1);
    a.close();
    b.close();
    await Promise.all([readA.finished, readB.finished]);
    expect(readA.texts().join('')).toBe(`id: 7\n${frame(shared)}`);
    expect(readB.texts().join('')).toBe(`id: 100\n${frame(shared)}`);

    // `send` encodes per stream: the reuse is sendShared's.
    const [c, d] = [new EventStream(new EventEncoder()), new EventStream(new EventEncoder())];
    c.send([shared]);
    d.send([shared]);
    expect(encodeSSE).toHaveBeenCalledTimes(3);
  });

  it('a batch sent to many streams under the same ids is encoded once and written as the same bytes, in order with what each stream had pending', async () => {
    const streams = Array.from({ length: 4 }, () => new EventStream(new EventEncoder()));
    const reads = streams.map(client);
    for (const out of streams) out.raw(': connected\n\n'); // each stream's first bytes leave at once
    await settled();
    const batch = [started(), delta('fan-out')];
    streams[2].raw(': keep-alive\n\n'); // this one has text of its own pending before the batch
    for (const out of streams) out.sendShared(batch, 41);
    streams[1].raw(': after\n\n');
    await nextTurn();

    const wire = `id: 41\n${frame(batch[0])}id: 42\n${frame(batch[1])}`;
    expect(reads.map((r) => r.texts()[1])).toEqual([wire, `${wire}: after\n\n`, `: keep-alive\n\n${wire}`, wire]);
    // The streams whose turn held the batch alone wrote the very same chunk.
    expect(reads[3].chunks[1]).toBe(reads[0].chunks[1]);
    // Under other ids it is a batch of its own.
    const other = new EventStream(new EventEncoder());
    const read = client(other);
    other.sendShared(batch, 7);
    other.close();
    await read.finished;
    expect(read.texts().join('')).toBe(`id: 7\n${frame(batch[0])}id: 8\n${frame(batch[1])}`);
  });
});

describe('EventStream coalescing', () => {
  it('the first frame leaves at once; the frames after it in the same turn leave together, in one chunk, when the turn ends', async () => {
    const out = new EventStream(new EventEncoder());
    const body = client(out);
    out.send([started()]);
    await settled();
    expect(body.texts()).toEqual([frame(started())]); // not held: RUN_STARTED leaves before the run's loop starts

    out.send([delta('a')]);
    out.send([delta('b')]);
    out.raw(': note\n\n');
    await settled();
    expect(body.chunks).toHaveLength(1); // held for the rest of the turn

    await nextTurn();
    expect(body.texts()).toEqual([frame(started()), frame(delta('a')) + frame(delta('b')) + ': note\n\n']);

    // A new turn holds its frames the same way: only the response's very first bytes skip the wait.
    out.send([delta('c')]);
    await settled();
    expect(body.chunks).toHaveLength(2);
    await nextTurn();
    expect(body.texts()[2]).toBe(frame(delta('c')));
  });

  it('in a long turn, a frame that has waited 10 ms leaves with the next frame, without waiting for the turn to end', async () => {
    const out = new EventStream(new EventEncoder());
    const body = client(out);
    out.send([started()]);
    out.send([delta('a')]); // held from here
    vi.advanceTimersByTime(9);
    out.send([delta('b')]);
    await settled();
    expect(body.chunks).toHaveLength(1);

    vi.advanceTimersByTime(1); // `a` has waited 10 ms: the next frame takes everything out
    out.send([delta('c')]);
    await settled();
    expect(body.texts()).toEqual([frame(started()), frame(delta('a')) + frame(delta('b')) + frame(delta('c'))]);

    out.send([delta('d')]); // the hold starts over with the next frame
    await settled();
    expect(body.chunks).toHaveLength(2);
    await nextTurn();
    expect(body.texts()[2]).toBe(frame(delta('d')));
  });

  it('frames that pile up past 16K characters leave at once, mid-turn', async () => {
    const out = new EventStream(new EventEncoder());
    const body = client(out);
    out.send([started()]);
    const half = delta('x'.repeat(FLUSH_CHARS / 2));
    out.send([half]);
    await settled();
    expect(body.chunks).toHaveLength(1);
    out.send([half]); // now past 16K pending
    await settled();
    expect(body.texts()).toEqual([frame(started()), frame(half) + frame(half)]);
  });
});

describe('EventStream on protobuf', () => {
  const protoFrame = (event: Event) => new EventEncoder({ accept: PROTO }).encodeProtobuf(event);

  it('an encoder for the protobuf media type gets length-prefixed protobuf frames, coalesced the same way', async () => {
    const out = new EventStream(encoderFor(PROTO));
    expect(out.response.headers.get('content-type')).toBe(PROTO);
    const body = client(out);
    out.send([started()], 1); // ids are an SSE matter: protobuf frames carry none
    out.send([delta('a'), delta('b')], 2);
    await settled();
    expect(body.chunks).toHaveLength(1);
    await nextTurn();
    expect(body.chunks.map((c) => [...c])).toEqual([[...protoFrame(started())], [...protoFrame(delta('a')), ...protoFrame(delta('b'))]]);

    const first = body.chunks[0];
    expect(new DataView(first.buffer, first.byteOffset).getUint32(0)).toBe(first.byteLength - 4); // big-endian length, then the message
  });

  it('raw text (comments, retry:) is ignored on a protobuf stream', async () => {
    const out = new EventStream(encoderFor(PROTO));
    const body = client(out);
    out.raw(': connected\n\n');
    await nextTurn();
    expect(body.chunks).toEqual([]);
    out.send([started()]);
    out.raw('retry: 1000\n\n');
    out.close();
    await body.finished;
    expect(body.chunks.map((c) => [...c])).toEqual([[...protoFrame(started())]]);
  });
});

describe('EventStream.queuedBytes: how far behind the client is', () => {
  it("a turn's own burst does not count; once the turn is over, what is left unread counts, less one chunk the size of the largest", async () => {
    const out = new EventStream(new EventEncoder());
    const reader = out.response.body!.getReader(); // a client that reads nothing yet
    const big = delta('x'.repeat(FLUSH_CHARS));
    out.send([big]);
    out.send([big]);
    out.send([big]); // three chunks: the first leaves at once, each other one piles up past 16K
    expect(out.queuedBytes).toBe(0); // ~50 KB unread, all of it written in this turn

    await nextTurn();
    expect(out.queuedBytes).toBe(2 * bytesOf(big));

    await reader.read();
    expect(out.queuedBytes).toBe(bytesOf(big));
    await reader.read();
    expect(out.queuedBytes).toBe(0);
  });

  it('one unread chunk as large as the largest ever written does not count (a client reading a large message is not behind); what comes after it does', async () => {
    const out = new EventStream(new EventEncoder());
    const reader = out.response.body!.getReader();
    const large = delta('x'.repeat(100_000));
    out.send([large]);
    await nextTurn();
    expect(out.queuedBytes).toBe(0);

    const small = delta('after');
    out.send([small]);
    await nextTurn();
    expect(out.queuedBytes).toBe(bytesOf(small));

    await reader.read(); // the large one
    expect(out.queuedBytes).toBe(0);
  });

  it('is 0 once the stream is closed or aborted', async () => {
    for (const end of ['close', 'abort'] as const) {
      const out = new EventStream(new EventEncoder());
      out.response.body!.getReader();
      out.send([delta('x'.repeat(FLUSH_CHARS))]);
      await nextTurn();
      out.send([delta('y'.repeat(FLUSH_CHARS))]);
      await nextTurn();
      expect(out.queuedBytes, end).toBeGreaterThan(0);
      if (end === 'close') out.close();
      else out.abort('too slow');
      expect(out.queuedBytes, end).toBe(0);
    }
  });
});

describe('EventStream.abort', () => {
  it('drops what is pending and queued, breaks the body off as a premature close, runs onCancel once, and ignores what comes after', async () => {
    const out = new EventStream(new EventEncoder());
    const onCancel = vi.fn();
    out.onCancel(onCancel);
    const reader = out.response.body!.getReader();
    out.send([started()]); // queued, unread
    out.send([delta('pending')]); // held for the turn

    out.abort('client too slow');
    expect(out.closed).toBe(true);
    expect(onCancel).toHaveBeenCalledTimes(1);
    await expect(reader.read()).rejects.toMatchObject({ message: 'client too slow', code: 'ERR_STREAM_PREMATURE_CLOSE' });

    await nextTurn(); // the end-of-turn flush finds nothing to write (writing would throw on the errored body)
    out.send([delta('late')]);
    out.raw(': late\n\n');
    out.abort('again');
    out.close();
    await nextTurn();
    expect(onCancel).toHaveBeenCalledTimes(1);
  });

  it('a client that cancels the body runs onCancel; close() does not', async () => {
    const gone = new EventStream(new EventEncoder());
    const onGone = vi.fn();
    gone.onCancel(onGone);
    const body = client(gone);
    gone.send([started()]);
    await body.cancel();
    expect(onGone).toHaveBeenCalledTimes(1);
    expect(gone.closed).toBe(true);

    const closed = new EventStream(new EventEncoder());
    const onClosed = vi.fn();
    closed.onCancel(onClosed);
    closed.close();
    await closed.response.body!.cancel();
    expect(onClosed).not.toHaveBeenCalled();
  });
});

describe('EventStream.close', () => {
  it('flushes what is held, then ends the body, without waiting for the turn to end; later sends are ignored', async () => {
    const out = new EventStream(new EventEncoder());
    const body = client(out);
    out.send([started()]);
    out.send([delta('held')]);
    out.close();
    out.send([delta('after close')]);
    await settled();
    expect(body.state).toEqual({ ended: true, error: undefined });
    expect(body.texts()).toEqual([frame(started()), frame(delta('held'))]);
    expect(out.closed).toBe(true);
    await nextTurn();
    expect(body.chunks).toHaveLength(2);
  });
});

describe('EventStream backpressure: ready() and backlogged', () => {
  it('ready() resolves at once while the client keeps up', async () => {
    const out = new EventStream(new EventEncoder());
    client(out);
    out.send([delta('x'.repeat(HIGH_WATER_BYTES))]);
    await settled(); // the client took it
    expect(out.backlogged).toBe(false);
    await out.ready();
  });

  it('past 256 KiB unread the stream is backlogged, and ready() waits until the client reads', async () => {
    const out = new EventStream(new EventEncoder());
    const reader = out.response.body!.getReader();
    const chunk = delta('x'.repeat(FLUSH_CHARS * 4));
    while (!out.backlogged) out.send([chunk]);
    expect(out.backlogged).toBe(true);

    let ready = false;
    void out.ready().then(() => (ready = true));
    await nextTurn();
    expect(ready).toBe(false);

    while (out.backlogged) await reader.read();
    await settled();
    expect(ready).toBe(true);
  });

  it('close() and abort() release whoever waits on ready()', async () => {
    for (const end of ['close', 'abort'] as const) {
      const out = new EventStream(new EventEncoder());
      out.response.body!.getReader();
      out.send([delta('x'.repeat(HIGH_WATER_BYTES))]);
      expect(out.backlogged, end).toBe(true);
      let ready = false;
      void out.ready().then(() => (ready = true));
      if (end === 'close') out.close();
      else out.abort('too slow');
      await settled();
      expect(ready, end).toBe(true);
      expect(out.backlogged, end).toBe(false);
    }
  });
});
