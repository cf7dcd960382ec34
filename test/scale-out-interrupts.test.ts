import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInput, uid, userMessage } from './support/agui.js';
import { createCluster, follow, history, post, RESOURCE, startRun, text, type Cluster } from './support/cluster.js';
import type { ServerProcess } from './support/process.js';
import { postRun, sseEvents } from './support/run.js';
import { http } from './support/server.js';
import type { AnyEvent } from './support/sse.js';
import { expectValidStream } from './support/threads.js';

/**
 * API.md, "Pending interrupts do not hold a thread", across processes: a run stopped on an
 * approval in A (whose Mastra keeps it as the thread's run, and renews its lease) is superseded by
 * new input on B, and A takes the thread's next input at once too.
 */
let cluster: Cluster;
let a: ServerProcess;
let b: ServerProcess;

beforeAll(async () => {
  cluster = await createCluster('interrupts', { DEMO_DELAY_MS: '5' });
  a = await cluster.start();
  b = await cluster.start();
}, 60_000);
afterAll(() => cluster?.close());

/** A thread whose run on A stopped on the approval of `delete notes.txt`. */
async function pendingOnA(): Promise<{ threadId: string; toolCallId: string; interruptId: string }> {
  const threadId = uid('pending');
  const run = await startRun(a, threadId, 'delete notes.txt');
  const events = await run.rest;
  const [interrupt] = events.at(-1)!.outcome.interrupts as Array<{ id: string; toolCallId: string }>;
  return { threadId, toolCallId: interrupt.toolCallId, interruptId: interrupt.id };
}

const pending = async (server: ServerProcess, threadId: string) => (await http(`${server.url}/threads/${threadId}/pending-approvals?resourceId=${RESOURCE}`)).body as unknown[];

/** The declined call's result as history has it (read on `server`). */
async function declined(server: ServerProcess, threadId: string, toolCallId: string) {
  const result = (await history(server, threadId, 'agui')).find((m) => m.role === 'tool' && m.toolCallId === toolCallId);
  return result && (JSON.parse(String(result.content)) as { declined?: boolean; reason?: string });
}

/** A `/run` on `server` read to its end. */
async function runOn(server: ServerProcess, threadId: string, content: string, multitask: string) {
  const res = await postRun(`${server.url}/run`, runInput({ threadId, messages: [userMessage(content)], forwardedProps: { resourceId: RESOURCE, multitask } }));
  if (res.status !== 200) return { status: res.status, body: await res.json(), events: [] as AnyEvent[] };
  const events: AnyEvent[] = [];
  for await (const event of sseEvents(res.body!)) events.push(event);
  return { status: 200, body: undefined, events };
}

describe('a run stopped on an approval in A', { timeout: 60_000 }, () => {
  it('a /run on B (multitask reject) declines the call and answers at once; followers on both see both runs closed', async () => {
    const { threadId, toolCallId } = await pendingOnA();
    const [onA, onB] = await Promise.all([follow(a, threadId), follow(b, threadId)]);
    const next = await runOn(b, threadId, 'hello from B', 'reject');
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(text(next.events)).toBe('Echo: hello from B');
    expect(await declined(a, threadId, toolCallId)).toMatchObject({ declined: true, reason: 'A new message came first' });
    expect(await pending(a, threadId)).toEqual([]);
    for (const follower of [onA, onB]) {
      await follower.waitFor(() => text(follower.events.map((e) => e.event)).includes('Echo: hello from B') && follower.events.at(-1)?.event.type === 'RUN_FINISHED', 'the new run, closed');
      await follower.close();
      await expectValidStream(follower.events.map((e) => e.event));
    }
    // A's Mastra let go of the run too: a message on A wakes a run of its own.
    const sent = await post(a, `/threads/${threadId}/send-message`, { message: 'and A again' });
    expect(sent.body).toMatchObject({ action: 'wake' });
    await expect.poll(async () => (await history(a, threadId)).some((m) => m.content === 'Echo: and A again'), { timeout: 15_000 }).toBe(true);
  });

  it('send-message on B wakes a run of its own; the approval is declined, a later approval on A is refused', async () => {
    const { threadId, toolCallId } = await pendingOnA();
    const sent = await post(b, `/threads/${threadId}/send-message`, { message: 'instead, from B' });
    expect(sent).toMatchObject({ status: 202, body: { action: 'wake' } });
    await expect.poll(async () => (await history(a, threadId)).some((m) => m.content === 'Echo: instead, from B'), { timeout: 15_000 }).toBe(true);
    expect(await declined(b, threadId, toolCallId)).toMatchObject({ declined: true, reason: 'A new message came first' });
    const late = await post(a, `/threads/${threadId}/tool-approval`, { toolCallId, approved: true });
    expect(late.status).toBe(409);
    expect(JSON.stringify(await history(a, threadId, 'agui'))).not.toContain('"deleted"');
  });

  it('abort on B declines it; nothing runs later, and a /run on A answers at once', async () => {
    const { threadId, toolCallId } = await pendingOnA();
    expect((await post(b, `/threads/${threadId}/abort`)).body).toEqual({ aborted: true });
    expect(await declined(a, threadId, toolCallId)).toMatchObject({ declined: true, reason: 'The run was aborted' });
    expect(await pending(b, threadId)).toEqual([]);
    const next = await runOn(a, threadId, 'after the abort', 'reject');
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(text(next.events)).toBe('Echo: after the abort');
    const roles = (await history(b, threadId)).map((m) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'user', 'assistant']);
  });

  it('an approval on A and a message on B at the same moment: the call is answered once, either way, and the message answered', async () => {
    const { threadId, toolCallId } = await pendingOnA();
    const [approval, sent] = await Promise.all([
      post(a, `/threads/${threadId}/tool-approval`, { toolCallId, approved: true }),
      post(b, `/threads/${threadId}/send-message`, { message: 'racing from B' }),
    ]);
    expect(sent.status).toBe(202);
    expect([202, 409]).toContain(approval.status);
    await expect.poll(async () => (await history(a, threadId)).some((m) => m.content === 'Echo: racing from B'), { timeout: 15_000 }).toBe(true);
    const stored = await history(a, threadId, 'agui');
    const results = stored.filter((m) => m.role === 'tool' && m.toolCallId === toolCallId);
    expect(results).toHaveLength(1);
    expect(stored.filter((m) => m.content === 'racing from B')).toHaveLength(1);
  });
});
