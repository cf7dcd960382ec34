import { EventType } from '@ag-ui/client';
import { describe, expect, it } from 'vitest';
import { createDemoWorkflow, DEMO_WORKFLOW_ID } from '../src/demo/workflow.js';
import { runInput, runStrict, uid, userMessage } from './support/agui.js';
import { postRun, sseEvents } from './support/run.js';
import { http, useTestBridge } from './support/server.js';
import { openSse } from './support/sse.js';

// Nothing one resource sends reaches another's, whatever ids it chooses (docs/security.md): alice
// and mallory side by side, over real HTTP.

const tb = useTestBridge({ storage: 'libsql', workflows: () => ({ [DEMO_WORKFLOW_ID]: createDemoWorkflow() }) });

const WORKFLOW_RUN_KEY = 'mastra-agui-bridge:workflowRun';

type Interrupted = { outcome?: { interrupts?: Array<{ id: string }> } };

/** Alice's `draft-and-send` run, waiting on her review: its thread, its interrupt and Mastra's id of the run. */
async function alicesDraft(alice: string) {
  const threadId = uid('alice-thread');
  const run = await runStrict(
    `${tb.base}/run`,
    runInput({ threadId, messages: [userMessage('tea')], forwardedProps: { agentId: DEMO_WORKFLOW_ID, resourceId: alice } }),
  );
  const interruptId = (run.terminal as Interrupted).outcome?.interrupts?.[0]?.id;
  expect(interruptId).toBeDefined();
  const row = await (await tb.demo.getMemory())!.getThreadById({ threadId });
  const pointer = row?.metadata?.[WORKFLOW_RUN_KEY] as { workflowId: string; runId: string };
  expect(pointer.workflowId).toBe(DEMO_WORKFLOW_ID);
  return { threadId, interruptId: interruptId!, pointer };
}

/** What mallory can learn of, or do to, the workflow run her thread `threadId` points at. */
async function throughMallorysThread(threadId: string, mallory: string) {
  const state = await http(`${tb.base}/threads/${threadId}/state?agentId=${DEMO_WORKFLOW_ID}&resourceId=${mallory}`);
  const abort = await http(`${tb.base}/threads/${threadId}/abort`, { body: { agentId: DEMO_WORKFLOW_ID, resourceId: mallory } });
  return { state: state.body as unknown, abort: abort.body as unknown };
}

/** Alice answers her review: her run goes on to its end. */
async function aliceResumes(alice: string, threadId: string, interruptId: string) {
  const resume = runInput({
    threadId,
    forwardedProps: { agentId: DEMO_WORKFLOW_ID, resourceId: alice },
    resume: [{ interruptId, status: 'resolved', payload: { approved: true } }],
  });
  return (await runStrict(`${tb.base}/run`, resume)).terminal.type;
}

