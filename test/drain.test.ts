import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { assistantText, runInput, uid, userMessage } from './support/agui.js';
import { killIfRunning, startServerProcess, type ServerProcess } from './support/process.js';
import { postRun, sseEvents } from './support/run.js';
import { http, startTestBridge } from './support/server.js';
import { brackets, openSse, type SseReader } from './support/sse.js';

/**
 * SIGTERM is a replacement, not an outage: readiness goes 503 at once, new runs and steering are
 * 503 + Retry-After (a balancer retries them elsewhere), and the runs in flight finish within
 * SHUTDOWN_GRACE_MS; what is left after it is cancelled.
 */
describe('SIGTERM drains the standalone server', { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'agui-drain-'));
  let server: ServerProcess | undefined;
  afterEach(() => killIfRunning(server));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A `/run` with a long answer; resolves once its first words arrived, with the rest still coming. */
  async function startLongRun(url: string, words: number) {
    const threadId = uid('drain');
    const res = await postRun(`${url}/run`, runInput({ threadId, messages: [userMessage(`hello ${'word '.repeat(words)}`)] }));
    // Read by hand: leaving a `for await` would cancel the stream.
    const events = sseEvents(res.body!);
    const seen: Array<Record<string, any>> = [];
    for (let next = await events.next(); !next.done; next = await events.next()) {
      seen.push(next.value);
      if (next.value.type === 'TEXT_MESSAGE_CONTENT') break;
    }
    const rest = (async () => {
      for await (const event of events) seen.push(event);
      return seen;
    })();
    return { threadId, rest };
  }

  it('runs in flight finish; readiness, new runs and steering answer 503 meanwhile; then it exits 0', async () => {
    server = await startServerProcess({ DATABASE_URL: `file:${join(dir, 'a.db')}`, DEMO_DELAY_MS: '40' });
    const origin = new URL(server.url).origin;
    const { threadId, rest } = await startLongRun(server.url, 40);
    server.child.kill('SIGTERM');
    await expect.poll(async () => (await http(`${origin}/readyz`)).status, { interval: 20 }).toBe(503);

    const run = await http(`${server.url}/run`, { body: runInput({ threadId: uid('late'), messages: [userMessage('hi')] }) });
    expect(run.status).toBe(503);
    expect(run.body).toMatchObject({ code: 'UNAVAILABLE' });
    expect(Number(run.headers.get('retry-after'))).toBeGreaterThan(0);
    const steer = await http(`${server.url}/threads/${threadId}/send-message`, { body: { message: 'more' } });
    expect(steer.status).toBe(503);
    expect(steer.headers.get('retry-after')).not.toBeNull();
    // Reads still answer while the runs finish.
    expect((await http(`${server.url}/agents`)).status).toBe(200);

    const events = await rest;
    const terminal = events.at(-1)!;
    expect(terminal.type).toBe('RUN_FINISHED');
    expect(terminal.outcome).toBeUndefined();
    expect(assistantText(events as never)).toContain('word word');
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });

  it('what is still running when SHUTDOWN_GRACE_MS runs out is cancelled, and it exits', async () => {
    server = await startServerProcess({ DATABASE_URL: `file:${join(dir, 'b.db')}`, DEMO_DELAY_MS: '40', SHUTDOWN_GRACE_MS: '300' });
    const { rest } = await startLongRun(server.url, 200);
    server.child.kill('SIGTERM');
    const terminal = (await rest).at(-1)!;
    expect(terminal).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });

  it('a follower of a run the shutdown cuts sees it end cancelled, as its /run does, before its stream ends', async () => {
    server = await startServerProcess({ DATABASE_URL: `file:${join(dir, 'c.db')}`, DEMO_DELAY_MS: '40', SHUTDOWN_GRACE_MS: '300' });
    const follow = async (threadId: string) => {
      const reader = await openSse(`${server!.url}/threads/${threadId}/events`);
      await reader.waitForComment('connected');
      return reader;
    };
    const endOf = (reader: SseReader) => brackets(reader.list).at(-1)?.at(-1);
    const woken = uid('drain-woken');
    const onWoken = await follow(woken);
    const sent = await http(`${server.url}/threads/${woken}/send-message`, { body: { message: `hello ${'word '.repeat(200)}` } });
    expect(sent.body).toMatchObject({ action: 'wake' });
    await onWoken.waitForEvent((e) => e.type === 'TEXT_MESSAGE_CONTENT' && e.messageId !== sent.body.signalId);
    const { threadId, rest } = await startLongRun(server.url, 200);
    const onRun = await follow(threadId);
    await onRun.waitForEvent((e) => e.type === 'TEXT_MESSAGE_CONTENT');
    server.child.kill('SIGTERM');
    const run = await rest;
    await Promise.all([onRun.ended, onWoken.ended]);
    expect({ run: run.at(-1), follower: endOf(onRun), 'follower of the woken run': endOf(onWoken) }).toEqual({
      run: expect.objectContaining({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } }),
      follower: expect.objectContaining({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } }),
      'follower of the woken run': expect.objectContaining({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } }),
    });
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });
});

describe('a drain that begins while a /run is still being checked', () => {
  it('waits for it: the run is answered in full, then the drain resolves; a /run after it began is refused', async () => {
    let letIn!: () => void;
    const held = new Promise<void>((resolve) => (letIn = resolve));
    let arrived!: () => void;
    const checking = new Promise<void>((resolve) => (arrived = resolve));
    // The caller's check holds the request between the drain's gate and its run slot.
    const resolveResourceId = async () => {
      arrived();
      await held;
      return 'drain-user';
    };
    const own = await startTestBridge({ config: { resolveResourceId } });
    try {
      const response = postRun(`${own.base}/run`, runInput({ threadId: uid('drain-admitted'), messages: [userMessage('hello there')] }));
      await checking;
      let settled = false;
      const drain = own.bridge.drain(60_000).finally(() => (settled = true));
      // With nothing in flight a drain resolves on its first look, before the next turn of the event loop.
      await new Promise((resolve) => setImmediate(resolve));
      expect(settled).toBe(false);
      const late = await http(`${own.base}/run`, { body: runInput({ threadId: uid('drain-late'), messages: [userMessage('hi')] }) });
      expect(late.status).toBe(503);

      letIn();
      const events = [];
      for await (const event of sseEvents((await response).body!)) events.push(event);
      expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED' });
      expect(events.at(-1)?.outcome).toBeUndefined();
      expect(assistantText(events as never)).toBe('Echo: hello there');
      expect(await drain).toBe(true);
    } finally {
      await own.close();
    }
  });
});
