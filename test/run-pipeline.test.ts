import { EventType, type BaseEvent } from '@ag-ui/client';
import { Agent } from '@mastra/core/agent';
import { Memory } from '@mastra/memory';
import { describe, expect, it } from 'vitest';
import { createScriptedModel } from '../src/demo/scripted-model.js';
import { createDemoWorkflow, DEMO_WORKFLOW_ID } from '../src/demo/workflow.js';
import { assistantText, ofType, runInput, runStrict, uid, userMessage } from './support/agui.js';
import { postRun, sseEvents } from './support/run.js';
import { http, useTestBridge } from './support/server.js';
import { openSse } from './support/sse.js';
import { expectValidStream } from './support/threads.js';
import { tallyWorkflow, twoReviewsWorkflow } from './support/workflows.js';

// The promises every kind of run keeps, whatever started it (issue: one run pipeline): ids the
// bridge mints or checks, never borrowed across threads; an interrupt answered once and only where
// it was asked; abort stops what runs; a thread remembers its agent. Over real HTTP, workflows and
// agents side by side.

const tb = useTestBridge({
  storage: 'libsql',
  workflows: () => ({ [DEMO_WORKFLOW_ID]: createDemoWorkflow(), tally: tallyWorkflow() }),
  // `draft <topic>` on this agent runs a workflow that suspends twice.
  agents: (storage) => ({
    twice: new Agent({
      id: 'twice',
      name: 'Twice',
      instructions: 'Draft.',
      model: createScriptedModel(),
      memory: new Memory({ storage }),
      workflows: { [DEMO_WORKFLOW_ID]: twoReviewsWorkflow() },
    }),
  }),
});

type Interrupted = BaseEvent & { outcome?: { interrupts?: Array<{ id: string; toolCallId?: string; metadata?: Record<string, unknown> }> } };

/** A workflow run of `draft-and-send` on a new thread of `resourceId`, up to its review interrupt. */
async function draft(resourceId: string, options: { threadId?: string; runId?: string; messageId?: string; topic?: string } = {}) {
  const threadId = options.threadId ?? uid('thread');
  const input = runInput({
    threadId,
    ...(options.runId && { runId: options.runId }),
    messages: [userMessage(options.topic ?? 'tea', options.messageId)],
    forwardedProps: { agentId: DEMO_WORKFLOW_ID, resourceId },
  });
  const run = await runStrict(`${tb.base}/run`, input);
  const interrupt = (run.terminal as Interrupted).outcome?.interrupts?.[0];
  return { threadId, run, interrupt: interrupt! };
}

const resumeInput = (threadId: string, resourceId: string, interruptId: string, payload: unknown, agentId?: string) =>
  runInput({ threadId, forwardedProps: { resourceId, ...(agentId && { agentId }) }, resume: [{ interruptId, status: 'resolved', payload }] });

const messagesOf = async (threadId: string, resourceId: string) =>
  (await http(`${tb.base}/threads/${threadId}/messages?format=agui&resourceId=${resourceId}`)).body as Array<{ id: string; role: string; content: string }>;

describe('ids the bridge mints: a run id reused anywhere moves nothing of anyone', () => {
  it("a workflow's assistant messages keep their thread when another resource runs with the same run id", async () => {
    const runId = uid('run');
    const aliceId = uid('alice');
    const first = await draft(aliceId, { runId });
    const before = await messagesOf(first.threadId, aliceId);
    expect(before.map((m) => m.role)).toEqual(['user', 'assistant']);

    const mallory = uid('mallory');
    const hers = await draft(mallory, { runId, topic: 'coffee' });
    expect(await messagesOf(first.threadId, aliceId)).toEqual(before);
    const mine = await messagesOf(hers.threadId, mallory);
    expect(mine.map((m) => m.content)).toEqual(['coffee', 'Draft about coffee.']);
    expect(mine.map((m) => m.id)).not.toContain(before[1].id);
  });

  it('the answer of a resumed workflow run has an id of its own, whatever run id the client reuses', async () => {
    const resourceId = uid('user');
    const runId = uid('run');
    const first = await draft(resourceId, { runId });
    const resumed = await runStrict(`${tb.base}/run`, {
      ...resumeInput(first.threadId, resourceId, first.interrupt.id, { approved: true }, DEMO_WORKFLOW_ID),
      runId,
    });
    expect(resumed.terminal).toMatchObject({ result: { text: 'Sent: Draft about tea.' } });
    const history = await messagesOf(first.threadId, resourceId);
    expect(history.map((m) => m.content)).toEqual(['tea', 'Draft about tea.', 'Sent: Draft about tea.']);
    expect(new Set(history.map((m) => m.id)).size).toBe(3);
  });

  it("a workflow /run whose user message id belongs to another resource's thread is 409 before any event, nothing stored", async () => {
    const aliceId = uid('alice');
    const messageId = uid('msg');
    const alice = await draft(aliceId, { messageId });
    const before = await messagesOf(alice.threadId, aliceId);
    const mallory = uid('mallory');
    const threadId = uid('thread');
    const refused = await http(`${tb.base}/run`, {
      body: runInput({ threadId, messages: [userMessage('stolen', messageId)], forwardedProps: { agentId: DEMO_WORKFLOW_ID, resourceId: mallory } }),
    });
    expect(refused).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
    expect(await messagesOf(alice.threadId, aliceId)).toEqual(before);
    expect((await http(`${tb.base}/threads/${threadId}?resourceId=${mallory}`)).status).toBe(404);
  });
});