describe("the bridge's own thread metadata", () => {
  it('is never taken from a client: a thread created with a key under the prefix keeps none of it, and reaches nothing of alice', async () => {
    const [alice, mallory] = [uid('alice'), uid('mallory')];
    const { threadId: hers, interruptId, pointer } = await alicesDraft(alice);
    const threadId = uid('mallory-thread');
    const metadata = { [WORKFLOW_RUN_KEY]: pointer, 'mastra-agui-bridge:anything': 1, color: 'red' };
    const created = await http(`${tb.base}/threads`, { body: { threadId, resourceId: mallory, metadata } });
    expect(created.status).toBe(201);
    expect(created.body.metadata).toEqual({ color: 'red' });
    const row = await (await tb.demo.getMemory())!.getThreadById({ threadId });
    expect(Object.keys(row?.metadata ?? {})).toEqual(['color']);

    expect(await throughMallorysThread(threadId, mallory)).toEqual({ state: { state: {} }, abort: { aborted: false } });
    expect(await aliceResumes(alice, hers, interruptId)).toBe('RUN_FINISHED');
  });

  it("is trusted only for a run of the thread's own resource: a thread that points at alice's run (written past the routes) reaches nothing of it", async () => {
    const [alice, mallory] = [uid('alice'), uid('mallory')];
    const { threadId: hers, interruptId, pointer } = await alicesDraft(alice);
    const threadId = uid('mallory-thread');
    expect((await http(`${tb.base}/threads`, { body: { threadId, resourceId: mallory } })).status).toBe(201);
    // As if the key had got in some other way: the bridge must still check whose run it names.
    const memory = (await tb.demo.getMemory())!;
    const row = (await memory.getThreadById({ threadId }))!;
    await memory.saveThread({ thread: { ...row, metadata: { ...row.metadata, [WORKFLOW_RUN_KEY]: pointer } } });

    expect(await throughMallorysThread(threadId, mallory)).toEqual({ state: { state: {} }, abort: { aborted: false } });
    // The snapshot's bracket ends with what the thread waits on: nothing of alice's.
    const snapshot = await openSse(`${tb.base}/threads/${threadId}/events?snapshot=1&agentId=${DEMO_WORKFLOW_ID}&resourceId=${mallory}`);
    await snapshot.waitForEvent((e) => e.type === 'RUN_FINISHED');
    await snapshot.close();
    expect(snapshot.text).not.toContain(interruptId);
    expect(snapshot.text).not.toContain('tea');
    expect(await aliceResumes(alice, hers, interruptId)).toBe('RUN_FINISHED');
  });
});

describe("another resource's thread, followed", () => {
  it("shows nothing of it, then or later: alice's runs never reach mallory's stream", async () => {
    const [alice, mallory] = [uid('alice'), uid('mallory')];
    const first = runInput({ messages: [userMessage('remember that I like tea')], forwardedProps: { resourceId: alice } });
    expect((await runStrict(`${tb.base}/run`, first)).terminal.type).toBe('RUN_FINISHED');
    const watching = await openSse(`${tb.base}/threads/${first.threadId}/events?snapshot=1&resourceId=${mallory}`);
    const own = await openSse(`${tb.base}/threads/${first.threadId}/events?resourceId=${alice}`);
    await Promise.all([watching.waitForEvent((e) => e.type === 'RUN_FINISHED'), own.waitForComment('connected')]);
    const next = runInput({ threadId: first.threadId, messages: [userMessage('and coffee')], forwardedProps: { resourceId: alice } });
    expect((await runStrict(`${tb.base}/run`, next)).terminal.type).toBe('RUN_FINISHED');
    await own.waitForEvent((e) => e.type === 'RUN_FINISHED');
    await Promise.all([watching.close(), own.close()]);
    expect(watching.list.map((e) => e.type)).toEqual(['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED']);
    expect(watching.list[1]).toMatchObject({ messages: [] });
    for (const text of ['tea', 'coffee']) expect(watching.text).not.toContain(text);
  });
});

