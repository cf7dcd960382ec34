import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInput, uid, userMessage } from './support/agui.js';
import { createCluster, follow, history, post, RESOURCE, startRun, text, type Cluster } from './support/cluster.js';
import type { ServerProcess } from './support/process.js';
import { postRun, sseEvents } from './support/run.js';
import { http } from './support/server.js';
import type { AnyEvent } from './support/sse.js';
import { expectValidStream } from './support/threads.js';
import { jsonText } from '../src/text.js';

/**
 * docs/api.md "Pending interrupts do not hold a thread", across processes: a run stopped on an
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

const pending = async (server: ServerProcess, threadId: string) =>
  (await http(`${server.url}/threads/${threadId}/pending-approvals?resourceId=${RESOURCE}`)).body as unknown[];

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
      await follower.waitFor(
        () => text(follower.events.map((e) => e.event)).includes('Echo: hello from B') && follower.events.at(-1)?.event.type === 'RUN_FINISHED',
        'the new run, closed',
      );
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

/**
 * A message sent on A into a run on B that Mastra has not read yet (it reads one between steps),
 * then a `/run` on A that interrupts that run: the message was acknowledged first, so it is stored
 * and answered before the interrupting input. B's Mastra starts a run for it once the cut run is
 * over; the interrupting run must not take the thread first (it would read the message after its
 * own input). Repeated: the two race.
 */
describe("another resource's run on B under the run id of a run stopped on A", { timeout: 60_000 }, () => {
  it("reaches nothing of it: the approval still waits, is answered on A, and A's followers see nothing of the other run", async () => {
    const threadId = uid('pending');
    const first = await startRun(a, threadId, 'delete notes.txt');
    const events = await first.rest;
    const runId = events[0].runId as string;
    const onA = await follow(a, threadId);
    const theirs = await postRun(
      `${b.url}/run`,
      runInput({ runId, messages: [userMessage('secret of another resource')], forwardedProps: { resourceId: uid('mallory') } }),
    );
    expect(theirs.status).toBe(200);
    for await (const event of sseEvents(theirs.body!)) void event;
    const [call] = (await pending(a, threadId)) as Array<{ runId: string; toolCallId: string }>;
    expect(call).toMatchObject({ runId });
    const approved = await http(`${a.url}/threads/${threadId}/tool-approval`, { body: { resourceId: RESOURCE, toolCallId: call.toolCallId, approved: true } });
    expect(approved.status).toBe(202);
    await onA.waitFor(() => onA.list.some((e) => e.type === 'TOOL_CALL_RESULT'), 'the approved call');
    await onA.waitFor(() => onA.list.at(-1)?.type === 'RUN_FINISHED', 'the resumed run closed');
    expect(JSON.stringify(onA.list)).not.toContain('secret of another resource');
    await onA.close();
  });
});

describe('interrupting a run on B that a message was just sent into', { timeout: 120_000 }, () => {
  const long = `a long answer ${Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ')}`;

  it.each(['run', 'queue-message', 'a queued message'])(
    'stores and answers the message before the interrupting input, every time (the cut run started by %s)',
    async (start) => {
      for (let round = 0; round < 6; round++) {
        const threadId = uid('cut-sent');
        const watching = await follow(b, threadId);
        let from = 0;
        if (start === 'run') await startRun(b, threadId, long);
        else if (start === 'queue-message')
          expect((await post(b, `/threads/${threadId}/queue-message`, { message: long })).body).toMatchObject({ action: 'wake' });
        else {
          // Queued behind a shorter run: Mastra starts the queued message's run when that one ends.
          await startRun(b, threadId, `first ${long.slice(0, 200)}`);
          expect((await post(b, `/threads/${threadId}/queue-message`, { message: long })).body).toMatchObject({ action: 'deliver' });
          await watching.waitForCount('RUN_STARTED', 2);
          from = watching.events.findLastIndex((e) => e.event.type === 'RUN_STARTED');
        }
        // The demo model's answer starts with the chunk `Echo: `.
        await watching.waitForEvent((e) => e.type === 'TEXT_MESSAGE_CONTENT' && e.delta === 'Echo: ', from);
        expect((await post(a, `/threads/${threadId}/send-message`, { message: `sent ${round}` })).body).toMatchObject({ action: 'deliver' });
        const next = await runOn(a, threadId, `interrupting ${round}`, 'interrupt');
        expect(next.status, JSON.stringify(next.body)).toBe(200);
        await watching.close();
        const answered = async () => (await history(a, threadId)).map((m) => `${m.role}: ${jsonText(m.content)}`);
        await expect
          .poll(
            async () => (await answered()).filter((row) => row.startsWith('assistant: Echo: sent') || row.startsWith('assistant: Echo: interrupting')).length,
            { timeout: 15_000 },
          )
          .toBe(2);
        // Before: the long message (and the first run's) with their answers, whole or cut.
        expect({ round, stored: (await answered()).filter((row) => !row.includes('a long answer')) }).toEqual({
          round,
          stored: [`signal: sent ${round}`, `assistant: Echo: sent ${round}`, `user: interrupting ${round}`, `assistant: Echo: interrupting ${round}`],
        });
      }
    },
  );
});

