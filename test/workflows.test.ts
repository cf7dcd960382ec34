import { EventType, HttpAgent, type BaseEvent } from '@ag-ui/client';
import { Mastra } from '@mastra/core';
import { InMemoryStore } from '@mastra/core/storage';
import { describe, expect, it } from 'vitest';
import { createBridge } from '../src/index.js';
import { BridgeAgent, BridgeClient } from '../src/client/index.js';
import { createDemoAgent } from '../src/demo/agent.js';
import { createDemoWorkflow, DEMO_WORKFLOW_ID } from '../src/demo/workflow.js';
import { ofType, runInput, runStrict, uid, userMessage, type StrictRun } from './support/agui.js';
import { postRun, runAgentStrict, sseEvents } from './support/run.js';
import { http, silentLogger, useTestBridge } from './support/server.js';
import { openSse, verifyThreadEvents } from './support/sse.js';
import { failingWorkflow, shapesWorkflow } from './support/workflows.js';

// Mastra workflows served as AG-UI agents (docs/api.md "Workflows"), over real HTTP through
// @ag-ui/client's strict pipeline: listed, run, suspended for a person and resumed.

const workflows = () => ({ [DEMO_WORKFLOW_ID]: createDemoWorkflow(), 'always-fails': failingWorkflow(), shapes: shapesWorkflow() });

const tb = useTestBridge({ storage: 'libsql', workflows });

const props = (extra: Record<string, unknown> = {}) => ({ agentId: DEMO_WORKFLOW_ID, resourceId: 'wf-user', ...extra });

async function draft(topic = 'tea', threadId = uid('thread'), extra: Record<string, unknown> = {}) {
  const input = runInput({ threadId, messages: [userMessage(topic)], forwardedProps: props(extra) });
  const run = await runStrict(`${tb.base}/run`, input);
  const interrupts = (run.terminal as BaseEvent & { outcome?: { interrupts?: Array<Record<string, any>> } }).outcome?.interrupts ?? [];
  return { input, run, threadId, interrupt: interrupts[0] };
}

function resume(threadId: string, interruptId: string, payload: unknown, extra: Record<string, unknown> = {}) {
  return runInput({ threadId, forwardedProps: props(extra), resume: [{ interruptId, status: 'resolved', payload }] });
}

/** The AG-UI messages a run's text events built, as history shows them. */
function streamedMessages(run: StrictRun) {
  const texts = new Map<string, string>();
  for (const e of run.events as Array<BaseEvent & { messageId?: string; delta?: string }>) {
    if (e.type === EventType.TEXT_MESSAGE_START) texts.set(e.messageId!, '');
    if (e.type === EventType.TEXT_MESSAGE_CONTENT) texts.set(e.messageId!, texts.get(e.messageId!) + e.delta!);
  }
  return [...texts].map(([id, content]) => ({ id, role: 'assistant', content }));
}

describe('listed', () => {
  it('GET /agents lists the workflows beside the agents, each with its kind and what it can do', async () => {
    const { status, body } = await http(`${tb.base}/agents`);
    expect(status).toBe(200);
    expect(body.find((a: { id: string }) => a.id === 'demo')).toMatchObject({ kind: 'agent' });
    const workflow = body.find((a: { id: string }) => a.id === DEMO_WORKFLOW_ID);
    expect(workflow).toMatchObject({
      kind: 'workflow',
      default: false,
      description: expect.stringContaining('review'),
      capabilities: {
        identity: { name: DEMO_WORKFLOW_ID, type: 'mastra-workflow' },
        transport: { streaming: true },
        humanInTheLoop: { supported: true, interrupts: true },
        state: { snapshots: true, deltas: true },
      },
    });
    expect(workflow.capabilities).not.toHaveProperty('tools');
    expect(workflow.capabilities).not.toHaveProperty('reasoning');
    // No suspending step, no state schema: neither is claimed.
    const fails = body.find((a: { id: string }) => a.id === 'always-fails');
    expect(fails.capabilities).not.toHaveProperty('humanInTheLoop');
    expect(fails.capabilities).not.toHaveProperty('state');
    expect((await http(`${tb.base}/agents/${DEMO_WORKFLOW_ID}`)).body).toEqual(workflow);
  });

  it('an id an agent and a workflow share is refused when the bridge is wired, naming both', () => {
    const storage = new InMemoryStore();
    const mastra = new Mastra({
      agents: { 'draft-and-send': createDemoAgent({ storage }) },
      workflows: { [DEMO_WORKFLOW_ID]: createDemoWorkflow() },
      storage,
      logger: false,
    });
    expect(() => createBridge({ logger: silentLogger }).app(mastra)).toThrow(/"draft-and-send" names both agent demo .*and workflow draft-and-send/);
  });
});