describe("a thread's notifications", () => {
  const notify = (threadId: string, resourceId: string, summary: string) =>
    http(`${tb.base}/threads/${threadId}/notifications`, { body: { resourceId, source: 'ci', kind: 'build', summary, priority: 'low' } });
  const listed = async (threadId: string, resourceId: string) =>
    (await http(`${tb.base}/threads/${threadId}/notifications?resourceId=${resourceId}`)).body as Array<{ summary: string; resourceId?: string }>;

  it('go with their thread: a thread made again under its id, by another resource or the same, lists none of them, and none is delivered later', async () => {
    const [alice, mallory] = [uid('alice'), uid('mallory')];
    const threadId = uid('notified');
    expect((await notify(threadId, alice, "alice's build")).status).toBe(202);
    const before = await listed(threadId, alice);
    expect(before.map((n) => n.summary)).toEqual(["alice's build"]);
    const store = (await tb.storage.getStore('notifications'))!;
    const pending = (await store.listNotifications({ threadId })).filter((n) => n.status === 'pending');
    expect(pending).toHaveLength(1);

    expect((await http(`${tb.base}/threads/${threadId}?resourceId=${alice}`, { method: 'DELETE' })).status).toBe(204);
    expect((await store.listNotifications({ threadId })).map((n) => n.status)).toEqual(['discarded']);

    expect((await http(`${tb.base}/threads`, { body: { threadId, resourceId: mallory } })).status).toBe(201);
    expect(await listed(threadId, mallory)).toEqual([]);
    expect((await notify(threadId, mallory, "mallory's build")).status).toBe(202);
    expect((await listed(threadId, mallory)).map((n) => n.summary)).toEqual(["mallory's build"]);
  });

  it('a thread alice deletes and makes again lists only what came after', async () => {
    const alice = uid('alice');
    const threadId = uid('notified');
    expect((await notify(threadId, alice, 'first life')).status).toBe(202);
    expect((await http(`${tb.base}/threads/${threadId}?resourceId=${alice}`, { method: 'DELETE' })).status).toBe(204);
    expect((await notify(threadId, alice, 'second life')).status).toBe(202);
    expect((await listed(threadId, alice)).map((n) => n.summary)).toEqual(['second life']);
  });
});