/**
 * A `/run` on B that interrupts a run on A: B appends the new run's `RUN_STARTED` to the shared
 * log, A the cut run's end. The abort answers once that end is in the log, so every follower, on
 * either process, sees the cut bracket closed before the next one opens. Repeated: the two race.
 */
describe('a /run on B interrupting a run on A', { timeout: 120_000 }, () => {
  it('closes the cut run’s bracket before the new one opens, for followers on both processes', async () => {
    for (let round = 0; round < 8; round++) {
      const threadId = uid('cut-across');
      const [onA, onB] = await Promise.all([follow(a, threadId), follow(b, threadId)]);
      // Cut as early as it can be: as soon as B's follower heard of the run's start.
      const run = runOn(a, threadId, `a long answer ${'word '.repeat(150)}`, 'reject');
      await onB.waitForEvent((e) => e.type === 'RUN_STARTED');
      const next = await runOn(b, threadId, `interrupting ${round}`, 'interrupt');
      expect(next.status, JSON.stringify(next.body)).toBe(200);
      expect((await run).status).toBe(200);
      for (const sse of [onA, onB]) {
        await sse.waitForCount('RUN_FINISHED', 2);
        await expectValidStream(sse.list);
        await sse.close();
      }
    }
  });
});

/**
 * An approval given on B for a run stopped in A, by the route or by a `/run` that resumes the
 * interrupt: the run is resumed where it stopped (the `/run` reads it from there), so A's Mastra
 * does not keep it as the thread's waiting run. Before, B resumed it and A went on queueing every
 * message sent on A to that run, which had ended elsewhere: nothing answered them.
 */
describe('an approval on B of a run stopped on A', { timeout: 120_000 }, () => {
  /** The `/run` on `server` (B unless said) that resumes the interrupt, read to its end. */
  async function resumeOnB(threadId: string, interruptId: string, server = b): Promise<AnyEvent[]> {
    const input = runInput({
      threadId,
      messages: [],
      resume: [{ interruptId, status: 'resolved', payload: { approved: true } }],
      forwardedProps: { resourceId: RESOURCE },
    });
    const res = await postRun(`${server.url}/run`, input);
    expect(res.status).toBe(200);
    const events: AnyEvent[] = [];
    for await (const event of sseEvents(res.body!)) events.push(event);
    return events;
  }

  const approveOnB = {
    'tool-approval': async (threadId: string, toolCallId: string) => {
      const approval = await post(b, `/threads/${threadId}/tool-approval`, { toolCallId, approved: true });
      expect(approval.status, JSON.stringify(approval.body)).toBe(202);
    },
    'a /run resuming the interrupt': async (threadId: string, toolCallId: string, interruptId: string) => {
      const events = await resumeOnB(threadId, interruptId);
      await expectValidStream(events);
      // The resumed run as a resume here reads it: the tool's result, then the answer to it.
      expect(events.find((e) => e.type === 'TOOL_CALL_RESULT')).toMatchObject({ toolCallId, content: expect.stringContaining('deleted') });
      expect(text(events)).toMatch(/notes\.txt/);
      expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED' });
      expect(events.at(-1)).not.toHaveProperty('outcome.type', 'interrupt');
    },
  };

  it.each(Object.keys(approveOnB) as Array<keyof typeof approveOnB>)(
    'resumes the run where it stopped (by %s); a message sent on A right after is answered',
    async (how) => {
      for (let round = 0; round < 4; round++) {
        const { threadId, toolCallId, interruptId } = await pendingOnA();
        await approveOnB[how](threadId, toolCallId, interruptId);
        const sent = await post(a, `/threads/${threadId}/send-message`, { message: `sent ${round}` });
        expect(sent.status, JSON.stringify(sent.body)).toBe(202);
        await expect.poll(async () => (await history(a, threadId)).some((m) => m.content === `Echo: sent ${round}`), { timeout: 15_000 }).toBe(true);
        const stored = await history(a, threadId, 'agui');
        expect(JSON.stringify(stored)).toContain('deleted');
        expect(stored.filter((m) => m.content === `sent ${round}`)).toHaveLength(1);
      }
    },
  );

  it('a /run on B reads the run resumed on A as a resume on A reads it: the same events, the same history', async () => {
    const [here, there] = [await pendingOnA(), await pendingOnA()];
    const shape = (events: AnyEvent[]) => events.map((e) => (e.type === 'TEXT_MESSAGE_CONTENT' ? `${e.type} ${e.delta}` : e.type));
    const [onA, onB] = [await resumeOnB(here.threadId, here.interruptId, a), await resumeOnB(there.threadId, there.interruptId)];
    expect(shape(onB)).toEqual(shape(onA));
    // A stored message's text, or what its parts are (call ids differ between two threads).
    const contentOf = (content: any): string =>
      typeof content === 'string'
        ? content
        : (content.parts ?? []).map((p: any) => (p.toolInvocation ? `${p.toolInvocation.toolName}(${p.toolInvocation.state})` : p.type)).join(', ');
    const rows = async (threadId: string) => (await history(a, threadId)).map((m) => `${m.role}: ${contentOf(m.content)}`);
    expect(await rows(there.threadId)).toEqual(await rows(here.threadId));
  });
});