describe('run', () => {
  it('streams each step, the state, the step text, and ends on the review interrupt', async () => {
    const { run, threadId, interrupt } = await draft('tea');
    expect(run.types).toEqual([
      'RUN_STARTED',
      'STATE_SNAPSHOT',
      'STEP_STARTED',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'STEP_FINISHED',
      'STATE_DELTA',
      'STEP_STARTED',
      'STEP_FINISHED',
      'RUN_FINISHED',
    ]);
    expect(ofType(run.events, EventType.STEP_STARTED).map((e) => e.stepName)).toEqual(['draft', 'review']);
    expect(ofType(run.events, EventType.STATE_SNAPSHOT)[0].snapshot).toEqual({ drafts: 0 });
    expect(ofType(run.events, EventType.STATE_DELTA)[0].delta).toEqual([{ op: 'replace', path: '/drafts', value: 1 }]);
    expect(ofType(run.events, EventType.TEXT_MESSAGE_CONTENT)[0].delta).toBe('Draft about tea.');
    expect(interrupt).toMatchObject({
      id: expect.stringMatching(/::review$/),
      reason: 'workflow_suspended',
      message: expect.any(String),
      responseSchema: { type: 'object', properties: { approved: { type: 'boolean' }, edit: { type: 'string' } }, required: ['approved'] },
      metadata: { workflowId: DEMO_WORKFLOW_ID, stepId: 'review', suspendPayload: { draft: 'Draft about tea.' } },
    });
    expect((await http(`${tb.base}/threads/${threadId}/state?agentId=${DEMO_WORKFLOW_ID}&resourceId=wf-user`)).body).toEqual({ state: { drafts: 1 } });
  });

  it('resumed, it runs on from the suspended step: the answer is one message and RUN_FINISHED.result; live equals history', async () => {
    const first = await draft('tea');
    const run = await runStrict(`${tb.base}/run`, resume(first.threadId, first.interrupt.id, { approved: true, edit: 'Tea, edited.' }));
    expect(ofType(run.events, EventType.STEP_STARTED).map((e) => e.stepName)).toEqual(['review', 'send']);
    expect(ofType(run.events, EventType.STATE_SNAPSHOT)[0].snapshot).toEqual({ drafts: 1 });
    expect(ofType(run.events, EventType.CUSTOM)).toEqual([expect.objectContaining({ name: 'draft-sent', value: { type: 'draft-sent', sent: true } })]);
    expect(run.terminal).toMatchObject({ type: 'RUN_FINISHED', result: { text: 'Sent: Tea, edited.' } });
    expect(streamedMessages(run)).toEqual([{ id: expect.any(String), role: 'assistant', content: 'Sent: Tea, edited.' }]);

    const history = await http(`${tb.base}/threads/${first.threadId}/messages?format=agui&agentId=${DEMO_WORKFLOW_ID}&resourceId=wf-user`);
    const [user] = first.input.messages;
    expect(history.body).toEqual([{ id: user.id, role: 'user', content: 'tea' }, ...streamedMessages(first.run), ...streamedMessages(run)]);
  });

  it('declined, the draft is discarded', async () => {
    const first = await draft('coffee');
    const run = await runStrict(`${tb.base}/run`, resume(first.threadId, first.interrupt.id, { approved: false }));
    expect(run.terminal).toMatchObject({ result: { text: 'Discarded.' } });
  });

  it('reads the input from forwardedProps.input, a JSON object in the message, or the text as the one required field', async () => {
    const given = await runStrict(`${tb.base}/run`, runInput({ messages: [userMessage('ignored')], forwardedProps: props({ input: { topic: 'given' } }) }));
    const json = await runStrict(`${tb.base}/run`, runInput({ messages: [userMessage('{"topic":"json"}')], forwardedProps: props() }));
    const text = await runStrict(`${tb.base}/run`, runInput({ messages: [userMessage('plain')], forwardedProps: props() }));
    const drafted = (run: StrictRun) => ofType(run.events, EventType.TEXT_MESSAGE_CONTENT)[0].delta;
    expect([drafted(given), drafted(json), drafted(text)]).toEqual(['Draft about given.', 'Draft about json.', 'Draft about plain.']);
  });

  it('starts from the client state, checked against the state schema', async () => {
    const { run } = await draft('tea', uid('thread'));
    expect(ofType(run.events, EventType.STATE_SNAPSHOT)[0].snapshot).toEqual({ drafts: 0 });
    const seeded = await runStrict(`${tb.base}/run`, { ...runInput({ messages: [userMessage('tea')], forwardedProps: props() }), state: { drafts: 41 } });
    expect(ofType(seeded.events, EventType.STATE_SNAPSHOT)[0].snapshot).toEqual({ drafts: 41 });
    expect(ofType(seeded.events, EventType.STATE_DELTA)[0].delta).toEqual([{ op: 'replace', path: '/drafts', value: 42 }]);
  });

  it('a step that throws ends the run RUN_ERROR WORKFLOW_FAILED with its message, its step closed', async () => {
    const run = await runStrict(`${tb.base}/run`, runInput({ messages: [userMessage('tea')], forwardedProps: props({ agentId: 'always-fails' }) }));
    expect(run.types).toEqual(['RUN_STARTED', 'STEP_STARTED', 'STEP_FINISHED', 'RUN_ERROR']);
    expect(run.terminal).toMatchObject({ code: 'WORKFLOW_FAILED', message: expect.stringContaining('the printer is on fire') });
  });

  it('parallel, branch, map and nested steps each open and close, named as docs/workflows.md "Step names" says', async () => {
    const run = await runStrict(`${tb.base}/run`, runInput({ messages: [userMessage('tea')], forwardedProps: props({ agentId: 'shapes' }) }));
    const started = ofType(run.events, EventType.STEP_STARTED).map((e) => e.stepName);
    // No bracket around a parallel or a branch, an unnamed map is `mapping_<workflow>_<n>`, a nested workflow's steps go by their path.
    expect(started).toEqual([
      'left',
      'right',
      'join',
      'taken',
      'pick',
      'mapping_shapes_0',
      'as-topic',
      DEMO_WORKFLOW_ID,
      `${DEMO_WORKFLOW_ID}.draft`,
      `${DEMO_WORKFLOW_ID}.review`,
    ]);
    expect(ofType(run.events, EventType.STEP_FINISHED)).toHaveLength(started.length);
    const [interrupt] = (run.terminal as BaseEvent & { outcome: { interrupts: Array<Record<string, any>> } }).outcome.interrupts;
    expect(interrupt).toMatchObject({
      id: expect.stringMatching(new RegExp(`::${DEMO_WORKFLOW_ID}\\.review$`)),
      metadata: { stepId: `${DEMO_WORKFLOW_ID}.review`, suspendPayload: { draft: 'Draft about tea.' } },
    });
    const threadId = (run.events[0] as BaseEvent & { threadId: string }).threadId;
    const resumed = await runStrict(`${tb.base}/run`, resume(threadId, interrupt.id, { approved: true }, { agentId: 'shapes' }));
    expect(resumed.terminal).toMatchObject({ type: 'RUN_FINISHED', result: { text: 'Sent: Draft about tea.' } });
  });
});

