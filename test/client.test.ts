import { EventType } from '@ag-ui/client';
import { firstValueFrom, lastValueFrom, tap, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import {
  BridgeAgent,
  BridgeClient,
  BridgeRequestError,
  SseParser,
  followThreadEvents,
  type ConnectionStatus,
  type SseMessage,
  type ThreadEventFrame,
} from '../src/client/index.js';

// ─── SSE frame parsing ───────────────────────────────────────────────────────────────────────

/** Feeds `text` to a fresh parser in the given pieces and collects everything. */
function parseAll(pieces: string[], parser = new SseParser()) {
  const messages: SseMessage[] = [];
  const comments: string[] = [];
  const retries: number[] = [];
  for (const piece of pieces) {
    const out = parser.push(piece);
    messages.push(...out.messages);
    comments.push(...out.comments);
    if (out.retry !== undefined) retries.push(out.retry);
  }
  return { messages, comments, retries, parser };
}

const STREAM =
  'retry: 2000\n: connected\n\nid: 1\ndata: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n: keep-alive\n\nid: 2\ndata: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"héllo ✓"}\n\n';

describe('SseParser', () => {
  it('reads LF-framed id/data frames, comments and the retry hint', () => {
    const { messages, comments, retries, parser } = parseAll([STREAM]);
    expect(messages).toEqual([
      { event: 'message', id: '1', data: '{"type":"RUN_STARTED","threadId":"t","runId":"r"}' },
      { event: 'message', id: '2', data: '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"héllo ✓"}' },
    ]);
    expect(comments).toEqual(['connected', 'keep-alive']);
    expect(retries).toEqual([2000]);
    expect(parser.lastEventId).toBe('2');
  });

  it('gives the same result whatever the chunk boundaries (one character at a time)', () => {
    expect(parseAll([...STREAM]).messages).toEqual(parseAll([STREAM]).messages);
    for (let cut = 1; cut < STREAM.length; cut += 7) {
      expect(parseAll([STREAM.slice(0, cut), STREAM.slice(cut)]).messages).toEqual(parseAll([STREAM]).messages);
    }
  });

  it('accepts CRLF and CR line ends, also a CR at the end of one chunk and its LF at the start of the next', () => {
    const crlf = STREAM.replace(/\n/g, '\r\n');
    const cr = STREAM.replace(/\n/g, '\r');
    const expected = parseAll([STREAM]).messages;
    expect(parseAll([crlf]).messages).toEqual(expected);
    expect(parseAll([cr]).messages).toEqual(expected);
    const split = crlf.indexOf('\r\n') + 1;
    expect(parseAll([crlf.slice(0, split), crlf.slice(split)]).messages).toEqual(expected);
  });

  it('joins data lines, reads event: and fields without a space or a colon, ignores unknown fields, strips a BOM', () => {
    const { messages } = parseAll(['\uFEFFdata:one\ndata: two\nevent: custom\nfoo: bar\nid:9\n\ndata\n\n']);
    expect(messages).toEqual([
      { event: 'custom', id: '9', data: 'one\ntwo' },
      { event: 'message', id: '9', data: '' },
    ]);
  });

  it('an id moves lastEventId only once its frame is complete; a frame with no data still moves it; NUL ids are ignored', () => {
    const parser = new SseParser('5');
    expect(parser.push('id: 6\ndata: {"type":"X"}').messages).toEqual([]);
    expect(parser.lastEventId).toBe('5'); // cut here: the client must ask for 6 again
    parser.reset();
    expect(parser.push('id: 7\n\n').messages).toEqual([]);
    expect(parser.lastEventId).toBe('7');
    parser.push('id: 8\u0000\ndata: x\n\n');
    expect(parser.lastEventId).toBe('7');
  });

  it('ignores a retry: that is not all digits', () => {
    expect(parseAll(['retry: 1.5\n\nretry: soon\n\n']).retries).toEqual([]);
  });
});

// ─── following with reconnects (fake fetch) ──────────────────────────────────────────────────

const utf8 = new TextEncoder();

/** A streamed response the test writes to, breaks or ends. */
function streamResponse(init: { status?: number; contentType?: string } = {}) {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  const response = new Response(body, { status: init.status ?? 200, headers: { 'content-type': init.contentType ?? 'text/event-stream' } });
  return {
    response,
    write: (text: string) => controller.enqueue(utf8.encode(text)),
    fail: () => controller.error(new TypeError('network error')),
    end: () => controller.close(),
  };
}

const frame = (id: number, event: Record<string, unknown>) => `id: ${id}\ndata: ${JSON.stringify(event)}\n\n`;
const runStarted = (runId: string) => ({ type: 'RUN_STARTED', threadId: 't', runId });
const runFinished = (runId: string) => ({ type: 'RUN_FINISHED', threadId: 't', runId });
const delta = (text: string) => ({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: text });

interface Call {
  url: string;
  headers: Record<string, string>;
  signal: AbortSignal;
}

/** A fetch that answers from a script, one entry per call (a response, or an error to throw), and records the calls. */
function fakeFetch(script: Array<() => Response | Error>) {
  const calls: Call[] = [];
  let waiting: Array<() => void> = [];
  const fetch = async (url: string, init: RequestInit): Promise<Response> => {
    calls.push({ url, headers: { ...(init.headers as Record<string, string>) }, signal: init.signal as AbortSignal });
    const woken = waiting;
    waiting = [];
    for (const wake of woken) wake();
    const next = script.shift();
    if (!next) return new Promise<Response>(() => {}); // hangs: no more scripted answers
    const answer = next();
    if (answer instanceof Error) throw answer;
    return answer;
  };
  const untilCalls = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => (calls.length >= n ? resolve() : waiting.push(check));
      check();
    });
  return { fetch, calls, untilCalls };
}