describe('an interrupt is answered only where it was asked, and once', () => {
  it("a workflow's interrupt resumed from another thread is 404 RUN_NOT_FOUND, nothing created; its own thread still answers it", async () => {
    const resourceId = uid('user');
    const first = await draft(resourceId);
    const elsewhere = uid('thread');
    const refused = await http(`${tb.base}/run`, { body: resumeInput(elsewhere, resourceId, first.interrupt.id, { approved: true }, DEMO_WORKFLOW_ID) });
    expect(refused).toMatchObject({ status: 404, body: { code: 'RUN_NOT_FOUND' } });
    expect((await http(`${tb.base}/threads/${elsewhere}?resourceId=${resourceId}`)).status).toBe(404);
    const resumed = await runStrict(`${tb.base}/run`, resumeInput(first.threadId, resourceId, first.interrupt.id, { approved: true }, DEMO_WORKFLOW_ID));
    expect(resumed.terminal).toMatchObject({ result: { text: 'Sent: Draft about tea.' } });
  });

  it("an agent's interrupt resumed from another thread is 404 RUN_NOT_FOUND, nothing created", async () => {
    const resourceId = uid('user');
    const threadId = uid('thread');
    const run = await runStrict(`${tb.base}/run`, runInput({ threadId, messages: [userMessage('delete notes.txt')], forwardedProps: { resourceId } }));
    const [interrupt] = (run.terminal as Interrupted).outcome!.interrupts!;
    const elsewhere = uid('thread');
    const refused = await http(`${tb.base}/run`, { body: resumeInput(elsewhere, resourceId, interrupt.id, { approved: true }) });
    expect(refused).toMatchObject({ status: 404, body: { code: 'RUN_NOT_FOUND' } });
    expect((await http(`${tb.base}/threads/${elsewhere}?resourceId=${resourceId}`)).status).toBe(404);
  });

  it('a second answer is 404 RUN_NOT_FOUND for every kind of run: a workflow, an agent, a workflow an agent runs', async () => {
    const resourceId = uid('user');
    const workflow = await draft(resourceId);
    await runStrict(`${tb.base}/run`, resumeInput(workflow.threadId, resourceId, workflow.interrupt.id, { approved: true }, DEMO_WORKFLOW_ID));
    const again = await http(`${tb.base}/run`, {
      body: resumeInput(workflow.threadId, resourceId, workflow.interrupt.id, { approved: true }, DEMO_WORKFLOW_ID),
    });
    expect(again).toMatchObject({ status: 404, body: { code: 'RUN_NOT_FOUND' } });

    for (const text of ['delete notes.txt', 'draft tea']) {
      const threadId = uid('thread');
      const run = await runStrict(`${tb.base}/run`, runInput({ threadId, messages: [userMessage(text)], forwardedProps: { resourceId } }));
      const [interrupt] = (run.terminal as Interrupted).outcome!.interrupts!;
      const answered = await runStrict(`${tb.base}/run`, resumeInput(threadId, resourceId, interrupt.id, { approved: true }));
      expect(answered.terminal.type).toBe('RUN_FINISHED');
      const second = await http(`${tb.base}/run`, { body: resumeInput(threadId, resourceId, interrupt.id, { approved: true }) });
      expect({ text, status: second.status, code: second.body.code }).toEqual({ text, status: 404, code: 'RUN_NOT_FOUND' });
    }
  });
});