describe('bad input', () => {
  it('input that does not fit the input schema: 400 INVALID_INPUT naming the field, before any event, nothing stored', async () => {
    const threadId = uid('thread');
    const res = await http(`${tb.base}/run`, { body: runInput({ threadId, messages: [userMessage('x')], forwardedProps: props({ input: { topic: 7 } }) }) });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_INPUT', details: [{ path: 'input.topic', message: expect.any(String) }] });
    expect((await http(`${tb.base}/threads/${threadId}?resourceId=wf-user`)).status).toBe(404);
  });

  it('state that does not fit the state schema: 400 naming the field', async () => {
    const res = await http(`${tb.base}/run`, { body: { ...runInput({ messages: [userMessage('tea')], forwardedProps: props() }), state: { drafts: 'many' } } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_INPUT', details: [{ path: 'state.drafts' }] });
  });

  it('a resume payload that does not fit the resume schema: 400, and the workflow still waits', async () => {
    const first = await draft('tea');
    const bad = await http(`${tb.base}/run`, { body: resume(first.threadId, first.interrupt.id, { approved: 'yes' }) });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'INVALID_INPUT', details: [{ path: 'resume.0.payload.approved' }] });
    const run = await runStrict(`${tb.base}/run`, resume(first.threadId, first.interrupt.id, { approved: true }));
    expect(run.terminal).toMatchObject({ result: { text: 'Sent: Draft about tea.' } });
  });

  it('an interrupt that is not waiting: 404 RUN_NOT_FOUND (unknown, malformed, answered, or another resource’s)', async () => {
    const first = await draft('tea');
    const notWaiting = async (interruptId: string, extra: Record<string, unknown> = {}) => {
      const res = await http(`${tb.base}/run`, { body: resume(first.threadId, interruptId, { approved: true }, extra) });
      return [res.status, res.body?.code];
    };
    expect(await notWaiting('no-such-run::review')).toEqual([404, 'RUN_NOT_FOUND']);
    expect(await notWaiting('malformed')).toEqual([404, 'RUN_NOT_FOUND']);
    expect(await notWaiting(first.interrupt.id, { resourceId: 'someone-else' })).toEqual([404, 'THREAD_NOT_FOUND']);
    await runStrict(`${tb.base}/run`, resume(first.threadId, first.interrupt.id, { approved: true }));
    expect(await notWaiting(first.interrupt.id)).toEqual([404, 'RUN_NOT_FOUND']);
  });

  it('two resumes of one interrupt at once: one runs, the other is refused', async () => {
    const first = await draft('tea');
    const [a, b] = await Promise.all([
      postRun(`${tb.base}/run`, resume(first.threadId, first.interrupt.id, { approved: true })),
      postRun(`${tb.base}/run`, resume(first.threadId, first.interrupt.id, { approved: false })),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 404]);
    const ran = a.status === 200 ? a : b;
    const events = [];
    for await (const e of sseEvents(ran.body!)) events.push(e);
    expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED' });
    await (a.status === 200 ? b : a).text();
  });

  it('a cancelled interrupt cancels the workflow: the run ends cancelled, and the interrupt is no longer waiting', async () => {
    const first = await draft('tea');
    const cancel = runInput({ threadId: first.threadId, forwardedProps: props(), resume: [{ interruptId: first.interrupt.id, status: 'cancelled' }] });
    const run = await runStrict(`${tb.base}/run`, cancel);
    expect(run.terminal).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
    const again = await http(`${tb.base}/run`, { body: resume(first.threadId, first.interrupt.id, { approved: true }) });
    expect(again.status).toBe(404);
  });
});

