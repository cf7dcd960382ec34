import { EventType } from '@ag-ui/client';
import { describe, expect, it } from 'vitest';
import { assistantText, runInput, runStrict, uid, userMessage } from './support/agui.js';
import { postRun, ProtoAgent, sseEvents } from './support/run.js';
import { watchThread } from './support/thread-watch.js';
import { http, useTestBridge } from './support/server.js';
import { mastraRunIdOf } from '../src/translate/ids.js';

// How POST /run travels: SSE framing and headers, protobuf on request, and a client that leaves.

const PROTO = 'application/vnd.ag-ui.event+proto';

describe('POST /run encodings', () => {
  const tb = useTestBridge();

  it('sends protobuf frames when Accept names protobuf, with the same events as SSE', async () => {
    const raw = await postRun(`${tb.base}/run`, runInput({ messages: [userMessage('hello proto')] }), { accept: PROTO });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toBe(PROTO);
    const bytes = new Uint8Array(await raw.arrayBuffer());
    expect(bytes.length).toBeGreaterThan(4);
    expect(new TextDecoder().decode(bytes.subarray(0, 6))).not.toBe('data: ');

    // The client decodes protobuf by content type: same event sequence as the SSE run.
    const proto = await runStrict(`${tb.base}/run`, runInput({ messages: [userMessage('hello proto')] }), undefined, new ProtoAgent({ url: `${tb.base}/run` }));
    const sse = await runStrict(`${tb.base}/run`, runInput({ messages: [userMessage('hello proto')] }));
    expect(proto.types).toEqual(sse.types);
    expect(assistantText(proto.events)).toBe('Echo: hello proto');
  });

  it('answers Accept: */* with SSE: LF framing, no-cache, no proxy buffering', async () => {
    const input = runInput({ messages: [userMessage('hello curl')] });
    const res = await postRun(`${tb.base}/run`, input, { accept: '*/*' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-accel-buffering')).toBe('no');

    const body = await res.text();
    expect(body).not.toContain('\r');
    expect(body.endsWith('\n\n')).toBe(true);
    const frames = body.slice(0, -2).split('\n\n');
    for (const frame of frames) {
      expect(frame).toMatch(/^data: \{.*\}$/s);
      expect(frame).not.toContain('\n');
    }
    const events = frames.map((frame) => JSON.parse(frame.slice('data: '.length)) as { type: string; delta?: string });
    expect(events[0]).toMatchObject({ type: EventType.RUN_STARTED, threadId: input.threadId, runId: input.runId });
    expect(events.at(-1)?.type).toBe(EventType.RUN_FINISHED);
    expect(events.flatMap((e) => (e.type === EventType.TEXT_MESSAGE_CONTENT ? [e.delta] : [])).join('')).toBe('Echo: hello curl');
  });
});

describe('POST /run: a client that leaves mid-stream', () => {
  // A delay between model parts, so that the echo is still being written when the client leaves.
  const tb = useTestBridge({ delayMs: 30 });

  it('aborts the Mastra run, and the thread goes on with the next run', async () => {
    const threadId = uid('thread');
    const long = `hello ${Array.from({ length: 80 }, (_, i) => `word${i}`).join(' ')}`;
    const fullEcho = `Echo: ${long}`;
    // Mastra's own stream of the thread: it reports how each run really ended, whatever the
    // HTTP side saw. No clock is involved: every wait below is on an event.
    const watch = await watchThread(tb.demo, { threadId });
    try {
      const input = runInput({ threadId, messages: [userMessage(long)] });
      const leave = new AbortController();
      const res = await postRun(`${tb.base}/run`, input, { signal: leave.signal });
      for await (const event of sseEvents(res.body!)) {
        if (event.type === EventType.TEXT_MESSAGE_CONTENT) break;
      }
      leave.abort();

      // 1. Mastra ends the run with `abort`, not `finish`: the disconnect reached the agent loop.
      const end = await watch.until((c) => c.runId === mastraRunIdOf(input.threadId, input.runId) && ['finish', 'abort', 'error'].includes(c.type));
      expect(end.type).toBe('abort');
      const written = watch.chunks
        .filter((c) => c.runId === mastraRunIdOf(input.threadId, input.runId) && c.type === 'text-delta')
        .map((c) => c.payload.text)
        .join('');
      expect(fullEcho.startsWith(written)).toBe(true);
      expect(written.length).toBeLessThan(fullEcho.length);

      // 2. The thread is free: the next run on it works normally.
      const next = runInput({ threadId, messages: [userMessage('are you still there')] });
      const run = await runStrict(`${tb.base}/run`, next);
      expect(assistantText(run.events)).toBe('Echo: are you still there');
      await watch.until((c) => c.runId === mastraRunIdOf(next.threadId, next.runId) && c.type === 'finish');

      // 3. Nothing more came from the aborted run, up to the end of the next one...
      const afterAbort = watch.chunks.slice(watch.chunks.indexOf(end) + 1);
      expect(afterAbort.filter((c) => c.runId === mastraRunIdOf(input.threadId, input.runId))).toEqual([]);
      // ...and memory holds both user turns once, and never the whole first echo.
      const stored = await http(`${tb.base}/threads/${threadId}/messages?resourceId=default`);
      const rows = stored.body as Array<{ role: string; content: unknown }>;
      expect(rows.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([long, 'are you still there']);
      const texts = rows.filter((m) => m.role === 'assistant').map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
      expect(texts.some((t) => t.includes(fullEcho))).toBe(false);
      expect(texts).toContain('Echo: are you still there');
    } finally {
      watch.close();
    }
  });
});