describe('a run id the client chose', () => {
  const pickColor = { name: 'pick_color', description: 'pick', parameters: { type: 'object', properties: { color: { type: 'string' } } } };

  /** A `/run` that waits on its frontend call `pick_color`: open until `answer` is called. */
  async function waitingOnFrontendCall(input: ReturnType<typeof runInput>, resourceId: string) {
    // Read by hand: leaving a `for await` early would close the stream, and so end the run.
    const events = sseEvents((await postRun(`${tb.base}/run`, input)).body!);
    const seen: Array<{ type: string } & Record<string, unknown>> = [];
    while (seen.at(-1)?.type !== EventType.TOOL_CALL_END) {
      const next = await events.next();
      if (next.done) throw new Error(`the run ended before its frontend call: ${seen.map((e) => e.type).join(', ')}`);
      seen.push(next.value);
    }
    const toolCallId = seen.at(-1)!.toolCallId as string;
    return {
      answer: async (content: string) => {
        const url = `${tb.base}/runs/${input.runId}/tool-calls/${toolCallId}/result?resourceId=${resourceId}`;
        expect((await http(url, { body: { content } })).status).toBe(202);
        for await (const event of events) seen.push(event);
        return seen;
      },
    };
  }

  /** Alice's demo run waiting for her approval of `delete_file`: its run id and the call. */
  async function alicesApproval(alice: string) {
    const input = runInput({ messages: [userMessage('delete a.txt')], forwardedProps: { resourceId: alice } });
    expect((await runStrict(`${tb.base}/run`, input)).terminal).toMatchObject({ outcome: { type: 'interrupt' } });
    const pending = await http(`${tb.base}/threads/${input.threadId}/pending-approvals?resourceId=${alice}`);
    expect(pending.body).toHaveLength(1);
    return { input, toolCallId: pending.body[0].toolCallId as string };
  }

  const mallorysRun = (runId: string, mallory: string, text = 'hello', tools: (typeof pickColor)[] = []) =>
    runInput({ runId, messages: [userMessage(text)], tools, forwardedProps: { resourceId: mallory } });

  it("reaches nothing of another resource's run under the same id: mallory's run ending leaves alice's frontend call waiting", async () => {
    const [alice, mallory] = [uid('alice'), uid('mallory')];
    const input = runInput({ messages: [userMessage('use pick_color')], tools: [pickColor], forwardedProps: { resourceId: alice } });
    const hers = await waitingOnFrontendCall(input, alice);
    // While alice's call waits, mallory runs under alice's run id, on her own thread, to its end.
    expect((await runStrict(`${tb.base}/run`, mallorysRun(input.runId, mallory))).terminal.type).toBe('RUN_FINISHED');
    const seen = await hers.answer('teal');
    expect(seen.map((e) => e.type)).toContain(EventType.TOOL_CALL_RESULT);
    expect(seen.at(-1)?.type).toBe(EventType.RUN_FINISHED);
    const history = JSON.stringify((await http(`${tb.base}/threads/${input.threadId}/messages?resourceId=${alice}`)).body);
    expect(history).toContain('teal');
    expect(history).not.toContain('The run ended before the tool call was answered');
  });

  it("leaves alice's pending approval waiting: mallory's run under its run id neither deletes nor takes it", async () => {
    const [alice, mallory] = [uid('alice'), uid('mallory')];
    const { input, toolCallId } = await alicesApproval(alice);
    expect((await runStrict(`${tb.base}/run`, mallorysRun(input.runId, mallory))).terminal.type).toBe('RUN_FINISHED');
    const pending = await http(`${tb.base}/threads/${input.threadId}/pending-approvals?resourceId=${alice}`);
    expect(pending.body).toEqual([expect.objectContaining({ runId: input.runId, toolCallId })]);
    const approved = await http(`${tb.base}/threads/${input.threadId}/tool-approval`, { body: { resourceId: alice, toolCallId, approved: true } });
    expect(approved.status).toBe(202);
    expect(approved.body).toEqual({ runId: input.runId, toolCallId });
  });

  it("while mallory's run under alice's run id is open: alice's approval is answered, and alice's followers see nothing of mallory's", async () => {
    const [alice, mallory] = [uid('alice'), uid('mallory')];
    const { input, toolCallId } = await alicesApproval(alice);
    const follower = await openSse(`${tb.base}/threads/${input.threadId}/events?resourceId=${alice}`);
    await follower.waitForComment('connected');
    const open = await waitingOnFrontendCall(mallorysRun(input.runId, mallory, 'secret of mallory: use pick_color', [pickColor]), mallory);

    const approved = await http(`${tb.base}/threads/${input.threadId}/tool-approval`, { body: { resourceId: alice, toolCallId, approved: true } });
    expect(approved.status).toBe(202);
    await follower.waitForEvent((e) => e.type === 'TOOL_CALL_RESULT' && e.toolCallId === toolCallId);
    await follower.waitForEvent((e) => e.type === 'RUN_FINISHED');
    const late = await openSse(`${tb.base}/threads/${input.threadId}/events?snapshot=1&resourceId=${alice}`);
    await late.waitForEvent((e) => e.type === 'RUN_FINISHED');
    expect((await open.answer('teal')).at(-1)?.type).toBe(EventType.RUN_FINISHED);
    await Promise.all([follower.close(), late.close()]);
    for (const text of [follower.text, late.text]) expect(text).not.toContain('secret of mallory');
    expect(follower.list.filter((e) => e.type === 'RUN_STARTED').map((e) => e.runId)).toEqual([input.runId]);
  });

  it("does not let mallory's abort of her own run cut alice's run under the same id", async () => {
    const [alice, mallory] = [uid('alice'), uid('mallory')];
    const input = runInput({ messages: [userMessage('use pick_color')], tools: [pickColor], forwardedProps: { resourceId: alice } });
    const hers = await waitingOnFrontendCall(input, alice);
    const theirs = mallorysRun(input.runId, mallory, 'use pick_color', [pickColor]);
    await waitingOnFrontendCall(theirs, mallory);
    const aborted = await http(`${tb.base}/threads/${theirs.threadId}/abort`, { body: { resourceId: mallory } });
    expect(aborted.body).toEqual({ aborted: true });

    const seen = await hers.answer('teal');
    expect(seen.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, runId: input.runId });
    expect(seen.at(-1)).not.toHaveProperty('outcome.type', 'cancelled');
    const history = JSON.stringify((await http(`${tb.base}/threads/${input.threadId}/messages?resourceId=${alice}`)).body);
    expect(history).toContain('teal');
    expect(history).not.toContain('cancelled');
  });
});
