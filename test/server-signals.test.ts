import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventType } from '@ag-ui/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assistantText, runInput, runStrict, uid, userMessage, type StrictRun } from './support/agui.js';
import { REPO_ROOT } from './support/process.js';

/** `npm start`, exactly as the README says, in its own process group (so a failure can end it all). */
interface NpmStart {
  npm: ChildProcess;
  /** The server's URL and pid, from its `listening on` line. */
  url: string;
  serverPid: number;
  stdout(): string;
  stderr(): string;
  /** npm has exited. */
  npmExited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Every writer of npm's stdout and stderr (npm and the server) has closed them: the server is gone too. */
  outputClosed: Promise<void>;
}

function npmStart(env: Record<string, string>): Promise<NpmStart> {
  const npm = spawn('npm', ['start'], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  started.push(npm);
  let stdout = '';
  let stderr = '';
  npm.stdout.setEncoding('utf8');
  npm.stderr.setEncoding('utf8');
  npm.stderr.on('data', (chunk: string) => (stderr += chunk));
  const npmExited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    npm.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const outputClosed = new Promise<void>((resolve) => npm.once('close', () => resolve()));
  return new Promise((resolve, reject) => {
    let listening = false;
    npm.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      const match = /listening on (http:\/\/\S+) \(pid (\d+)/.exec(stdout);
      if (match && !listening) {
        listening = true;
        resolve({ npm, url: match[1], serverPid: Number(match[2]), stdout: () => stdout, stderr: () => stderr, npmExited, outputClosed });
      }
    });
    void npmExited.then(({ code, signal }) => {
      if (!listening) reject(new Error(`npm start exited (code ${code}, signal ${signal}) before listening:\n${stdout}\n${stderr}`));
    });
  });
}

/** Whether `pid` is still a live process (a zombie waiting for its reaper counts as gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // /proc/<pid>/stat: "pid (comm) state ...": Z is a zombie.
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/**
 * Whether `pid` is gone within 2 s. For a process that is not our child there is no exit event to
 * wait on, and its pipes close while it exits, a moment before the kernel marks it exited: on a
 * loaded machine that moment can be seen (the process still running, its files already closed).
 */
async function goneSoon(pid: number): Promise<boolean> {
  for (const deadline = Date.now() + 2000; alive(pid);) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

const started: ChildProcess[] = [];

/** A thread events stream, read to its end in the background. */
async function openEvents(url: string, threadId: string, resourceId: string): Promise<{ ended: Promise<string> }> {
  const res = await fetch(`${url}/threads/${threadId}/events?resourceId=${resourceId}`, { headers: { accept: 'text/event-stream' } });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  // Open for real: its first bytes (retry hint, `: connected`) have arrived.
  let text = decoder.decode((await reader.read()).value);
  const ended = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return text;
        text += decoder.decode(value, { stream: true });
      }
    } catch {
      return text; // the server closed the socket: also an end
    }
  })();
  return { ended };
}

/**
 * A long echo (one word every 50 ms, far longer than the test) on `/run`; `signal` is called once
 * the run is visibly streaming text.
 */
function longRun(url: string, threadId: string, resourceId: string, signal: () => void): { text: string; run: Promise<StrictRun> } {
  const text = `Echo: ${Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ')}`;
  let signalled = false;
  const input = runInput({ threadId, messages: [userMessage(text.slice('Echo: '.length))], forwardedProps: { resourceId } });
  const run = runStrict(`${url}/run`, input, (event) => {
    if (event.type === EventType.TEXT_MESSAGE_CONTENT && !signalled) {
      signalled = true;
      signal();
    }
  });
  return { text, run };
}

function expectCancelled(run: StrictRun, fullText: string): void {
  const terminal = run.terminal as { type: EventType; outcome?: { type: string } };
  expect([EventType.RUN_FINISHED, EventType.RUN_ERROR]).toContain(terminal.type);
  if (terminal.type === EventType.RUN_FINISHED) expect(terminal.outcome).toEqual({ type: 'cancelled' });
  // Cut short, not streamed to the end.
  expect(assistantText(run.events).length).toBeLessThan(fullText.length);
}

/**
 * The README's command, `npm start`, stopped the way a terminal, a process manager or a container
 * runtime stops it: a signal to the npm process only. The server must hear it, end its open streams
 * with their terminal event, close storage and exit, and leave no process behind.
 */
describe('npm start: signals reach the server', { timeout: 60_000 }, () => {
  let dir: string;
  const resourceId = uid('signals-user');

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'agui-signals-'));
  });
  afterEach(() => {
    // Whatever happened, nothing this file started outlives it: end each npm's whole process group.
    for (const npm of started.splice(0)) {
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} to npm during a streaming run: terminal events on open streams, shutdown line, npm exits 0, no server left`, async () => {
      const threadId = uid(`signals-${signal}`);
      // No grace: SIGTERM drains first (test/drain.test.ts), here it cancels at once as SIGINT does.
      const app = await npmStart({ DATABASE_URL: `file:${join(dir, `${signal}.db`)}`, DEMO_DELAY_MS: '50', SHUTDOWN_GRACE_MS: '0' });
      expect(app.serverPid).not.toBe(app.npm.pid);
      const events = await openEvents(app.url, threadId, resourceId);
      const { text, run } = longRun(app.url, threadId, resourceId, () => app.npm.kill(signal));

      expectCancelled(await run, text);
      await events.ended;
      expect(await app.npmExited).toEqual({ code: 0, signal: null });
      await app.outputClosed;
      expect(app.stdout()).toContain(signal === 'SIGTERM' ? 'SIGTERM: draining' : `${signal}: closing open streams and storage…`);
      expect(app.stderr()).not.toMatch(/error/i);
      // npm waited for the server and reaped it: gone, not orphaned.
      expect(alive(app.serverPid)).toBe(false);
    });
  }

  it('npm killed outright (SIGKILL, nothing forwarded): the server notices its parent is gone and shuts down the same way', async () => {
    const threadId = uid('signals-kill');
    const app = await npmStart({ DATABASE_URL: `file:${join(dir, 'kill.db')}`, DEMO_DELAY_MS: '50' });
    const events = await openEvents(app.url, threadId, resourceId);
    const { text, run } = longRun(app.url, threadId, resourceId, () => app.npm.kill('SIGKILL'));

    expectCancelled(await run, text);
    await events.ended;
    expect(await app.npmExited).toEqual({ code: null, signal: 'SIGKILL' });
    // The server wrote to the same pipes: they close as it exits.
    await app.outputClosed;
    expect(app.stdout()).toContain(`parent process ${app.npm.pid} exited: closing open streams and storage…`);
    expect(await goneSoon(app.serverPid)).toBe(true);
  });
});
