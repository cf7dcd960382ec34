import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventType } from '@ag-ui/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assistantText, runInput, runStrict, uid, userMessage } from './support/agui.js';
import { killIfRunning, startServerProcess, type ServerProcess } from './support/process.js';
import { http } from './support/server.js';

/**
 * The standalone server (`npm start`) as a child process on a LibSQL file: start, serve, SIGTERM
 * during a streaming run, restart on the same database.
 */
describe('standalone server process', { timeout: 60_000 }, () => {
  let dir: string;
  let databaseUrl: string;
  let server: ServerProcess | undefined;
  const resourceId = uid('server-user');
  const threadId = uid('server-thread');
  let firstHistory: Array<{ id: string; content: unknown }> = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'agui-server-'));
    databaseUrl = `file:${join(dir, 'x.db')}`;
  });
  afterEach(() => {
    killIfRunning(server);
    server = undefined;
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('PORT=0 binds a free port and prints the real one; an echo runs through /run; SIGTERM when idle exits 0', async () => {
    server = await startServerProcess({ DATABASE_URL: databaseUrl, DEMO_DELAY_MS: '0' });
    const url = new URL(server.url);
    expect(url.pathname).toBe('/agui');
    expect(Number(url.port)).toBeGreaterThan(0);
    expect(server.output().stdout).toContain(`storage ${databaseUrl}`);

    const agents = await http(`${server.url}/agents`);
    // The demo agent, and the demo workflow served beside it.
    expect(agents.body.map((a: { id: string; kind: string }) => [a.id, a.kind])).toEqual([
      ['demo', 'agent'],
      ['draft-and-send', 'workflow'],
    ]);

    const run = await runStrict(`${server.url}/run`, runInput({ threadId, messages: [userMessage('hello server')], forwardedProps: { resourceId } }));
    expect(run.terminal.type).toBe(EventType.RUN_FINISHED);
    expect(assistantText(run.events)).toBe('Echo: hello server');

    // Bad input does not hurt the process: it answers, then serves the next request.
    expect((await http(`${server.url}/run`, { rawBody: '{not json' })).status).toBe(400);
    expect((await http(`${server.url}/threads`, { rawBody: 'x'.repeat(2 * 1024 * 1024) })).status).toBe(413);
    expect((await http(`${server.url}/nope`)).status).toBe(404);

    const history = await http(`${server.url}/threads/${threadId}/messages?resourceId=${resourceId}`);
    expect(history.body.map((m: { content: unknown }) => m.content)).toEqual(['hello server', 'Echo: hello server']);
    firstHistory = history.body;

    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.output().stdout).toContain('SIGTERM: draining');
    expect(server.output().stderr).toBe('');
  });

  it('restarted on the same database: the earlier messages are still there', async () => {
    expect(firstHistory).toHaveLength(2);
    server = await startServerProcess({ DATABASE_URL: databaseUrl, DEMO_DELAY_MS: '0' });
    const history = await http(`${server.url}/threads/${threadId}/messages?resourceId=${resourceId}`);
    expect(history.status).toBe(200);
    expect(history.body).toEqual(firstHistory);
    const thread = await http(`${server.url}/threads?resourceId=${resourceId}`);
    expect(thread.body.map((t: { id: string }) => t.id)).toEqual([threadId]);
    // Another resource still cannot see it after a restart.
    expect((await http(`${server.url}/threads/${threadId}?resourceId=someone-else`)).status).toBe(404);
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
  });

  it('SIGTERM during a streaming run with SHUTDOWN_GRACE_MS=0: the stream ends cancelled, the process exits 0', async () => {
    server = await startServerProcess({ DATABASE_URL: databaseUrl, DEMO_DELAY_MS: '50', SHUTDOWN_GRACE_MS: '0' });
    const running = server;
    // A long echo: one word every 50 ms, far longer than the test waits for.
    const long = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
    const input = runInput({ threadId, messages: [userMessage(long)], forwardedProps: { resourceId } });
    let signalled = false;
    const run = await runStrict(`${running.url}/run`, input, (event) => {
      // Signal once the run is visibly streaming text.
      if (event.type === EventType.TEXT_MESSAGE_CONTENT && !signalled) {
        signalled = true;
        running.child.kill('SIGTERM');
      }
    });
    expect(signalled).toBe(true);
    const terminal = run.terminal as { type: EventType; outcome?: { type: string } };
    expect([EventType.RUN_FINISHED, EventType.RUN_ERROR]).toContain(terminal.type);
    if (terminal.type === EventType.RUN_FINISHED) expect(terminal.outcome).toEqual({ type: 'cancelled' });
    // It was cut short, not streamed to the end.
    expect(assistantText(run.events).length).toBeLessThan(`Echo: ${long}`.length);
    expect(await running.exited).toEqual({ code: 0, signal: null });
    expect(running.output().stderr).toBe('');
  });

  it('after that shutdown the database still opens and holds the earlier history', async () => {
    server = await startServerProcess({ DATABASE_URL: databaseUrl, DEMO_DELAY_MS: '0' });
    const history = await http(`${server.url}/threads/${threadId}/messages?resourceId=${resourceId}`);
    expect(history.status).toBe(200);
    expect(history.body.slice(0, 2)).toEqual(firstHistory);
    // And the thread goes on: a new run on it works.
    const run = await runStrict(`${server.url}/run`, runInput({ threadId, messages: [userMessage('back again')], forwardedProps: { resourceId } }));
    expect(assistantText(run.events)).toBe('Echo: back again');
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
  });

  it('a port in use or a bad environment: one clear line on stderr, exit code 1, no crash stack', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const busy = String((blocker.address() as AddressInfo).port);
      const error = await startServerProcess({ DATABASE_URL: databaseUrl, PORT: busy }).then(
        () => new Error('started on a busy port'),
        (e: Error) => e,
      );
      expect(error.message).toContain('exited (code 1');
      expect(error.message).toContain(`EADDRINUSE: address already in use 127.0.0.1:${busy}`);
      expect(error.message).not.toContain("Unhandled 'error' event");
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
    const badEnv = await startServerProcess({ DATABASE_URL: databaseUrl, PORT: 'eighty' }).then(
      () => new Error('started with PORT=eighty'),
      (e: Error) => e,
    );
    expect(badEnv.message).toContain('exited (code 1');
    expect(badEnv.message).toContain('Invalid environment: PORT');
  });

  it('SIGTERM with an idle /events subscriber open still exits 0', async () => {
    server = await startServerProcess({ DATABASE_URL: databaseUrl, DEMO_DELAY_MS: '0' });
    const running = server;
    const res = await fetch(`${running.url}/threads/${threadId}/events?resourceId=${resourceId}`, { headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    // Wait until the stream is really open (its first bytes: retry hint / connected comment).
    const first = await reader.read();
    expect(first.done).toBe(false);
    running.child.kill('SIGTERM');
    // The stream ends (cleanly or by the socket closing) and the process exits.
    const drained = (async () => {
      try {
        for (;;) if ((await reader.read()).done) return;
      } catch {
        // the server closed the socket: also an end
      }
    })();
    await drained;
    expect(await running.exited).toEqual({ code: 0, signal: null });
  });
});