/** A sleep that records the delays and does not wait. */
function fakeSleep() {
  const delays: number[] = [];
  return { delays, sleep: async (ms: number) => void delays.push(ms) };
}

/** Collects frames and statuses of a follower until `done()` says so, then unsubscribes. */
function collect(options: Parameters<typeof followThreadEvents>[0]) {
  const frames: ThreadEventFrame[] = [];
  const statuses: ConnectionStatus[] = [];
  let error: unknown;
  let completed = false;
  let waiters: Array<() => void> = [];
  const notify = () => {
    const woken = waiters;
    waiters = [];
    for (const w of woken) w();
  };
  const sub = followThreadEvents({ ...options, onStatus: (s) => (statuses.push(s), notify()) }).subscribe({
    next: (f) => (frames.push(f), notify()),
    error: (e) => ((error = e), notify()),
    complete: () => ((completed = true), notify()),
  });
  const until = (check: () => boolean) =>
    new Promise<void>((resolve) => {
      const test = () => (check() ? resolve() : waiters.push(test));
      test();
    });
  return {
    frames,
    statuses,
    sub,
    until,
    get error() {
      return error;
    },
    get completed() {
      return completed;
    },
    types: () => frames.map((f) => f.event.type),
  };
}

describe('followThreadEvents', () => {
  it('asks for a snapshot first, then resumes a dropped connection with Last-Event-ID after the retry hint: nothing lost, nothing twice', async () => {
    const first = streamResponse();
    const second = streamResponse();
    const { fetch, calls, untilCalls } = fakeFetch([() => first.response, () => second.response]);
    const { delays, sleep } = fakeSleep();
    const f = collect({
      url: 'http://x/agui/threads/t/events?resourceId=u',
      fetch,
      sleep,
      snapshot: true,
      reconnect: { jitter: 0 },
      headers: { Authorization: 'Bearer k' },
    });
    await untilCalls(1);
    expect(calls[0].url).toBe('http://x/agui/threads/t/events?resourceId=u&snapshot=1');
    expect(calls[0].headers).toEqual({ Accept: 'text/event-stream', Authorization: 'Bearer k' });
    first.write('retry: 250\n: connected\n\n');
    first.write(frame(1, runStarted('r1')) + frame(2, delta('a')));
    first.write('id: 3\ndata: {"type":"TEXT_MESS'); // a frame cut in the middle
    await f.until(() => f.frames.length === 2);
    first.fail();
    await untilCalls(2);
    expect(calls[1].url).toBe('http://x/agui/threads/t/events?resourceId=u');
    expect(calls[1].headers['Last-Event-ID']).toBe('2');
    expect(delays).toEqual([250]);
    second.write(frame(3, delta('b')) + frame(4, runFinished('r1')));
    await f.until(() => f.frames.length === 4);
    expect(f.frames.map((x) => x.id)).toEqual(['1', '2', '3', '4']);
    expect(f.types()).toEqual(['RUN_STARTED', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_CONTENT', 'RUN_FINISHED']);
    expect(f.statuses.map((s) => s.state)).toEqual(['connecting', 'live', 'reconnecting', 'live']);
    expect(f.statuses[2]).toMatchObject({ state: 'reconnecting', attempt: 1, delayMs: 250, lastEventId: '2' });
    f.sub.unsubscribe();
    expect(calls[1].signal.aborted).toBe(true);
    expect(f.statuses.at(-1)?.state).toBe('closed');
  });

  it('reopens after the body ends cleanly too, and backs off exponentially (capped) while attempts fail', async () => {
    const first = streamResponse();
    const last = streamResponse();
    const { fetch, calls, untilCalls } = fakeFetch([
      () => first.response,
      () => new TypeError('fetch failed'),
      () => new Response('{"error":"busy","code":"INTERNAL_ERROR"}', { status: 503, headers: { 'content-type': 'application/json' } }),
      () => new TypeError('fetch failed'),
      () => last.response,
    ]);
    const { delays, sleep } = fakeSleep();
    const f = collect({ url: '/agui/threads/t/events', fetch, sleep, reconnect: { jitter: 0, maxDelayMs: 350 } });
    first.write('retry: 100\n\n' + frame(10, runStarted('r')) + frame(11, runFinished('r')));
    first.end();
    await untilCalls(5);
    expect(delays).toEqual([100, 200, 350, 350]);
    expect(calls.slice(1).map((c) => c.headers['Last-Event-ID'])).toEqual(['11', '11', '11', '11']);
    expect(calls[0].url).toBe('/agui/threads/t/events');
    await f.until(() => f.statuses.at(-1)?.state === 'live');
    expect(f.statuses.map((s) => s.state)).toEqual(['connecting', 'live', 'reconnecting', 'reconnecting', 'reconnecting', 'reconnecting', 'live']);
    expect((f.statuses[4].error as BridgeRequestError).status).toBe(503);
    f.sub.unsubscribe();
  });

  it('without a retry hint, starts from initialDelayMs; gives up after maxAttempts with the last error', async () => {
    const { fetch } = fakeFetch([() => new TypeError('refused'), () => new TypeError('refused'), () => new TypeError('refused again')]);
    const { delays, sleep } = fakeSleep();
    const f = collect({ url: '/e', fetch, sleep, reconnect: { jitter: 0, initialDelayMs: 40, maxAttempts: 2 } });
    await f.until(() => f.error !== undefined);
    expect(delays).toEqual([40, 80]);
    expect((f.error as Error).message).toBe('refused again');
    expect(f.statuses.map((s) => s.state)).toEqual(['connecting', 'connecting', 'connecting', 'closed']);
  });

  it('ends with a BridgeRequestError on a final error answer (404, 401, 400), without retrying', async () => {
    const body = JSON.stringify({ error: 'Thread t not found', code: 'THREAD_NOT_FOUND' });
    const { fetch, calls } = fakeFetch([() => new Response(body, { status: 404, headers: { 'content-type': 'application/json' } })]);
    const error = await firstValueFrom(followThreadEvents({ url: 'http://x/e', fetch })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BridgeRequestError);
    expect(error).toMatchObject({ status: 404, code: 'THREAD_NOT_FOUND', request: 'GET http://x/e' });
    expect(calls).toHaveLength(1);
  });

  it('refuses an answer that is not an event stream, and a frame that is not an AG-UI event', async () => {
    const html = fakeFetch([() => new Response('<html>', { headers: { 'content-type': 'text/html' } })]);
    await expect(lastValueFrom(followThreadEvents({ url: '/e', fetch: html.fetch }))).rejects.toMatchObject({ code: 'NOT_AN_EVENT_STREAM' });
    const broken = streamResponse();
    const bad = fakeFetch([() => broken.response]);
    const result = lastValueFrom(followThreadEvents({ url: '/e', fetch: bad.fetch }).pipe(toArray()));
    broken.write('id: 1\ndata: {not json\n\n');
    await expect(result).rejects.toThrow(/Invalid event frame 1/);
    expect(bad.calls).toHaveLength(1);
  });

  it('unsubscribing while it waits to reconnect stops it for good', async () => {
    const first = streamResponse();
    const { fetch, calls } = fakeFetch([() => first.response]);
    let sleeping!: () => void;
    const slept = new Promise<void>((resolve) => (sleeping = resolve));
    const sleep = (_ms: number, signal: AbortSignal) =>
      new Promise<void>((resolve) => {
        sleeping();
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
    const f = collect({ url: '/e', fetch, sleep });
    first.write(frame(1, runStarted('r')));
    await f.until(() => f.frames.length === 1);
    first.fail();
    await slept;
    f.sub.unsubscribe();
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toHaveLength(1);
    expect(f.statuses.at(-1)?.state).toBe('closed');
    expect(f.error).toBeUndefined();
  });

  it('an abort signal completes it (no error)', async () => {
    const first = streamResponse();
    const { fetch, calls } = fakeFetch([() => first.response]);
    const controller = new AbortController();
    let arrived!: () => void;
    const first1 = new Promise<void>((resolve) => (arrived = resolve));
    const done = lastValueFrom(
      followThreadEvents({ url: '/e', fetch, signal: controller.signal }).pipe(
        tap(() => arrived()),
        toArray(),
      ),
    );
    first.write(frame(1, runStarted('r')));
    await first1;
    controller.abort();
    expect((await done).map((f) => f.id)).toEqual(['1']);
    expect(calls[0].signal.aborted).toBe(true);
  });

  it('can send the resume id as ?lastEventId= (no CORS preflight) instead of the header', async () => {
    const first = streamResponse();
    const { fetch, calls, untilCalls } = fakeFetch([() => first.response]);
    const f = collect({ url: '/e?resourceId=u', fetch, lastEventId: 41, snapshot: true, lastEventIdIn: 'query' });
    await untilCalls(1);
    expect(calls[0].url).toBe('/e?resourceId=u&lastEventId=41'); // an id to resume from: no snapshot asked
    expect(calls[0].headers['Last-Event-ID']).toBeUndefined();
    f.sub.unsubscribe();
  });

  it('closes a run the reconnect could not replay with a synthetic RUN_ERROR STREAM_GAP before the snapshot run', async () => {
    const first = streamResponse();
    const second = streamResponse();
    const { fetch } = fakeFetch([() => first.response, () => second.response]);
    const { sleep } = fakeSleep();
    const f = collect({ url: '/e', fetch, sleep });
    first.write(frame(5, runStarted('r1')) + frame(6, delta('a')));
    await f.until(() => f.frames.length === 2);
    first.fail();
    // The server no longer had id 6 in its buffer: a snapshot run, then live.
    second.write(frame(6, runStarted('snapshot-1')) + frame(6, { type: 'MESSAGES_SNAPSHOT', messages: [] }) + frame(6, runFinished('snapshot-1')));
    await f.until(() => f.frames.length === 6);
    expect(f.types()).toEqual(['RUN_STARTED', 'TEXT_MESSAGE_CONTENT', 'RUN_ERROR', 'RUN_STARTED', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED']);
    expect(f.frames[2]).toEqual({ id: undefined, synthetic: true, event: expect.objectContaining({ type: EventType.RUN_ERROR, code: 'STREAM_GAP' }) });
    f.sub.unsubscribe();
  });
});

// ─── BridgeClient plumbing (fake fetch) ──────────────────────────────────────────────────────

describe('BridgeClient requests', () => {
  it('sends resourceId/agentId with each call, JSON bodies, and the configured headers', async () => {
    const seen: Array<{ url: string; init: RequestInit }> = [];
    const fetch = async (url: string, init: RequestInit) => {
      seen.push({ url, init });
      return new Response(JSON.stringify({ action: 'wake', runId: 'r', signalId: 's' }), { status: 202, headers: { 'content-type': 'application/json' } });
    };
    const client = new BridgeClient({ baseUrl: 'http://x/agui/', resourceId: 'u 1', agentId: 'demo', headers: { Authorization: 'Bearer k' }, fetch });
    await expect(client.sendMessage('t/1', 'hi', { ifActive: { behavior: 'persist' } })).resolves.toEqual({ action: 'wake', runId: 'r', signalId: 's' });
    expect(seen[0].url).toBe('http://x/agui/threads/t%2F1/send-message');
    expect(seen[0].init.method).toBe('POST');
    expect(JSON.parse(seen[0].init.body as string)).toEqual({ resourceId: 'u 1', agentId: 'demo', message: 'hi', ifActive: { behavior: 'persist' } });
    expect(seen[0].init.headers).toMatchObject({ Authorization: 'Bearer k', 'Content-Type': 'application/json' });
    await client.listThreads({ limit: 5 });
    expect(seen[1].url).toBe('http://x/agui/threads?resourceId=u+1&agentId=demo&limit=5');
    expect(seen[1].init.body).toBeUndefined();
    // A steering call's idempotencyKey is its Idempotency-Key header, never part of the body.
    await client.approve('t', 'call-1', { idempotencyKey: 'k-1', resumeData: { ok: true } });
    expect(seen[2].init.headers).toMatchObject({ 'Idempotency-Key': 'k-1', Authorization: 'Bearer k' });
    expect(JSON.parse(seen[2].init.body as string)).toEqual({
      resourceId: 'u 1',
      agentId: 'demo',
      toolCallId: 'call-1',
      approved: true,
      resumeData: { ok: true },
    });
    await client.sendMessage('t', 'hi');
    expect(seen[3].init.headers).not.toHaveProperty('Idempotency-Key');
  });

  it('maps a non-JSON error answer (a proxy in between) to code HTTP_<status>', async () => {
    const client = new BridgeClient({ baseUrl: 'http://x', fetch: async () => new Response('Bad gateway', { status: 502 }) });
    const error = await client.abort('t').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BridgeRequestError);
    expect(error).toMatchObject({ status: 502, code: 'HTTP_502', details: undefined, request: 'POST http://x/threads/t/abort' });
    expect((error as Error).message).toContain('Bad gateway');
  });
});

describe('BridgeAgent configuration', () => {
  it('posts runs to ${baseUrl}/run with resourceId/agentId merged into forwardedProps (the run’s own keys win)', async () => {
    const bodies: Array<Record<string, unknown>> = [];
    const fetch = async (url: string, init: RequestInit) => {
      expect(url).toBe('http://x/agui/run');
      bodies.push(JSON.parse(init.body as string));
      const sse = 'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\ndata: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n\n';
      return new Response(sse, { headers: { 'content-type': 'text/event-stream' } });
    };
    const agent = new BridgeAgent({ baseUrl: 'http://x/agui/', threadId: 't', resourceId: 'u1', agentId: 'demo', fetch });
    await agent.runAgent({ runId: 'r', forwardedProps: { memoryOptions: { lastMessages: 5 } } });
    await agent.runAgent({ runId: 'r', forwardedProps: { resourceId: 'explicit' } });
    expect(bodies[0].forwardedProps).toEqual({ resourceId: 'u1', agentId: 'demo', memoryOptions: { lastMessages: 5 } });
    expect(bodies[1].forwardedProps).toEqual({ resourceId: 'explicit', agentId: 'demo' });
  });

  it('clone() keeps the bridge fields (CopilotKit’s runtime clones agents per request)', () => {
    const agent = new BridgeAgent({ baseUrl: 'http://x/agui', threadId: 't1', resourceId: 'u1', agentId: 'demo', headers: { Authorization: 'Bearer k' } });
    agent.lastEventId = '41';
    const copy = agent.clone();
    expect(copy).toBeInstanceOf(BridgeAgent);
    expect(copy).not.toBe(agent);
    expect({
      baseUrl: copy.baseUrl,
      url: copy.url,
      threadId: copy.threadId,
      resourceId: copy.resourceId,
      bridgeAgentId: copy.bridgeAgentId,
      lastEventId: copy.lastEventId,
      headers: copy.headers,
    }).toEqual({
      baseUrl: 'http://x/agui',
      url: 'http://x/agui/run',
      threadId: 't1',
      resourceId: 'u1',
      bridgeAgentId: 'demo',
      lastEventId: '41',
      headers: { Authorization: 'Bearer k' },
    });
    expect(copy.connection.state).toBe('closed');
  });
});
