import { EventType, HttpAgent, type Message, type Tool } from '@ag-ui/client';
import { describe, expect, it } from 'vitest';
import { ofType, uid, userMessage } from './support/agui.js';
import { runAgentStrict } from './support/run.js';
import { http, startTestBridge, useTestBridge } from './support/server.js';
import { foldMessages, openSse, type SseReader } from './support/sse.js';
import { eventsUrl, follow, post, type Thread } from './support/threads.js';

// A frontend that renders a conversation live and then reloads it must show the same thing: the
// messages `@ag-ui/client`'s reducer builds from the live events (of `/run`, and of the thread's
// events stream) equal the thread's AG-UI history, message by message.

const pickColor: Tool = {
  name: 'pick_color',
  description: 'Ask the user to pick a color',
  parameters: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] },
};

const tb = useTestBridge();

/** A thread with its follower on the events stream, opened before anything happens on it. */
async function followedThread(): Promise<Thread & { agent: HttpAgent; sse: SseReader }> {
  const thread = { threadId: uid('thread'), resourceId: uid('user') };
  const agent = new HttpAgent({ url: `${tb.base}/run`, threadId: thread.threadId });
  return { ...thread, agent, sse: await follow(tb, thread) };
}

async function history(t: Thread): Promise<Message[]> {
  const res = await http(`${tb.base}/threads/${t.threadId}/messages?resourceId=${t.resourceId}&format=agui`);
  expect(res.status).toBe(200);
  return res.body as Message[];
}

/** Runs `/run` as the thread's resource through the client's strict pipeline. */
function run(t: Thread & { agent: HttpAgent }, params: Record<string, unknown> = {}) {
  const forwardedProps = { resourceId: t.resourceId, ...(params.forwardedProps as object | undefined) };
  return runAgentStrict(t.agent, { runId: uid('run'), ...params, forwardedProps });
}

/** The follower has seen `n` finished runs (terminal events). */
function runsSeen(sse: SseReader, n: number) {
  return sse.waitFor(() => sse.list.filter((e) => e.type === 'RUN_FINISHED' || e.type === 'RUN_ERROR').length >= n, `${n} runs`);
}

/** Live (the `/run` client's messages, and the follower's fold) equals history. */
async function expectLiveEqualsHistory(t: Thread & { agent: HttpAgent; sse: SseReader }, runs: number, options: { runClient?: boolean } = {}) {
  await runsSeen(t.sse, runs);
  const stored = await history(t);
  if (options.runClient !== false) expect(t.agent.messages).toEqual(stored);
  if (!process.env.SKIP_FOLLOW) expect(await foldMessages(t.sse.list)).toEqual(stored);
  await t.sse.close();
  return stored;
}