describe('every suspension gets its own answer', () => {
  it('a workflow an agent runs as a tool, suspended twice in one run: each suspension is answered once, and the run ends', async () => {
    const resourceId = uid('user');
    const threadId = uid('thread');
    const props = { resourceId, agentId: 'twice' };
    const first = await runStrict(`${tb.base}/run`, runInput({ threadId, messages: [userMessage('draft tea')], forwardedProps: props }));
    const [asked] = (first.terminal as Interrupted).outcome!.interrupts!;
    expect(asked.metadata).toMatchObject({ suspendPayload: { ask: 'first' } });
    const answer = (interruptId: string) =>
      runInput({ threadId, forwardedProps: props, resume: [{ interruptId, status: 'resolved', payload: { approved: true } }] });

    const second = await runStrict(`${tb.base}/run`, answer(asked.id));
    const [again] = (second.terminal as Interrupted).outcome!.interrupts!;
    expect(again.metadata).toMatchObject({ suspendPayload: { ask: 'second' } });
    const snapshot = await openSse(`${tb.base}/threads/${threadId}/events?resourceId=${resourceId}&agentId=twice&snapshot=1`);
    try {
      await snapshot.waitForEvent((e) => e.type === EventType.RUN_FINISHED);
      expect(snapshot.list.at(-1)?.outcome).toMatchObject({
        type: 'interrupt',
        interrupts: [{ id: again.id, metadata: { suspendPayload: { ask: 'second' } } }],
      });
    } finally {
      await snapshot.close();
    }

    const third = await runStrict(`${tb.base}/run`, answer(again.id));
    expect(third.terminal.type).toBe(EventType.RUN_FINISHED);
    expect((third.terminal as Interrupted).outcome).toBeUndefined();
    expect(assistantText(third.events)).toContain('Sent twice-reviewed tea');
    // Answered twice, each once: a third answer finds nothing waiting.
    expect((await http(`${tb.base}/run`, { body: answer(again.id) })).body.code).toBe('RUN_NOT_FOUND');
  });
});

describe('a thread remembers its agent', () => {
  it('on a thread only a workflow ran on, state, messages, events and abort need no agentId', async () => {
    const resourceId = uid('user');
    const first = await draft(resourceId);
    expect((await http(`${tb.base}/threads/${first.threadId}/state?resourceId=${resourceId}`)).body).toEqual({ state: { drafts: 1 } });
    const res = await fetch(`${tb.base}/threads/${first.threadId}/events?resourceId=${resourceId}&snapshot=1`, { headers: { accept: 'text/event-stream' } });
    const events: Array<BaseEvent & Record<string, any>> = [];
    for await (const e of sseEvents(res.body!)) {
      events.push(e);
      if (e.type === EventType.RUN_FINISHED || e.type === EventType.RUN_ERROR) break;
    }
    const snapshot = ofType(events, EventType.MESSAGES_SNAPSHOT)[0];
    expect(snapshot.messages.map((m: { content: string }) => m.content)).toEqual(['tea', 'Draft about tea.']);
    expect(ofType(events, EventType.STATE_SNAPSHOT)[0]?.snapshot).toEqual({ drafts: 1 });
    expect(events.at(-1)).toMatchObject({ outcome: { type: 'interrupt', interrupts: [{ id: first.interrupt.id }] } });
    // Abort names no agent: the thread's workflow run waiting on a person is cancelled.
    expect((await http(`${tb.base}/threads/${first.threadId}/abort`, { body: { resourceId } })).body).toEqual({ aborted: true });
  });
});

describe("a thread remembers its agent, whichever agent's run was first", () => {
  it('on a thread an agent other than the default ran on, the events stream with no agentId follows that agent: its snapshot offers what it waits on', async () => {
    const resourceId = uid('user');
    const threadId = uid('thread');
    const run = await runStrict(
      `${tb.base}/run`,
      runInput({ threadId, messages: [userMessage('draft tea')], forwardedProps: { resourceId, agentId: 'twice' } }),
    );
    const [asked] = (run.terminal as Interrupted).outcome!.interrupts!;
    const sse = await openSse(`${tb.base}/threads/${threadId}/events?resourceId=${resourceId}&snapshot=1`);
    try {
      await sse.waitForEvent((e) => e.type === EventType.RUN_FINISHED);
      expect(sse.list.at(-1)?.outcome).toMatchObject({ type: 'interrupt', interrupts: [{ id: asked.id }] });
    } finally {
      await sse.close();
    }
  });
});

