import type { BaseEvent, Message } from '@ag-ui/client';
import { describe, expect, it, vi } from 'vitest';
import { BridgeAgent, BridgeClient } from '../src/client/index.js';
import { Agent } from '@mastra/core/agent';
import type { ErrorProcessor } from '@mastra/core/processors';
import { Memory } from '@mastra/memory';
import { createGuardedAgent } from '../src/demo/guardrails.js';
import { createScriptedModel } from '../src/demo/scripted-model.js';
import { runInput, runStrict, uid, userMessage } from './support/agui.js';
import { runAgentStrict } from './support/run.js';
import { http, useTestBridge } from './support/server.js';
import { foldMessages, openSse, type AnyEvent } from './support/sse.js';

// Real Mastra processors behind the bridge: a guardrail that stops a run ends it with
// RUN_ERROR TRIPWIRE, its reason, and which processor said what (`metadata`); a stream processor
// that drops chunks and writes its own (`writer.custom`) reaches the client as it shaped them; what
// a processor discards after it streamed (a retried step, a blocked answer) is retracted with the
// thread as stored, so every client ends holding the history.

/** An error processor that gives up on a failed model call (`abort`): Mastra 1.71 then ends the stream with no result. */
const giveUpOnModelFailure: ErrorProcessor = {
  id: 'give-up-on-model-failure',
  processAPIError: ({ abort }) => abort('The model is unavailable', { metadata: { category: 'model' } }),
};

const b = useTestBridge({
  delayMs: 0,
  agents: (storage) => ({
    guarded: createGuardedAgent(storage),
    stops: new Agent({
      id: 'stops',
      name: 'Stops',
      instructions: 'x',
      model: createScriptedModel({ delayMs: 0 }),
      memory: new Memory({ storage }),
      errorProcessors: [giveUpOnModelFailure],
    }),
  }),
});

const ask = (content: string) =>
  runStrict(
    `${b.base}/run`,
    runInput({ threadId: uid('guarded'), messages: [userMessage(content)], forwardedProps: { resourceId: 'guard-user', agentId: 'guarded' } }),
  );

describe('a guardrail that stops a run', () => {
  it('an input processor: RUN_ERROR TRIPWIRE before any answer, with the processor and its metadata', async () => {
    const run = await ask('tell me about the forbidden zone');
    expect(run.events.map((e) => e.type)).not.toContain('TEXT_MESSAGE_START');
    expect(run.events.at(-1)).toEqual({
      type: 'RUN_ERROR',
      message: 'The message names a forbidden topic',
      code: 'TRIPWIRE',
      metadata: { processorId: 'block-forbidden-input', processorMetadata: { category: 'policy' } },
    });
  });

  it('an output step processor: the run that streamed the blocked answer ends RUN_ERROR TRIPWIRE, never RUN_FINISHED', async () => {
    const run = await ask('what is the secret');
    expect(run.events.map((e) => e.type)).not.toContain('RUN_FINISHED');
    expect(run.events.at(-1)).toMatchObject({
      type: 'RUN_ERROR',
      code: 'TRIPWIRE',
      metadata: { processorId: 'block-secret-answers', processorMetadata: { category: 'pii' } },
    });
  });

  it('an output stream processor that drops a word: the client gets the answer without it, and its custom chunk; history holds what the client built', async () => {
    const threadId = uid('guarded');
    const run = await runStrict(
      `${b.base}/run`,
      runInput({ threadId, messages: [userMessage('say darn it')], forwardedProps: { resourceId: 'guard-user', agentId: 'guarded' } }),
    );
    expect(run.events.find((e) => e.type === 'CUSTOM')).toEqual({ type: 'CUSTOM', name: 'data-moderation', value: { dropped: 'darn' } });
    const events = run.events as Array<BaseEvent & { messageId?: string; delta?: string }>;
    const start = events.find((e) => e.type === 'TEXT_MESSAGE_START');
    const text = events.flatMap((e) => (e.type === 'TEXT_MESSAGE_CONTENT' ? [e.delta] : [])).join('');
    expect(text).toBe('Echo: say it');
    const history = await http(`${b.base}/threads/${threadId}/messages?resourceId=guard-user&agentId=guarded&format=agui`);
    expect(history.body.at(-1)).toEqual({ id: start?.messageId, role: 'assistant', content: 'Echo: say it' });
    expect(run.events.at(-1)?.type).toBe('RUN_FINISHED');
  });

  it('an error processor that reports a failed model call: its CUSTOM chunk, then RUN_ERROR MODEL_ERROR; history holds the question only, as the client does', async () => {
    const threadId = uid('guarded');
    const run = await runStrict(
      `${b.base}/run`,
      runInput({ threadId, messages: [userMessage('please fail')], forwardedProps: { resourceId: 'guard-user', agentId: 'guarded' } }),
    );
    expect(run.events.filter((e) => e.type === 'CUSTOM' || e.type === 'RUN_ERROR')).toEqual([
      { type: 'CUSTOM', name: 'data-model-failure', value: { message: 'demo model failure' } },
      { type: 'RUN_ERROR', message: 'demo model failure', code: 'MODEL_ERROR' },
    ]);
    // The client holds the run's end (its run-end message); history holds the question and that end.
    const end = { role: 'activity', activityType: 'run-end', content: { outcome: 'failed', code: 'MODEL_ERROR', message: 'demo model failure' } };
    expect(await foldMessages(run.events as AnyEvent[])).toEqual([expect.objectContaining(end)]);
    expect(await history(threadId)).toEqual([expect.objectContaining({ role: 'user' }), expect.objectContaining(end)]);
  });

  it('an error processor that aborts: Mastra ends the stream without a result, and the run ends RUN_ERROR, never RUN_FINISHED', async () => {
    const run = await runStrict(
      `${b.base}/run`,
      runInput({ threadId: uid('stops'), messages: [userMessage('please fail')], forwardedProps: { resourceId: 'guard-user', agentId: 'stops' } }),
    );
    expect(run.types).not.toContain('RUN_FINISHED');
    expect(run.terminal).toEqual({ type: 'RUN_ERROR', message: expect.stringContaining('stopped before it finished'), code: 'RUN_FAILED' });
  });

  it('a run the guardrails let through finishes as usual', async () => {
    const run = await ask('hello there');
    expect(run.events.at(-1)?.type).toBe('RUN_FINISHED');
  });
});