describe('live equals history, per demo script', () => {
  it.each([
    ['echo', 'hello there'],
    ['think', 'think about it'],
    ['weather (server tool)', 'weather in Oslo?'],
    ['a failing tool', 'weather in Atlantis?'],
  ])('%s', async (_name, text) => {
    const t = await followedThread();
    t.agent.addMessage(userMessage(text));
    await run(t);
    await expectLiveEqualsHistory(t, 1);
  });

  it('a model failure', async () => {
    const t = await followedThread();
    t.agent.addMessage(userMessage('please fail'));
    const r = await run(t);
    expect(r.terminal.type).toBe(EventType.RUN_ERROR);
    const stored = await expectLiveEqualsHistory(t, 1);
    // The question, then how its run ended: a tab that loads the thread shows the failure, not an unanswered question.
    expect(stored.map((m) => m.role)).toEqual(['user', 'activity']);
    expect(stored[1]).toMatchObject({
      role: 'activity',
      activityType: 'run-end',
      content: { outcome: 'failed', code: 'MODEL_ERROR', message: 'demo model failure' },
    });
  });

  it.each([
    ['approved', { status: 'resolved', payload: { approved: true } }],
    ['declined', { status: 'cancelled' }],
  ] as const)('an approval, %s', async (_name, answer) => {
    const t = await followedThread();
    t.agent.addMessage(userMessage('delete notes.txt'));
    await run(t);
    const [interrupt] = t.agent.pendingInterrupts;
    await run(t, { resume: [{ interruptId: interrupt.id, ...answer }] });
    await expectLiveEqualsHistory(t, 2);
  });

  it('a frontend tool, proxy mode', async () => {
    const t = await followedThread();
    t.agent.addMessage(userMessage('use pick_color'));
    const runId = uid('run');
    t.agent.subscribe({
      onToolCallEndEvent: ({ event }) => {
        void http(`${tb.base}/runs/${runId}/tool-calls/${event.toolCallId}/result?resourceId=${t.resourceId}`, { body: { content: 'teal' } });
      },
    });
    await runAgentStrict(t.agent, { runId, tools: [pickColor], forwardedProps: { resourceId: t.resourceId } });
    await expectLiveEqualsHistory(t, 1);
  });

  it('a frontend tool, return mode', async () => {
    const t = await followedThread();
    const forwardedProps = { frontendToolMode: 'return' };
    t.agent.addMessage(userMessage('use pick_color'));
    const first = await run(t, { tools: [pickColor], forwardedProps });
    const [start] = ofType(first.events, EventType.TOOL_CALL_START);
    t.agent.addMessage({ id: uid('tool'), role: 'tool', toolCallId: start.toolCallId, content: 'teal' });
    await run(t, { tools: [pickColor], forwardedProps });
    await expectLiveEqualsHistory(t, 2);
  });

  it('a frontend tool, return mode: the id the client gave its tool message is kept, out of sight in the thread', async () => {
    const t = await followedThread();
    const forwardedProps = { frontendToolMode: 'return' };
    t.agent.addMessage(userMessage('use pick_color'));
    const first = await run(t, { tools: [pickColor], forwardedProps });
    const [start] = ofType(first.events, EventType.TOOL_CALL_START);
    t.agent.addMessage({ id: 'my-own-tool-message-id', role: 'tool', toolCallId: start.toolCallId, content: 'teal' });
    await run(t, { tools: [pickColor], forwardedProps });
    const thread = await http(`${tb.base}/threads/${t.threadId}?resourceId=${t.resourceId}`);
    expect(thread.body).not.toHaveProperty('metadata');
    // A PATCH cannot reach the bridge's own key either.
    const patched = await http(`${tb.base}/threads/${t.threadId}`, {
      method: 'PATCH',
      body: { resourceId: t.resourceId, metadata: { 'mastra-agui-bridge:toolMessageIds': null, topic: 'colors' } },
    });
    expect(patched.body.metadata).toEqual({ topic: 'colors' });
    const stored = await expectLiveEqualsHistory(t, 2);
    expect(stored.map((m) => m.id)).toContain('my-own-tool-message-id');
  });

  it('structured output', async () => {
    const t = await followedThread();
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    t.agent.addMessage(userMessage('what is the capital of France'));
    await run(t, { forwardedProps: { structuredOutput: schema } });
    await expectLiveEqualsHistory(t, 1);
  });

  it('a background task', async () => {
    const t = await followedThread();
    const sent = await post(tb, t, 'send-message', { message: 'a slow job please' });
    expect(sent.status).toBe(202);
    // The agent is woken with the task's result and answers in a run of its own.
    const answer = await t.sse.waitForEvent((e) => e.type === 'TEXT_MESSAGE_CONTENT' && /finished/.test(e.delta));
    await t.sse.waitForEvent((e) => e.type === 'RUN_FINISHED', answer.index);
    await expectLiveEqualsHistory(t, 0, { runClient: false });
  });
});