describe('abort stops whatever runs on the thread', () => {
  const slow = useTestBridge({ storage: 'libsql', workflows: () => ({ [DEMO_WORKFLOW_ID]: createDemoWorkflow({ delayMs: 300 }) }) });

  it('POST /abort with no agentId cancels the workflow streaming on the thread', async () => {
    const resourceId = uid('user');
    const threadId = uid('thread');
    const res = await postRun(
      `${slow.base}/run`,
      runInput({ threadId, messages: [userMessage('tea')], forwardedProps: { agentId: DEMO_WORKFLOW_ID, resourceId } }),
    );
    const events = sseEvents(res.body!);
    for (let next = await events.next(); !next.done && next.value.type !== EventType.STEP_STARTED; next = await events.next());
    expect((await http(`${slow.base}/threads/${threadId}/abort`, { body: { resourceId } })).body).toEqual({ aborted: true });
    const rest = [];
    for (let next = await events.next(); !next.done; next = await events.next()) rest.push(next.value);
    expect(rest.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
  });
});

describe('nothing a client holds is sent again', () => {
  it('a snapshot of a thread whose run waits for approval ends with its interrupt; the waiting run is not sent after it', async () => {
    const t = { threadId: uid('thread'), resourceId: uid('user') };
    const run = await runStrict(
      `${tb.base}/run`,
      runInput({ threadId: t.threadId, messages: [userMessage('delete notes.txt')], forwardedProps: { resourceId: t.resourceId } }),
    );
    const [interrupt] = (run.terminal as Interrupted).outcome!.interrupts!;
    const sse = await openSse(`${tb.base}/threads/${t.threadId}/events?resourceId=${t.resourceId}&snapshot=1`);
    try {
      await sse.waitForEvent((e) => e.type === EventType.RUN_FINISHED);
      // A message after it: the first bracket after the snapshot is what it starts (the call declined), not the waiting run again.
      expect((await http(`${tb.base}/threads/${t.threadId}/send-message`, { body: { resourceId: t.resourceId, message: 'never mind' } })).status).toBe(202);
      await sse.waitForEvent((e) => e.type === EventType.TEXT_MESSAGE_CONTENT && String(e.delta).includes('never'));
      const events = sse.list;
      expect(events.slice(0, 3).map((e) => e.type)).toEqual([EventType.RUN_STARTED, EventType.MESSAGES_SNAPSHOT, EventType.RUN_FINISHED]);
      expect(events[2].outcome).toEqual(run.terminal && (run.terminal as Interrupted).outcome);
      expect(events[2].outcome.interrupts[0].id).toBe(interrupt.id);
      const after = events.slice(3);
      expect(after.filter((e) => e.type === EventType.TOOL_CALL_START || e.type === EventType.TOOL_CALL_ARGS)).toEqual([]);
      expect(after.filter((e) => e.type === EventType.TEXT_MESSAGE_CONTENT && e.delta === 'delete notes.txt')).toEqual([]);
      expect(after.find((e) => e.type === EventType.TOOL_CALL_RESULT)).toMatchObject({ toolCallId: interrupt.toolCallId });
      await expectValidStream(events);
    } finally {
      await sse.close();
    }
  });

  it("a resumed agent run does not announce its workflow call again: the activity, then the call's result", async () => {
    const resourceId = uid('user');
    const threadId = uid('thread');
    const first = await runStrict(`${tb.base}/run`, runInput({ threadId, messages: [userMessage('draft tea')], forwardedProps: { resourceId } }));
    const [interrupt] = (first.terminal as Interrupted).outcome!.interrupts!;
    const resumed = await runStrict(`${tb.base}/run`, resumeInput(threadId, resourceId, interrupt.id, { approved: true }));
    const call = interrupt.toolCallId;
    const own = resumed.events as Array<BaseEvent & Record<string, any>>;
    expect(own.filter((e) => e.toolCallId === call && e.type !== EventType.TOOL_CALL_RESULT)).toEqual([]);
    const activity = own.findIndex((e) => e.type === EventType.ACTIVITY_SNAPSHOT && e.activityType === 'workflow');
    const result = own.findIndex((e) => e.type === EventType.TOOL_CALL_RESULT && e.toolCallId === call);
    expect(activity).toBeGreaterThan(0);
    expect(result).toBeGreaterThan(activity);
    expect(assistantText(own)).toContain('Done: Sent: Draft about tea.');
  });
});

describe("a workflow's state arrives where it was set", () => {
  it("a foreach step's setState is sent before the next step starts, a sleep too", async () => {
    const input = runInput({
      threadId: uid('thread'),
      messages: [userMessage('{"topic":"a b c"}')],
      forwardedProps: { agentId: 'tally', resourceId: uid('user') },
    });
    const run = await runStrict(`${tb.base}/run`, input);
    const events = run.events as Array<BaseEvent & Record<string, any>>;
    const steps = events.flatMap((e, i) => (e.type === EventType.STEP_STARTED || e.type === EventType.STEP_FINISHED ? [`${e.type}:${e.stepName}@${i}`] : []));
    const joinStarts = events.findIndex((e) => e.type === EventType.STEP_STARTED && e.stepName !== 'split' && e.stepName !== 'tally');
    const lastState = events.findLastIndex((e) => e.type === EventType.STATE_DELTA || e.type === EventType.STATE_SNAPSHOT);
    expect({ steps, lastState }).toMatchObject({ lastState: expect.any(Number) });
    expect(lastState, steps.join(' ')).toBeLessThan(joinStarts);
    expect(run.terminal).toMatchObject({ result: { text: 'a b c' } });
  });
});