describe('new input supersedes a suspended workflow', () => {
  const waiting = async (threadId: string, interruptId: string) =>
    (await http(`${tb.base}/run`, { body: resume(threadId, interruptId, { approved: true }) })).status;

  it('a new run of the workflow on its thread cancels the one that waits, and runs at once', async () => {
    const first = await draft('tea');
    const second = await draft('coffee', first.threadId, { multitask: 'reject' });
    expect(second.interrupt.id).not.toBe(first.interrupt.id);
    expect(await waiting(first.threadId, first.interrupt.id)).toBe(404);
    const done = await runStrict(`${tb.base}/run`, resume(first.threadId, second.interrupt.id, { approved: true }));
    expect(done.terminal).toMatchObject({ result: { text: 'Sent: Draft about coffee.' } });
  });

  it('an agent’s run, or a message sent to the thread, cancels it too', async () => {
    const byRun = await draft('tea');
    await runStrict(
      `${tb.base}/run`,
      runInput({ threadId: byRun.threadId, messages: [userMessage('hello')], forwardedProps: { resourceId: 'wf-user', multitask: 'reject' } }),
    );
    expect(await waiting(byRun.threadId, byRun.interrupt.id)).toBe(404);

    const bySignal = await draft('tea');
    const sent = await http(`${tb.base}/threads/${bySignal.threadId}/send-message`, { body: { message: 'hello', resourceId: 'wf-user' } });
    expect(sent.status).toBe(202);
    expect(await waiting(bySignal.threadId, bySignal.interrupt.id)).toBe(404);
  });
});