describe('live equals history, multi-run threads', () => {
  it('a message delivered into a running run (it waits on a frontend tool) joins that run', async () => {
    const t = await followedThread();
    t.agent.addMessage(userMessage('use pick_color'));
    const runId = uid('run');
    let delivered: Promise<unknown> | undefined;
    t.agent.subscribe({
      onToolCallEndEvent: ({ event }) => {
        delivered = (async () => {
          const sent = await post(tb, t, 'send-message', { message: 'and hello meanwhile' });
          expect(sent.body.action).toBe('deliver');
          await http(`${tb.base}/runs/${runId}/tool-calls/${event.toolCallId}/result?resourceId=${t.resourceId}`, { body: { content: 'teal' } });
        })();
      },
    });
    await runAgentStrict(t.agent, { runId, tools: [pickColor], forwardedProps: { resourceId: t.resourceId } });
    await delivered;
    await expectLiveEqualsHistory(t, 1);
  });

  it('a follower that joins in the middle of a run, with a snapshot, ends with the same messages', async () => {
    const t = await followedThread();
    await post(tb, t, 'send-message', { message: 'hello first' });
    await runsSeen(t.sse, 1);
    t.agent.setMessages(await history(t));
    t.agent.addMessage(userMessage('use pick_color'));
    const runId = uid('run');
    let late: SseReader | undefined;
    t.agent.subscribe({
      onToolCallEndEvent: ({ event }) => {
        void (async () => {
          late = await openSse(eventsUrl(tb, t, '&snapshot=1'));
          await late.waitForEvent((e) => e.type === 'MESSAGES_SNAPSHOT');
          await http(`${tb.base}/runs/${runId}/tool-calls/${event.toolCallId}/result?resourceId=${t.resourceId}`, { body: { content: 'teal' } });
        })();
      },
    });
    await runAgentStrict(t.agent, { runId, tools: [pickColor], forwardedProps: { resourceId: t.resourceId } });
    const stored = await expectLiveEqualsHistory(t, 2);
    await runsSeen(late!, 2); // the snapshot run, then the run it joined
    expect(await foldMessages(late!.list)).toEqual(stored);
    await late!.close();
  });

  it('a follower that joins a signal run in the middle, with a snapshot, does not see its message twice', async () => {
    const slow = await startTestBridge({ delayMs: 30 });
    try {
      const t = { threadId: uid('thread'), resourceId: uid('user') };
      const first = await follow(slow, t);
      await post(slow, t, 'send-message', { message: 'say something long enough to join in the middle' });
      await first.waitForEvent((e) => e.type === 'TEXT_MESSAGE_CONTENT' && e.messageId !== first.list.find((x) => x.role === 'user')?.messageId);
      const late = await openSse(eventsUrl(slow, t, '&snapshot=1'));
      await runsSeen(first, 1);
      // The late follower has caught up once it holds the run's last id (its snapshot frames carry
      // the id they stand for, in case the run ended before it joined).
      const endId = first.events.at(-1)!.id;
      await late.waitFor(() => (late.events.at(-1)?.id ?? 0) >= endId, 'the late follower to catch up');
      const res = await http(`${slow.base}/threads/${t.threadId}/messages?resourceId=${t.resourceId}&format=agui`);
      expect(await foldMessages(first.list)).toEqual(res.body);
      expect(await foldMessages(late.list)).toEqual(res.body);
      await Promise.all([first.close(), late.close()]);
    } finally {
      await slow.close();
    }
  });

  it('runs and signals in turn on one thread', async () => {
    const t = await followedThread();
    t.agent.addMessage(userMessage('hello'));
    await run(t);
    t.agent.addMessage(userMessage('weather in Rome'));
    await run(t);
    await post(tb, t, 'send-message', { message: 'think about the weather' });
    await runsSeen(t.sse, 3);
    await post(tb, t, 'notifications', { source: 'ci', kind: 'deploy', summary: 'Deploy finished' });
    await expectLiveEqualsHistory(t, 4, { runClient: false });
  });
});

describe('live equals history after a cut (an abort mid-run)', () => {
  const slow = useTestBridge({ delayMs: 15 });

  /** Runs `text` on a followed thread of `slow`, aborting it (`POST …/abort`) at the first event `at` matches. */
  async function cutRun(text: string, at: (e: { type: string } & Record<string, unknown>) => boolean) {
    const thread = { threadId: uid('cut'), resourceId: uid('user') };
    const agent = new HttpAgent({ url: `${slow.base}/run`, threadId: thread.threadId });
    const t = { ...thread, agent, sse: await follow(slow, thread) };
    let aborting: Promise<unknown> | undefined;
    agent.subscribe({
      onEvent: ({ event }) => {
        if (!aborting && at(event)) aborting = post(slow, t, 'abort');
      },
    });
    agent.addMessage(userMessage(text));
    const runId = uid('run');
    const r = await runAgentStrict(agent, { runId, forwardedProps: { resourceId: t.resourceId } });
    expect(aborting, 'the abort was sent').toBeDefined();
    expect((await aborting) as { body: unknown }).toMatchObject({ body: { aborted: true } });
    expect(r.terminal).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } });
    await t.sse.waitFor(() => t.sse.list.some((e) => e.type === 'RUN_FINISHED' || e.type === 'RUN_ERROR'), 'the cut run closed');
    const stored = (await http(`${slow.base}/threads/${t.threadId}/messages?resourceId=${t.resourceId}&format=agui`)).body as Message[];
    expect(agent.messages).toEqual(stored);
    expect(await foldMessages(t.sse.list)).toEqual(stored);
    // The run's end says so, last: a tab that loads the thread shows "cancelled" where the live one did.
    expect(stored.at(-1)).toEqual({ id: `run-end-${runId}`, role: 'activity', activityType: 'run-end', content: { outcome: 'cancelled' } });
    await t.sse.close();
  }

  it('in the middle of its reasoning', () => cutRun('think about tea and how to brew it well', (e) => e.type === EventType.REASONING_MESSAGE_CONTENT));
  it('in the middle of its answer', () => cutRun('think about tea and how to brew it well', (e) => e.type === EventType.TEXT_MESSAGE_CONTENT));
  it('at a server tool call', () => cutRun('weather in Oslo?', (e) => e.type === EventType.TOOL_CALL_END));
  it('while a sub-agent streams', () => cutRun('research green tea', (e) => e.type === EventType.TEXT_MESSAGE_CONTENT && 'subagentRunId' in e));
});
