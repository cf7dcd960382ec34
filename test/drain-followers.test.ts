import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uid } from './support/agui.js';
import { createCluster, follow, history, post, startRun, text, type Cluster, type StoredMessage } from './support/cluster.js';
import type { ServerProcess } from './support/process.js';
import { brackets, type SseReader } from './support/sse.js';

/**
 * SIGTERM on B of two processes, with runs of B still streaming when its grace runs out: a `/run`
 * and runs woken by `send-message` and `queue-message`, each followed on B and on A. Each follower sees the cut run
 * end as its `/run` says it did (`RUN_FINISHED { outcome: cancelled }`) before its stream ends,
 * and what the shutdown cut is stored before B exits: the message that started the run and the
 * partial answer its followers saw, readable on A at once.
 */
const words = (label: string, n: number) => `${label} ${Array.from({ length: n }, (_, i) => `w${i}`).join(' ')}`;

/** What a follower saw of run `runId`: how its bracket ended (or that it did not), and its text. */
function seen(reader: SseReader, runId: string) {
  const bracket = brackets(reader.list).find((b) => b[0].runId === runId) ?? [];
  const last = bracket.at(-1);
  const terminal =
    last?.type === 'RUN_FINISHED' || last?.type === 'RUN_ERROR' ? { type: last.type, outcome: last.outcome, code: last.code } : `open (last: ${last?.type})`;
  const assistant = new Set(bracket.filter((e) => e.type === 'TEXT_MESSAGE_START' && e.role === 'assistant').map((e) => e.messageId));
  return { terminal, text: text(bracket.filter((e) => assistant.has(e.messageId))) };
}

const contentText = (m: StoredMessage): string => {
  const content = m.content as string | { parts?: Array<{ type: string; text?: string }>; content?: string };
  if (typeof content === 'string') return content;
  return (
    content.parts
      ?.filter((p) => p.type === 'text')
      .map((p) => p.text)
      .join('') ??
    content.content ??
    ''
  );
};

describe('SIGTERM on one of two processes: its followers see every cut run end cancelled, and what it cut is stored', { timeout: 90_000 }, () => {
  let cluster: Cluster;
  let a: ServerProcess;
  let b: ServerProcess;

  beforeAll(async () => {
    cluster = await createCluster('drain-followers', { DEMO_DELAY_MS: '40' });
    a = await cluster.start();
    b = await cluster.start({ SHUTDOWN_GRACE_MS: '300' });
  }, 60_000);
  afterAll(() => cluster?.close());

  it('a /run and runs woken by send-message and queue-message on B, cut by its shutdown', async () => {
    const thread = uid('drain-run');
    const run = { thread, onB: await follow(b, thread), onA: await follow(a, thread) };
    const started = await startRun(b, thread, words('cut run', 200));
    const runs = [{ name: '/run', ...run, runId: started.input.runId, messageId: started.input.messages[0].id }];
    for (const route of ['send-message', 'queue-message']) {
      const threadId = uid(`drain-${route}`);
      const followers = { onB: await follow(b, threadId), onA: await follow(a, threadId) };
      const sent = await post(b, `/threads/${threadId}/${route}`, { message: words(`cut ${route}`, 200) });
      expect(sent.body).toMatchObject({ action: 'wake', runId: expect.any(String), signalId: expect.any(String) });
      runs.push({ name: `${route} run`, thread: threadId, ...followers, runId: sent.body.runId, messageId: sent.body.signalId });
    }
    // Every follower is inside its run (the answer streaming) before the signal.
    const streaming = (reader: SseReader, id: string) => reader.waitFor(() => seen(reader, id).text !== '', `the answer of ${id}`);
    await Promise.all(runs.flatMap((r) => [streaming(r.onB, r.runId), streaming(r.onA, r.runId)]));

    b.child.kill('SIGTERM');
    // A stream broken off ends with no terminal event: that is what the check below then shows.
    const runEvents = await started.rest.catch(() => started.events);
    expect(await b.exited).toEqual({ code: 0, signal: null });
    // At once, on A: no sweep or restart has had the time to answer anything.
    const stored = await Promise.all(runs.map((r) => history(a, r.thread)));
    await Promise.all(runs.map((r) => r.onB.ended));
    // A's followers: the runs' ends come through the log B wrote before it exited.
    await Promise.all(runs.map((r) => r.onA.waitFor(() => typeof seen(r.onA, r.runId).terminal !== 'string', `the end of ${r.runId}`).catch(() => undefined)));

    // Stored before B exited: the message that started each run, and the answer as its followers saw it.
    const storedAfter = (messages: StoredMessage[], id: string) => {
      const at = messages.findIndex((m) => m.id === id);
      return {
        message: at >= 0,
        answer: messages
          .slice(at + 1)
          .filter((m) => m.role === 'assistant')
          .map(contentText)
          .join(''),
      };
    };
    const end = runEvents.at(-1);
    const cancelled = { type: 'RUN_FINISHED', outcome: { type: 'cancelled' }, code: undefined };
    const saw: Record<string, unknown> = { '/run': { type: end?.type, outcome: end?.outcome, code: end?.code } };
    const expected: Record<string, unknown> = { '/run': cancelled };
    runs.forEach((r, i) => {
      saw[`follower on B of the ${r.name}`] = seen(r.onB, r.runId).terminal;
      saw[`follower on A of the ${r.name}`] = seen(r.onA, r.runId).terminal;
      saw[`stored of the ${r.name}`] = storedAfter(stored[i], r.messageId);
      expected[`follower on B of the ${r.name}`] = cancelled;
      expected[`follower on A of the ${r.name}`] = cancelled;
      expected[`stored of the ${r.name}`] = { message: true, answer: seen(r.onB, r.runId).text };
    });
    expect(saw).toEqual(expected);
    await Promise.all(runs.flatMap((r) => [r.onA.close(), r.onB.close()]));
  });
});