describe('a workflow inside an agent’s run (the demo agent’s `draft <topic>`)', () => {
  it('shows the workflow as one activity between the call and its result, ends on its step’s interrupt, and the resume answers; live equals history', async () => {
    const threadId = uid('thread');
    const agent = new HttpAgent({ url: `${tb.base}/run`, threadId });
    agent.addMessage(userMessage('draft tea'));
    const first = await runAgentStrict(agent, { runId: uid('run'), forwardedProps: { resourceId: 'wf-user' } });
    const types = first.events.map((e) => e.type);
    const callEnd = types.indexOf(EventType.TOOL_CALL_END);
    expect(types.indexOf(EventType.ACTIVITY_SNAPSHOT)).toBeGreaterThan(callEnd);
    expect(ofType(first.events, EventType.ACTIVITY_SNAPSHOT)[0]).toMatchObject({
      messageId: expect.stringMatching(/^workflow-/),
      activityType: 'workflow',
      content: { workflowId: DEMO_WORKFLOW_ID, status: 'running', steps: [] },
    });
    const activity = () => agent.messages.find((m) => m.role === 'activity') as { content: unknown } | undefined;
    expect(activity()?.content).toEqual({
      workflowId: DEMO_WORKFLOW_ID,
      status: 'suspended',
      steps: [
        { id: 'draft', status: 'success' },
        { id: 'review', status: 'suspended' },
      ],
    });
    const [interrupt] = agent.pendingInterrupts;
    expect(interrupt).toMatchObject({
      reason: 'tool_suspended',
      metadata: { toolName: 'workflow-draft-and-send', suspendPayload: { draft: 'Draft about tea.' } },
    });
    expect(interrupt.responseSchema).toMatchObject({ properties: { approved: { type: 'boolean' } } });

    const second = await runAgentStrict(agent, {
      runId: uid('run'),
      forwardedProps: { resourceId: 'wf-user' },
      resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true, edit: 'Tea, edited.' } }],
    });
    const resumedTypes = second.events.map((e) => e.type);
    expect(resumedTypes.lastIndexOf(EventType.ACTIVITY_DELTA)).toBeLessThan(resumedTypes.indexOf(EventType.TOOL_CALL_RESULT));
    expect(activity()?.content).toEqual({
      workflowId: DEMO_WORKFLOW_ID,
      status: 'success',
      steps: ['draft', 'review', 'send'].map((id) => ({ id, status: 'success' })),
    });
    expect(agent.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Done: Sent: Tea, edited.' });

    const history = await http(`${tb.base}/threads/${threadId}/messages?format=agui&resourceId=wf-user`);
    expect(history.body).toEqual(JSON.parse(JSON.stringify(agent.messages)));
  });
});

describe('POST /run?agentId=', () => {
  it('names the workflow for a client that cannot set forwardedProps; forwardedProps.agentId wins over it', async () => {
    const input = runInput({ messages: [userMessage('tea')], forwardedProps: { resourceId: 'wf-user' } });
    const run = await runStrict(`${tb.base}/run?agentId=${DEMO_WORKFLOW_ID}`, input);
    expect(run.terminal).toMatchObject({ outcome: { type: 'interrupt', interrupts: [{ reason: 'workflow_suspended' }] } });
    const agentRun = await runStrict(
      `${tb.base}/run?agentId=${DEMO_WORKFLOW_ID}`,
      runInput({ messages: [userMessage('hello')], forwardedProps: { agentId: 'demo' } }),
    );
    expect(agentRun.terminal).toMatchObject({ type: 'RUN_FINISHED' });
    expect(
      ofType(agentRun.events, EventType.TEXT_MESSAGE_CONTENT)
        .map((e) => e.delta)
        .join(''),
    ).toBe('Echo: hello');
  });

  it('an agentId that is no id is 400 naming the query field; an unknown one 404, before any event', async () => {
    const bad = await postRun(`${tb.base}/run?agentId=${'x'.repeat(600)}`, runInput({ messages: [userMessage('tea')] }));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'INVALID_INPUT', details: [{ path: 'query.agentId' }] });
    const unknown = await postRun(`${tb.base}/run?agentId=nobody`, runInput({ messages: [userMessage('tea')] }));
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'AGENT_NOT_FOUND' });
  });
});

