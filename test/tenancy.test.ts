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
  it("reaches nothing of another resource's run under the same id: mallory's run ending leaves alice's frontend call waiting", async () => {
    const [alice, mallory] = [uid('alice'), uid('mallory')];
    const pickColor = { name: 'pick_color', description: 'pick', parameters: { type: 'object', properties: { color: { type: 'string' } } } };
    const input = runInput({ messages: [userMessage('use pick_color')], tools: [pickColor], forwardedProps: { resourceId: alice } });
    const seen: string[] = [];
    for await (const event of sseEvents((await postRun(`${tb.base}/run`, input)).body!)) {
      seen.push(event.type);
      if (event.type !== EventType.TOOL_CALL_END) continue;
      // While alice's call waits, mallory runs under alice's run id, on her own thread, to its end.
      const hers = runInput({ runId: input.runId, messages: [userMessage('hello')], forwardedProps: { resourceId: mallory } });
      expect((await runStrict(`${tb.base}/run`, hers)).terminal.type).toBe('RUN_FINISHED');
      const url = `${tb.base}/runs/${input.runId}/tool-calls/${event.toolCallId}/result?resourceId=${alice}`;
      expect((await http(url, { body: { content: 'teal' } })).status).toBe(202);
    }
    expect(seen).toContain(EventType.TOOL_CALL_RESULT);
    expect(seen.at(-1)).toBe(EventType.RUN_FINISHED);
    const history = JSON.stringify((await http(`${tb.base}/threads/${input.threadId}/messages?resourceId=${alice}`)).body);
    expect(history).toContain('teal');
    expect(history).not.toContain('The run ended before the tool call was answered');
  });
});
