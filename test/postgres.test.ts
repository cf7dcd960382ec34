import { afterEach, beforeEach, describe, expect, it, onTestFailed, vi } from 'vitest';
import { assistantText, runInput, runStrict, uid, userMessage } from './support/agui.js';
import { killIfRunning, startServerProcess, type ServerProcess } from './support/process.js';
import { postRun, sseEvents } from './support/run.js';
import { http } from './support/server.js';
import { isolatedPostgres, type IsolatedPostgres } from './support/services.js';

/**
 * The standalone server (`npm start`'s process) with `DATABASE_URL=postgres://…?schema=…`:
 * stored history, a pending approval and an `Idempotency-Key` across a restart, and the durable
 * inbox across a `kill -9`. Every test has a schema of its own, so what one test leaves in the
 * inbox is never recovered by another's restart, and files running at once never meet.
 */
describe('the standalone server on PostgreSQL', { timeout: 60_000 }, () => {
  const resourceId = 'pg-user';
  let db: IsolatedPostgres;
  let server: ServerProcess | undefined;

  beforeEach(async () => {
    db = await isolatedPostgres('server');
  });
  afterEach(async () => {
    killIfRunning(server);
    await server?.exited;
    server = undefined;
    await db.cleanup();
  });

  /** Starts the server on this test's schema; a failing test prints what each server printed. */
  async function start(env: Record<string, string> = {}): Promise<ServerProcess> {
    const started = await startServerProcess({ DATABASE_URL: db.url, DEMO_DELAY_MS: '0', ...env });
    onTestFailed(() => {
      const { stdout, stderr } = started.output();
      console.log(`server pid ${started.child.pid}:\n${stdout}\n${stderr}`);
    });
    return started;
  }

  /** Stops the server as a supervisor does (`SIGTERM`): it ends its runs and closes the pool. */
  async function stop(running: ServerProcess): Promise<void> {
    running.child.kill('SIGTERM');
    expect(await running.exited).toEqual({ code: 0, signal: null });
  }

  const route = (threadId: string, path: string) => `${server!.url}/threads/${threadId}/${path}`;
  const post = (threadId: string, path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    http(route(threadId, path), { body: { resourceId, ...body }, headers });
  const get = async (threadId: string, path: string, query = '') => (await http(`${route(threadId, path)}?resourceId=${resourceId}${query}`)).body;
  const rows = async (threadId: string) => (await get(threadId, 'messages')) as Array<{ id: string; role: string; content: unknown }>;
  const echoes = (list: Array<{ role: string; content: unknown }>) => list.filter((m) => m.role === 'assistant').map((m) => String(m.content));

  /** Waits until every text has an assistant answer that quotes it. */
  const answered = (threadId: string, texts: string[]) =>
    vi.waitFor(
      async () => {
        const answers = echoes(await rows(threadId));
        for (const text of texts) expect(answers.some((a) => a.includes(text))).toBe(true);
      },
      { timeout: 20_000, interval: 100 },
    );

  it("answers a /run and keeps it: the history route and the schema's mastra_messages hold both messages", async () => {
    server = await start();
    const threadId = uid('pg-run');
    const message = userMessage('hello postgres');
    const run = await runStrict(`${server.url}/run`, runInput({ threadId, messages: [message], forwardedProps: { resourceId } }));
    expect(assistantText(run.events)).toBe('Echo: hello postgres');

    const history = await get(threadId, 'messages', '&format=agui');
    expect(history).toEqual([
      { id: message.id, role: 'user', content: 'hello postgres' },
      expect.objectContaining({ role: 'assistant', content: 'Echo: hello postgres' }),
    ]);
    const stored = await db.query(`SELECT id, role FROM "${db.schema}".mastra_messages WHERE thread_id = $1 ORDER BY "createdAt"`, [threadId]);
    expect(stored).toEqual([
      { id: message.id, role: 'user' },
      { id: expect.any(String), role: 'assistant' },
    ]);
  });

  it('keeps a pending tool approval across a restart, and approving it afterwards runs the tool', async () => {
    server = await start();
    const threadId = uid('pg-approval');
    const woke = await post(threadId, 'send-message', { message: 'delete a.txt' });
    expect(woke.status).toBe(202);
    const call = await vi.waitFor(
      async () => {
        const pending = await get(threadId, 'pending-approvals');
        expect(pending).toHaveLength(1);
        return pending[0] as { runId: string; toolCallId: string };
      },
      { timeout: 20_000, interval: 100 },
    );
    expect(call).toMatchObject({ runId: woke.body.runId, toolName: 'delete_file', args: { path: 'a.txt' } });
    await stop(server);

    server = await start();
    expect(await get(threadId, 'pending-approvals')).toEqual([call]);
    const approved = await post(threadId, 'tool-approval', { toolCallId: call.toolCallId, approved: true });
    expect(approved.status).toBe(202);
    expect(approved.body).toEqual({ runId: call.runId, toolCallId: call.toolCallId });
    await answered(threadId, ['Deleted as requested']);
    const history = (await get(threadId, 'messages', '&format=agui')) as Array<{ role: string; content: string }>;
    expect(JSON.parse(history.find((m) => m.role === 'tool')!.content)).toEqual({ deleted: 'a.txt' });
    expect(await get(threadId, 'pending-approvals')).toEqual([]);
  });

  it('answers an Idempotency-Key retried after a restart with the first answer, and acts once', async () => {
    server = await start();
    const threadId = uid('pg-idempotency');
    const key = uid('key');
    const first = await post(threadId, 'send-message', { message: 'across a restart' }, { 'idempotency-key': key });
    expect(first.status).toBe(202);
    await answered(threadId, ['across a restart']);
    await stop(server);

    server = await start();
    const retry = await post(threadId, 'send-message', { message: 'across a restart' }, { 'idempotency-key': key });
    expect(retry.status).toBe(202);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    // A message with no key, answered after the retry: any run the retry had started is over by then.
    expect((await post(threadId, 'send-message', { message: 'sentinel' })).status).toBe(202);
    await answered(threadId, ['sentinel']);
    expect((await rows(threadId)).map((m) => m.content)).toEqual(['across a restart', 'Echo: across a restart', 'sentinel', 'Echo: sentinel']);
    const records = await db.query(
      `SELECT type FROM "${db.schema}".mastra_thread_state WHERE "threadId" = $1 AND type LIKE 'mastra-agui-bridge.idempotency:%'`,
      [threadId],
    );
    expect(records).toHaveLength(1);
  });

  it('sends again, after a kill -9 and a restart on the same schema, the messages and notifications it acknowledged and had not answered: once each, in order', async () => {
    server = await start({ DEMO_DELAY_MS: '40' });
    const threadId = uid('pg-crash');
    const send = async (path: string, message: string) => {
      const res = await post(threadId, path, { message });
      expect(res.status).toBe(202);
      return { text: message, id: res.body.signalId as string };
    };
    const notify = async (summary: string) => {
      const res = await post(threadId, 'notifications', { source: 'ci', kind: 'build', summary, priority: 'urgent' });
      expect(res.status).toBe(202);
      expect(res.body.decision.action).toBe('deliver');
      return { text: summary, id: res.body.record.deliveredSignalId as string };
    };
    // A long run, still streaming when the process dies; then messages while it streams: one
    // delivered into it, a notification, two queued behind it.
    const input = runInput({
      threadId,
      messages: [userMessage('a long answer that is still streaming when the server dies, word after word')],
      forwardedProps: { resourceId },
    });
    const res = await postRun(`${server.url}/run`, input);
    for await (const event of sseEvents(res.body!)) if (event.type === 'TEXT_MESSAGE_CONTENT') break;
    const acknowledged = [
      await send('send-message', 'delivered while running'),
      await notify('build 42 is green'),
      await send('queue-message', 'queued first'),
      await send('queue-message', 'queued second'),
    ];
    server.child.kill('SIGKILL');
    expect((await server.exited).signal).toBe('SIGKILL');

    server = await start();
    // The cut /run and the four messages: sent again by the restarted server, not answered before the kill.
    await vi.waitFor(() => expect(server!.output().stdout).toContain('recovered 5 acknowledged'), { timeout: 20_000, interval: 50 });
    await answered(
      threadId,
      acknowledged.map(({ text }) => text),
    );
    const stored = await rows(threadId);
    for (const { id } of acknowledged) expect(stored.filter((m) => m.id === id)).toHaveLength(1);
    const order = acknowledged.map(({ text }) => echoes(stored).findIndex((a) => a.includes(text)));
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });
});