describe('a workflow’s thread, followed', () => {
  const follow = (threadId: string, query = '') => openSse(`${tb.base}/threads/${threadId}/events?resourceId=wf-user&agentId=${DEMO_WORKFLOW_ID}${query}`);
  const strip = (events: Array<Record<string, unknown>>) => events.map(({ timestamp: _t, rawEvent: _r, ...e }) => e);

  it('a follower sees each run of the workflow live, event for event as its /run, and the resumed run too', async () => {
    const threadId = uid('thread');
    const follower = await follow(threadId);
    const { run, interrupt } = await draft('tea', threadId);
    await follower.waitForEvent((e) => e.type === 'RUN_FINISHED');
    expect(strip(follower.events.map((e) => e.event))).toEqual(strip(run.events as Array<Record<string, unknown>>));
    // The message the run answers comes with it, for a follower that did not send it.
    expect(follower.events[0].event).toMatchObject({ type: 'RUN_STARTED', input: { messages: [{ role: 'user', content: 'tea' }] } });
    const resumed = await runStrict(`${tb.base}/run`, resume(threadId, interrupt.id, { approved: true }));
    await follower.waitForEvent((e) => e.type === 'RUN_FINISHED', run.events.length);
    const events = follower.events.map((e) => e.event);
    expect(strip(events.slice(run.events.length))).toEqual(strip(resumed.events as Array<Record<string, unknown>>));
    expect((await verifyThreadEvents(events)).warnings).toEqual([]);
    await follower.close();
  });

  it('a follower joining with ?snapshot=1 while the workflow waits gets its interrupt on the snapshot’s end, as the run gave it', async () => {
    const { threadId, interrupt, run } = await draft('tea');
    const follower = await follow(threadId, '&snapshot=1');
    const end = await follower.waitForEvent((e) => e.type === 'RUN_FINISHED');
    expect((end.event as BaseEvent & { outcome?: unknown }).outcome).toEqual((run.terminal as BaseEvent & { outcome: unknown }).outcome);
    expect(end.event).toMatchObject({ outcome: { interrupts: [{ id: interrupt.id, metadata: { suspendPayload: { draft: 'Draft about tea.' } } }] } });
    await follower.close();
    // Answered, nothing waits: the next snapshot ends plainly.
    await runStrict(`${tb.base}/run`, resume(threadId, interrupt.id, { approved: true }));
    const later = await follow(threadId, '&snapshot=1');
    expect((await later.waitForEvent((e) => e.type === 'RUN_FINISHED')).event).not.toHaveProperty('outcome');
    await later.close();
  });

  it('a follower joining with ?snapshot=1 gets the thread as stored and the workflow’s state', async () => {
    const { threadId, interrupt } = await draft('tea');
    await runStrict(`${tb.base}/run`, resume(threadId, interrupt.id, { approved: true }));
    const follower = await follow(threadId, '&snapshot=1');
    await follower.waitForEvent((e) => e.type === 'RUN_FINISHED');
    const events = follower.events.map((e) => e.event);
    expect(ofType(events as BaseEvent[], EventType.STATE_SNAPSHOT)).toMatchObject([{ snapshot: { drafts: 1 } }]);
    expect(ofType(events as BaseEvent[], EventType.MESSAGES_SNAPSHOT)[0]).toMatchObject({
      messages: [{ content: 'tea' }, { content: 'Draft about tea.' }, { content: 'Sent: Draft about tea.' }],
    });
    await follower.close();
  });
});