const history = async (threadId: string, format: 'agui' | 'mastra' = 'agui') =>
  (await http(`${b.base}/threads/${threadId}/messages?resourceId=guard-user&agentId=guarded&format=${format}`)).body as Message[];

/** The messages a client holds, as the history shows them (ids, roles, text). */
const shown = (messages: Message[]) => messages.map((m) => ({ id: m.id, role: m.role, content: m.content }));

/** The events around a retraction: the thread as stored, just before the run's end (a failed run's run-end message, its terminal event). */
function retraction(events: BaseEvent[]) {
  const at = events.findIndex((e) => e.type === 'MESSAGES_SNAPSHOT');
  expect(at, 'a MESSAGES_SNAPSHOT').toBeGreaterThan(0);
  expect(events.slice(at + 1).map((e) => e.type)).toEqual(events.at(-1)?.type === 'RUN_ERROR' ? ['ACTIVITY_SNAPSHOT', 'RUN_ERROR'] : ['RUN_FINISHED']);
  return (events[at] as BaseEvent & { messages: Message[] }).messages;
}

/** A message of a stored row: not a run-end message, which the thread keeps beside its rows. */
const isStoredRow = (m: Message) => m.role !== 'activity';

/** What the thread shows, message by message: a run-end message as `run-end <outcome>`. */
const contents = (messages: Message[]) => messages.map((m) => (m.role === 'activity' ? `run-end ${(m.content as { outcome: string }).outcome}` : m.content));

