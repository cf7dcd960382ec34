import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { runInput, uid, userMessage } from './support/agui.js';
import { killIfRunning, startServerProcess, type ServerProcess } from './support/process.js';
import { postRun, sseEvents } from './support/run.js';
import { http } from './support/server.js';

/**
 * The standalone server killed with `kill -9` again and again over a mixed workload (long `/run`s,
 * `send-message` bursts, `queue-message`s, user `signals`, on several threads), restarted each time on the same
 * LibSQL file. At the end, every message the server acknowledged (a `202`, or a `/run` that sent
 * `RUN_STARTED`) is stored exactly once (under one id, and its text under no other) and answered
 * (an assistant message follows it), and recovery ran the agent for nothing else: the scripted
 * model answers a prompt that ends with an answer with "The background task has finished.", and
 * no such text is stored.
 */
const KILLS = 40;
const THREADS = 3;
const RESOURCE = 'loop-user';

/** A small seeded generator: the kill moments vary, the test replays the same ones. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe(`${KILLS} kills of a server under load, each followed by a restart on the same database`, { timeout: 420_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'agui-crash-loop-'));
  const databaseUrl = `file:${join(dir, 'loop.db')}`;
  let server: ServerProcess | undefined;
  afterEach(() => killIfRunning(server));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('loses nothing it acknowledged, stores nothing twice, runs nothing nobody asked for', async () => {
    const next = random(20261124);
    const threads = Array.from({ length: THREADS }, () => uid('loop-thread'));
    const acknowledged: Array<{ threadId: string; id: string; text: string }> = [];
    // Every input sent, acknowledged or not (a request the kill cut may still have started a run).
    let sent = 0;
    const callLog = join(dir, 'model-calls.jsonl');

    for (let round = 0; round < KILLS; round++) {
      server = await startServerProcess({ DATABASE_URL: databaseUrl, DEMO_DELAY_MS: '8', DEMO_CALL_LOG: callLog });
      const url = server.url;
      // Kill after a number of acknowledgements that varies from round to round.
      const killAfter = 2 + Math.floor(next() * 6);
      let count = 0;
      let kill!: () => void;
      const killed = new Promise<void>((resolve) => (kill = resolve));
      const ack = (threadId: string, id: string, text: string) => {
        acknowledged.push({ threadId, id, text });
        if (++count === killAfter) kill();
      };
      const work = threads.map(async (threadId, t) => {
        // Each text once in the whole test: a second copy under another id would show.
        const text = (kind: string, i = 0) => `${kind} ${round}.${t}.${i} ${'word '.repeat(4 + Math.floor(next() * 12))}`.trim();
        try {
          if (next() < 0.6) {
            const message = userMessage(text('run'));
            sent++;
            const res = await postRun(`${url}/run`, runInput({ threadId, messages: [message], forwardedProps: { resourceId: RESOURCE } }));
            for await (const event of sseEvents(res.body!)) {
              if (event.type === 'RUN_STARTED') ack(threadId, message.id, message.content as string);
            }
          }
          for (let i = 0; i < 3; i++) {
            const pick = next();
            const route = pick < 0.4 ? 'send-message' : pick < 0.8 ? 'queue-message' : 'signals';
            const content = text(route, i + 1);
            const body = route === 'signals' ? { type: 'user', contents: content } : { message: content };
            sent++;
            const answer = await http(`${url}/threads/${threadId}/${route}`, { body: { resourceId: RESOURCE, ...body } });
            if (answer.status === 202 && (answer.body.action === 'wake' || answer.body.action === 'deliver')) ack(threadId, answer.body.signalId, content);
          }
        } catch {
          // the server died under this request: nothing was acknowledged by it
        }
      });
      await Promise.race([killed, Promise.all(work)]);
      server.child.kill('SIGKILL');
      await server.exited;
      await Promise.allSettled(work);
    }
    expect(acknowledged.length).toBeGreaterThanOrEqual(KILLS);

    // The last restart: it sends again whatever the last kill left unanswered.
    server = await startServerProcess({ DATABASE_URL: databaseUrl, DEMO_DELAY_MS: '0', DEMO_CALL_LOG: callLog });
    const url = server.url;
    const history = async (threadId: string) =>
      (await http(`${url}/threads/${threadId}/messages?resourceId=${RESOURCE}`)).body as Array<{ id: string; role: string; content: unknown }>;
    await vi.waitFor(
      async () => {
        for (const threadId of threads) {
          const rows = await history(threadId);
          const lastAnswer = rows.findLastIndex((m) => m.role === 'assistant');
          for (const { id } of acknowledged.filter((a) => a.threadId === threadId)) {
            const at = rows.findIndex((m) => m.id === id);
            expect(at, `message ${id} is stored`).toBeGreaterThanOrEqual(0);
            expect(at, `message ${id} is answered`).toBeLessThan(lastAnswer);
          }
        }
      },
      { timeout: 60_000, interval: 200 },
    );
    const textOf = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content));
    for (const threadId of threads) {
      const rows = await history(threadId);
      const ids = rows.map((m) => m.id);
      expect(new Set(ids).size, 'no message stored twice').toBe(ids.length);
      // Steering messages are stored as `signal` rows, a `/run`'s as `user` rows.
      const userTexts = rows.filter((m) => m.role === 'user' || m.role === 'signal').map((m) => textOf(m.content));
      for (const { text } of acknowledged.filter((a) => a.threadId === threadId)) {
        expect(
          userTexts.filter((stored) => stored.includes(text)),
          `"${text}" stored once`,
        ).toHaveLength(1);
      }
      const unasked = rows.filter((m) => m.role === 'assistant' && textOf(m.content).includes('The background task has finished.'));
      expect(
        unasked.map((m) => textOf(m.content)),
        'runs nobody asked for',
      ).toEqual([]);
    }
    // The model's calls, stored or not: none with nothing new (a prompt that ends with an answer),
    // and no more than one per input sent plus, per kill, one that goes on from a cut run per thread.
    const calls = readFileSync(callLog, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { lastRole?: string; input: string });
    expect(
      calls.filter((c) => c.lastRole === 'assistant'),
      'model calls with nothing new',
    ).toEqual([]);
    expect(calls.length).toBeLessThanOrEqual(sent + KILLS * THREADS);
    console.info(`crash loop: ${KILLS} kills, ${sent} inputs sent (${acknowledged.length} acknowledged), ${calls.length} model calls`);
  });
});