describe('a workflow inside an agent’s run, followed', () => {
  it('a follower of the thread sees the workflow’s activity live, up to its suspension', async () => {
    const threadId = uid('thread');
    const follower = await openSse(`${tb.base}/threads/${threadId}/events?resourceId=wf-user`);
    await runStrict(`${tb.base}/run`, runInput({ threadId, messages: [userMessage('draft tea')], forwardedProps: { resourceId: 'wf-user' } }));
    await follower.waitForEvent((e) => e.type === 'RUN_FINISHED');
    const events = follower.events.map((e) => e.event);
    await verifyThreadEvents(events);
    const activity = events.filter((e) => e.type === 'ACTIVITY_SNAPSHOT' || e.type === 'ACTIVITY_DELTA');
    expect(activity[0]).toMatchObject({ type: 'ACTIVITY_SNAPSHOT', activityType: 'workflow' });
    expect(activity.at(-1)).toMatchObject({ type: 'ACTIVITY_DELTA', patch: [{ path: '/status', value: 'suspended' }] });
    await follower.close();
  });

  it('a follower that came after the suspension sees the resumed call’s activity go on from the steps before it, as history has it', async () => {
    const threadId = uid('thread');
    const first = await runStrict(`${tb.base}/run`, runInput({ threadId, messages: [userMessage('draft tea')], forwardedProps: { resourceId: 'wf-user' } }));
    const [interrupt] = (first.terminal as BaseEvent & { outcome: { interrupts: Array<{ id: string }> } }).outcome.interrupts;
    const follower = await openSse(`${tb.base}/threads/${threadId}/events?resourceId=wf-user`);
    await runStrict(
      `${tb.base}/run`,
      runInput({
        threadId,
        forwardedProps: { resourceId: 'wf-user' },
        resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }],
      }),
    );
    await follower.waitForEvent((e) => e.type === 'RUN_FINISHED');
    const snapshot = follower.events.map((e) => e.event).find((e) => e.type === 'ACTIVITY_SNAPSHOT') as { content?: { steps: Array<{ id: string }> } };
    expect(snapshot.content?.steps.map((s) => s.id)).toEqual(['draft', 'review']);
    const history = await http(`${tb.base}/threads/${threadId}/messages?format=agui&resourceId=wf-user`);
    const stored = history.body.find((m: { role: string }) => m.role === 'activity');
    expect(stored.content.steps.map((s: { id: string }) => s.id)).toEqual(['draft', 'review', 'send']);
    await follower.close();
  });
});

describe('the client library', () => {
  it('BridgeClient lists each kind; BridgeAgent runs a workflow to its interrupt and resumes it', async () => {
    const client = new BridgeClient({ baseUrl: tb.base, resourceId: 'wf-user' });
    expect((await client.agents()).map((a) => [a.id, a.kind])).toEqual(
      expect.arrayContaining([
        ['demo', 'agent'],
        [DEMO_WORKFLOW_ID, 'workflow'],
      ]),
    );
    const agent = new BridgeAgent({ baseUrl: tb.base, resourceId: 'wf-user', agentId: DEMO_WORKFLOW_ID, threadId: uid('thread') });
    agent.addMessage(userMessage('tea'));
    await agent.runAgent({ runId: uid('run') });
    const [interrupt] = agent.pendingInterrupts;
    expect(interrupt).toMatchObject({ reason: 'workflow_suspended', metadata: { stepId: 'review' } });
    await agent.runAgent({ runId: uid('run'), resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] });
    expect(agent.pendingInterrupts).toEqual([]);
    expect(agent.messages.map((m) => m.content)).toEqual(['tea', 'Draft about tea.', 'Sent: Draft about tea.']);
    expect(agent.state).toEqual({ drafts: 1 });
  });
});

/** Reads a run's events up to the first of `type`, leaving the rest to read (a `for await` that breaks closes the stream). */
async function readUntil(events: AsyncIterator<BaseEvent & Record<string, any>>, type: string) {
  for (let next = await events.next(); !next.done; next = await events.next()) if (next.value.type === type) return;
  throw new Error(`the run ended before ${type}`);
}

async function readRest(events: AsyncIterator<BaseEvent & Record<string, any>>) {
  const rest = [];
  for (let next = await events.next(); !next.done; next = await events.next()) rest.push(next.value);
  return rest;
}