describe('what a processor discards after it streamed is retracted', () => {
  it('a retried step: both attempts stream, the thread as stored comes before RUN_FINISHED, and the reducer ends holding only the accepted answer, as history does', async () => {
    const agent = new BridgeAgent({ baseUrl: b.base, threadId: uid('guarded'), resourceId: 'guard-user', agentId: 'guarded' });
    agent.addMessage(userMessage('write a draft'));
    const run = await runAgentStrict(agent, { runId: uid('run') });
    const texts = run.events.filter((e) => e.type === 'TEXT_MESSAGE_START');
    expect(texts).toHaveLength(2); // the rejected attempt, then the retried one
    expect(run.terminal.type).toBe('RUN_FINISHED');
    const snapshot = retraction(run.events);
    const stored = await history(agent.threadId);
    expect(snapshot).toEqual(stored);
    expect(shown(agent.messages)).toEqual(shown(stored));
    expect(stored.map((m) => [m.role, m.content])).toEqual([
      ['user', 'write a draft'],
      ['assistant', 'Revised: write a draft'],
    ]);
  });

  it('an answer an output step guardrail blocked: retracted before RUN_ERROR, and gone from storage (the model never reads it again)', async () => {
    const threadId = uid('guarded');
    const run = await runStrict(
      `${b.base}/run`,
      runInput({ threadId, messages: [userMessage('what is the secret')], forwardedProps: { resourceId: 'guard-user', agentId: 'guarded' } }),
    );
    expect(run.events.map((e) => e.type)).toContain('TEXT_MESSAGE_CONTENT'); // it streamed
    expect(run.terminal).toMatchObject({ type: 'RUN_ERROR', code: 'TRIPWIRE', metadata: { processorId: 'block-secret-answers' } });
    const stored = await history(threadId);
    expect(retraction(run.events)).toEqual(stored.filter(isStoredRow));
    expect(shown(await foldMessages(run.events as AnyEvent[]))).toEqual(shown(stored));
    expect(contents(stored)).toEqual(['what is the secret', 'run-end failed']);
    expect(JSON.stringify(await history(threadId, 'mastra'))).not.toContain('Echo: what is the secret');
  });

  it('an answer a stream processor stopped midway: the part that streamed is retracted before RUN_ERROR', async () => {
    const threadId = uid('guarded');
    const run = await runStrict(
      `${b.base}/run`,
      runInput({ threadId, messages: [userMessage('name the classified files')], forwardedProps: { resourceId: 'guard-user', agentId: 'guarded' } }),
    );
    expect(run.terminal).toMatchObject({
      type: 'RUN_ERROR',
      code: 'TRIPWIRE',
      metadata: { processorId: 'stop-classified-stream', processorMetadata: { category: 'classified' } },
    });
    const stored = await history(threadId);
    expect(retraction(run.events)).toEqual(stored.filter(isStoredRow));
    const held = await foldMessages(run.events as AnyEvent[]);
    expect(held).toEqual(stored);
    expect(contents(held)).toEqual(['name the classified files', 'run-end failed']);
  });

  it('a run a message woke, with nobody following the thread: the blocked answer still leaves storage', async () => {
    const threadId = uid('guarded');
    const client = new BridgeClient({ baseUrl: b.base, resourceId: 'guard-user', agentId: 'guarded' });
    expect(await client.sendMessage(threadId, 'what is the secret')).toMatchObject({ action: 'wake' });
    // The next /run waits its turn: the woken run has ended (its blocked answer stored) when it starts.
    const next = await runStrict(
      `${b.base}/run`,
      runInput({ threadId, messages: [userMessage('hello there')], forwardedProps: { resourceId: 'guard-user', agentId: 'guarded' } }),
    );
    expect(next.terminal.type).toBe('RUN_FINISHED');
    await vi.waitFor(async () =>
      expect(contents(await history(threadId))).toEqual(['what is the secret', 'run-end failed', 'hello there', 'Echo: hello there']),
    );
  });

  it("a follower of the thread gets the same retractions: after each run its reducer holds the thread's history", async () => {
    const threadId = uid('guarded');
    const follower = await openSse(`${b.base}/threads/${threadId}/events?resourceId=guard-user&agentId=guarded`);
    const asked: Message[] = [];
    const ends = () => follower.list.filter((e) => e.type === 'RUN_FINISHED' || e.type === 'RUN_ERROR').length;
    for (const content of ['write a draft', 'what is the secret', 'hello there', 'name the classified files']) {
      const before = ends();
      asked.push(userMessage(content));
      await runStrict(`${b.base}/run`, runInput({ threadId, messages: asked, forwardedProps: { resourceId: 'guard-user', agentId: 'guarded' } }));
      await follower.waitFor(() => ends() > before, `the end of "${content}" on the thread stream`);
      expect(shown(await foldMessages(follower.list)), content).toEqual(shown(await history(threadId)));
    }
    expect(contents(await history(threadId))).toEqual([
      'write a draft',
      'Revised: write a draft',
      'what is the secret',
      'run-end failed',
      'hello there',
      'Echo: hello there',
      'name the classified files',
      'run-end failed',
    ]);
    await follower.close();
  });
});
