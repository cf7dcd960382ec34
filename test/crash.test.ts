import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { runInput, uid, userMessage } from './support/agui.js';
import { killIfRunning, startServerProcess, type ServerProcess } from './support/process.js';
import { postRun, sseEvents } from './support/run.js';
import { http } from './support/server.js';
import { openSse } from './support/sse.js';

/**
 * The standalone server killed with `kill -9` in the middle of `/run`s and restarted on the same
 * LibSQL file: a user message whose run had sent `RUN_STARTED` is stored (once), and the steps a
 * run finished before the crash are in the history.
 */
describe('kill -9 during /run, restart on the same database', { timeout: 60_000 }, () => {
  let dir: string;
  let databaseUrl: string;
  let server: ServerProcess | undefined;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'agui-crash-'));
  });
  // A database of its own per test: what one test's crash leaves in the durable inbox must not be
  // recovered by the next test's restart.
  let tests = 0;
  beforeEach(() => {
    databaseUrl = `file:${join(dir, `crash-${++tests}.db`)}`;
  });
  afterEach(() => {
    killIfRunning(server);
    server = undefined;
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts a `/run` and reads it until `until` says stop; the stream is left open. */
  async function runUntil(url: string, threadId: string, text: string, until: (type: string) => boolean) {
    const input = runInput({ threadId, messages: [userMessage(text)], forwardedProps: { resourceId: 'crash-user' } });
    const res = await postRun(`${url}/run`, input);
    const seen: string[] = [];
    for await (const event of sseEvents(res.body!)) {
      seen.push(event.type);
      if (until(event.type)) break;
    }
    return { input, seen };
  }

  /** Waits for the restarted server to report that it sent again what the crash left unanswered. */
  const recovered = (process: ServerProcess, count: number) =>
    vi.waitFor(() => expect(process.output().stdout).toContain(`recovered ${count} acknowledged`), { timeout: 20_000, interval: 50 });

  const history = async (url: string, threadId: string) =>
    (await http(`${url}/threads/${threadId}/messages?resourceId=crash-user&format=agui`)).body as Array<Record<string, any>>;

  it('keeps the acknowledged user messages, once each, and the steps finished before the crash', async () => {
    // Slow enough that both runs are still streaming when the process dies.
    server = await startServerProcess({ DATABASE_URL: databaseUrl, DEMO_DELAY_MS: '40' });
    const echoThread = uid('crash-echo');
    const toolThread = uid('crash-tool');
    // A follower of the weather thread, whose last id is what a tab would come back with.
    const follower = await openSse(`${server.url}/threads/${toolThread}/events?resourceId=crash-user`);
    await follower.waitForComment('connected');

    // ~100 words at 40 ms: seconds of streaming left when the process dies, however loaded the machine.
    const longAnswer = `a long answer that is still streaming when the server dies:${' and on'.repeat(45)}`;
    const echo = await runUntil(server.url, echoThread, longAnswer, (t) => t === 'TEXT_MESSAGE_CONTENT');
    expect(echo.seen[0]).toBe('RUN_STARTED');
    // The weather run: step 1 (the call and its result) is over once step 2 streams text.
    let contentAfterResult = false;
    const tool = await runUntil(server.url, toolThread, 'weather in Oslo?', (t) => {
      if (t === 'TOOL_CALL_RESULT') contentAfterResult = true;
      return contentAfterResult && t === 'TEXT_MESSAGE_CONTENT';
    });
    expect(tool.seen).toContain('STEP_FINISHED');
    await follower.waitForEvent((e) => e.type === 'TEXT_MESSAGE_CONTENT' && e.messageId !== tool.input.messages[0].id);
    const lastSeen = follower.events.at(-1)!.id;

    server.child.kill('SIGKILL');
    await follower.ended;
    expect((await server.exited).signal).toBe('SIGKILL');
    server = await startServerProcess({ DATABASE_URL: databaseUrl, DEMO_DELAY_MS: '0' });
    await recovered(server, 2); // both cut runs are run again, to their end

    const echoHistory = await history(server.url, echoThread);
    const [echoUser] = echo.input.messages;
    expect(echoHistory.filter((m) => m.id === echoUser.id)).toEqual([{ id: echoUser.id, role: 'user', content: echoUser.content }]);

    const toolHistory = await history(server.url, toolThread);
    const [toolUser] = tool.input.messages;
    expect(toolHistory[0]).toEqual({ id: toolUser.id, role: 'user', content: toolUser.content });
    const call = toolHistory.find((m) => m.role === 'assistant' && m.toolCalls);
    expect(call?.toolCalls).toEqual([expect.objectContaining({ function: expect.objectContaining({ name: 'get_weather' }) })]);
    const result = toolHistory.find((m) => m.role === 'tool');
    expect(JSON.parse(result?.content)).toMatchObject({ city: 'Oslo' });

    // The tab comes back with its id from before the crash: a well-formed stream that starts with
    // a snapshot holding what was stored, never the cut run's open bracket.
    const back = await openSse(`${server.url}/threads/${toolThread}/events?resourceId=crash-user`, { lastEventId: lastSeen });
    await back.waitForEvent((e) => e.type === 'RUN_FINISHED');
    expect(back.list.map((e) => e.type)).toEqual(['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED']);
    expect(back.list[1].messages).toEqual(toolHistory);
    expect(back.events[2].id).toBeGreaterThan(lastSeen);
    await back.close();
  });

  it('sends again, after the restart, the messages and notifications it acknowledged and had not answered: once each, in order', async () => {
    server = await startServerProcess({ DATABASE_URL: databaseUrl, DEMO_DELAY_MS: '40' });
    const threadId = uid('crash-signals');
    const base = server.url;
    const send = async (route: string, message: string) => {
      const res = await http(`${base}/threads/${threadId}/${route}`, { body: { resourceId: 'crash-user', message } });
      expect(res.status).toBe(202);
      return { text: message, id: res.body.signalId as string };
    };
    // A long run, then messages while it streams: one delivered into it, two queued behind it.
    await runUntil(base, threadId, 'a long answer that is still streaming when the server dies, word after word', (t) => t === 'TEXT_MESSAGE_CONTENT');
    const notify = async (summary: string) => {
      const res = await http(`${base}/threads/${threadId}/notifications`, {
        body: { resourceId: 'crash-user', source: 'ci', kind: 'build', summary, priority: 'urgent' },
      });
      expect(res.status).toBe(202);
      expect(res.body.decision.action).toBe('deliver');
      return { text: summary, id: res.body.record.deliveredSignalId as string };
    };
    const acknowledged = [
      await send('send-message', 'delivered while running'),
      await notify('build 42 is green'),
      await send('queue-message', 'queued first'),
      await send('queue-message', 'queued second'),
    ];
    server.child.kill('SIGKILL');
    await server.exited;

    server = await startServerProcess({ DATABASE_URL: databaseUrl, DEMO_DELAY_MS: '0' });
    const url = server.url;
    const rows = async () =>
      (await http(`${url}/threads/${threadId}/messages?resourceId=crash-user`)).body as Array<{ id: string; role: string; content: unknown }>;
    const echoes = (list: Array<{ role: string; content: unknown }>) => list.filter((m) => m.role === 'assistant').map((m) => String(m.content));
    // The restarted server answers them by itself; wait until every one has its answer.
    await vi.waitFor(
      async () => {
        const answers = echoes(await rows());
        for (const { text } of acknowledged) expect(answers.some((a) => a.includes(text))).toBe(true);
      },
      { timeout: 20_000, interval: 100 },
    );
    const stored = await rows();
    for (const { id } of acknowledged) expect(stored.filter((m) => m.id === id)).toHaveLength(1);
    // In the order they were accepted.
    const order = acknowledged.map(({ text }) => echoes(stored).findIndex((a) => a.includes(text)));
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('a queued message cancelled before the crash stays cancelled after the restart', async () => {
    server = await startServerProcess({ DATABASE_URL: databaseUrl, DEMO_DELAY_MS: '40' });
    const threadId = uid('crash-cancel');
    const base = server.url;
    const queue = async (message: string) =>
      (await http(`${base}/threads/${threadId}/queue-message`, { body: { resourceId: 'crash-user', message } })).body.signalId as string;
    await runUntil(base, threadId, 'a long answer that is still streaming when the server dies, word after word', (t) => t === 'TEXT_MESSAGE_CONTENT');
    const cancelled = await queue('cancelled before the crash');
    const kept = await queue('kept through the crash');
    const cancel = await http(`${base}/threads/${threadId}/queue/${cancelled}?resourceId=crash-user`, { method: 'DELETE' });
    expect(cancel.body).toEqual({ cancelled: [cancelled] });
    server.child.kill('SIGKILL');
    await server.exited;

    server = await startServerProcess({ DATABASE_URL: databaseUrl, DEMO_DELAY_MS: '0' });
    await recovered(server, 2); // the cut /run and the kept message, not the cancelled one
    const rows = (await http(`${server.url}/threads/${threadId}/messages?resourceId=crash-user`)).body as Array<{ id: string; role: string }>;
    expect(rows.some((m) => m.id === cancelled)).toBe(false);
    const at = rows.findIndex((m) => m.id === kept);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(rows.findLastIndex((m) => m.role === 'assistant')).toBeGreaterThan(at);
  });

  it('a pending approval survives kill -9, and after the restart a new message supersedes it: declined, answered at once', async () => {
    server = await startServerProcess({ DATABASE_URL: databaseUrl, DEMO_DELAY_MS: '0' });
    const threadId = uid('crash-pending');
    const first = await runUntil(server.url, threadId, 'delete notes.txt', (t) => t === 'RUN_FINISHED');
    expect(first.seen.at(-1)).toBe('RUN_FINISHED');
    server.child.kill('SIGKILL');
    await server.exited;

    server = await startServerProcess({ DATABASE_URL: databaseUrl, DEMO_DELAY_MS: '0' });
    const pending = (await http(`${server.url}/threads/${threadId}/pending-approvals?resourceId=crash-user`)).body as Array<{ toolCallId: string }>;
    expect(pending).toHaveLength(1);
    const next = await runUntil(server.url, threadId, 'something else', (t) => t === 'RUN_FINISHED' || t === 'RUN_ERROR');
    expect(next.seen.at(-1)).toBe('RUN_FINISHED');
    expect((await http(`${server.url}/threads/${threadId}/pending-approvals?resourceId=crash-user`)).body).toEqual([]);
    const stored = await history(server.url, threadId);
    const result = stored.find((m) => m.role === 'tool' && m.toolCallId === pending[0].toolCallId);
    expect(JSON.parse(result!.content)).toMatchObject({ declined: true, reason: 'A new message came first' });
    expect(stored.at(-1)).toMatchObject({ role: 'assistant', content: 'Echo: something else' });
  });
});