describe('abort and the client leaving', () => {
  const slow = useTestBridge({ storage: 'libsql', workflows: () => ({ [DEMO_WORKFLOW_ID]: createDemoWorkflow({ delayMs: 400 }) }) });

  it('POST /abort mid-step ends the run cancelled, its step closed', async () => {
    const threadId = uid('thread');
    const input = runInput({ threadId, messages: [userMessage('tea')], forwardedProps: props() });
    let aborted: Promise<unknown> | undefined;
    const run = await runStrict(`${slow.base}/run`, input, (e) => {
      if (e.type === EventType.STEP_STARTED)
        aborted ??= http(`${slow.base}/threads/${threadId}/abort`, { body: { agentId: DEMO_WORKFLOW_ID, resourceId: 'wf-user' } });
    });
    expect((await aborted) as { body: unknown }).toMatchObject({ status: 200, body: { aborted: true } });
    expect(run.types).toEqual(['RUN_STARTED', 'STATE_SNAPSHOT', 'STEP_STARTED', 'STEP_FINISHED', 'RUN_FINISHED']);
    expect(run.terminal).toMatchObject({ outcome: { type: 'cancelled' } });
  });

  it('POST /abort while the workflow waits on a person cancels it: its interrupt is no longer waiting', async () => {
    const threadId = uid('thread');
    const run = await runStrict(`${slow.base}/run`, runInput({ threadId, messages: [userMessage('tea')], forwardedProps: props() }));
    const [interrupt] = (run.terminal as BaseEvent & { outcome: { interrupts: Array<{ id: string }> } }).outcome.interrupts;
    expect((await http(`${slow.base}/threads/${threadId}/abort`, { body: { agentId: DEMO_WORKFLOW_ID, resourceId: 'wf-user' } })).body).toEqual({
      aborted: true,
    });
    expect((await http(`${slow.base}/threads/${threadId}/abort`, { body: { agentId: DEMO_WORKFLOW_ID, resourceId: 'wf-user' } })).body).toEqual({
      aborted: false,
    });
    expect((await http(`${slow.base}/run`, { body: resume(threadId, interrupt.id, { approved: true }) })).status).toBe(404);
  });

  it('a client that leaves mid-step cancels the workflow run, and the thread is free for the next', async () => {
    const threadId = uid('thread');
    const resourceId = uid('leaver');
    const leave = new AbortController();
    const res = await postRun(`${slow.base}/run`, runInput({ threadId, messages: [userMessage('tea')], forwardedProps: props({ resourceId }) }), {
      signal: leave.signal,
    });
    await readUntil(sseEvents(res.body!), 'STEP_STARTED');
    leave.abort();
    // Enqueued behind the cut run: it runs once that run has let go of the thread.
    const next = await runStrict(`${slow.base}/run`, runInput({ threadId, messages: [userMessage('again')], forwardedProps: props({ resourceId }) }));
    expect(next.terminal).toMatchObject({ outcome: { type: 'interrupt' } });
    const { runs } = await slow.mastra.getWorkflow(DEMO_WORKFLOW_ID).listWorkflowRuns({ resourceId });
    const statuses = runs.map((r) => (typeof r.snapshot === 'string' ? JSON.parse(r.snapshot) : r.snapshot).status).sort();
    expect(statuses).toEqual(['canceled', 'suspended']);
  });

  it('a second run with multitask interrupt cuts the running one (cancelled) and runs', async () => {
    const threadId = uid('thread');
    const first = await postRun(`${slow.base}/run`, runInput({ threadId, messages: [userMessage('tea')], forwardedProps: props() }));
    const reader = sseEvents(first.body!);
    await readUntil(reader, 'STEP_STARTED');
    const second = runStrict(`${slow.base}/run`, runInput({ threadId, messages: [userMessage('coffee')], forwardedProps: props({ multitask: 'interrupt' }) }));
    const rest = await readRest(reader);
    expect(rest.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
    expect((await second).terminal).toMatchObject({ outcome: { type: 'interrupt' } });
  });

  it('a second run on a thread whose workflow runs: reject is 409 THREAD_BUSY', async () => {
    const threadId = uid('thread');
    const first = await postRun(`${slow.base}/run`, runInput({ threadId, messages: [userMessage('tea')], forwardedProps: props() }));
    const reader = sseEvents(first.body!);
    await readUntil(reader, 'STEP_STARTED');
    const second = await http(`${slow.base}/run`, {
      body: runInput({ threadId, messages: [userMessage('coffee')], forwardedProps: props({ multitask: 'reject' }) }),
    });
    expect(second).toMatchObject({ status: 409, body: { code: 'THREAD_BUSY' } });
    expect((await readRest(reader)).at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'interrupt' } });
  });
});
