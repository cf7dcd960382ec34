import type { BaseEvent, Message } from '@ag-ui/client';
import { describe, expect, it, vi } from 'vitest';
import { BridgeAgent, BridgeClient } from '../src/client/index.js';
import { uid } from './support/agui.js';
import { runAgentStrict } from './support/run.js';
import { http, useTestBridge } from './support/server.js';

// Sub-agents: the demo agent delegates `research <topic>` to its `researcher` sub-agent (Mastra's
// `agents: { researcher }`, the tool `agent-researcher`). AG-UI 1.0 shows the delegation as
// SUBAGENT_STARTED, the sub-agent's answer attributed to it (`subagentRunId`), SUBAGENT_FINISHED
// or SUBAGENT_ERROR, all inside the parent's bracket, before the delegation's tool result.

const b = useTestBridge({ delayMs: 0 });

type AnyEvent = BaseEvent & Record<string, unknown>;

function newAgent() {
  const resourceId = uid('sub-user');
  const agent = new BridgeAgent({ baseUrl: b.base, threadId: uid('sub'), resourceId });
  const client = new BridgeClient({ baseUrl: b.base, resourceId });
  const ask = (content: string) => {
    agent.addMessage({ id: uid('msg'), role: 'user', content });
    return runAgentStrict(agent, { runId: uid('run') });
  };
  return { agent, client, ask };
}

/** The messages as a client compares them: what the reducer built, or what history gives. */
const comparable = (messages: Message[]) => messages.map((m) => JSON.parse(JSON.stringify(m)) as unknown);

describe('a delegation to a sub-agent on /run', () => {
  it('streams SUBAGENT_STARTED, the sub-agent’s answer with its subagentRunId, SUBAGENT_FINISHED, then the call’s result; history equals what the stream built', async () => {
    const { agent, client, ask } = newAgent();
    const run = await ask('research tides');
    const events = run.events as AnyEvent[];
    const call = events.find((e) => e.type === 'TOOL_CALL_START')!;
    expect(call.toolCallName).toBe('agent-researcher');
    const started = events.findIndex((e) => e.type === 'SUBAGENT_STARTED');
    const finished = events.findIndex((e) => e.type === 'SUBAGENT_FINISHED');
    const result = events.findIndex((e) => e.type === 'TOOL_CALL_RESULT');
    expect(events[started]).toEqual({
      type: 'SUBAGENT_STARTED',
      subagentRunId: `subagent-${call.toolCallId as string}`,
      name: 'researcher',
      parentToolCallId: call.toolCallId,
    });
    expect(started).toBeGreaterThan(events.findIndex((e) => e.type === 'TOOL_CALL_END'));
    expect(finished).toBeGreaterThan(started);
    expect(result).toBe(finished + 1);
    const answer = events.slice(started + 1, finished);
    expect(answer.every((e) => e.subagentRunId === `subagent-${call.toolCallId as string}`)).toBe(true);
    expect(
      answer
        .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
        .map((e) => e.delta)
        .join(''),
    ).toBe('Findings on tides: three sources agree, and none disagrees.');

    expect(agent.messages.map((m) => [m.role, m.content ?? null])).toEqual([
      ['user', 'research tides'],
      ['assistant', null],
      ['tool', expect.stringContaining('Findings on tides')],
      ['assistant', 'Findings on tides: three sources agree, and none disagrees.'],
      ['assistant', 'Summary: Findings on tides: three sources agree, and none disagrees.'],
    ]);
    expect(agent.messages[3]).toMatchObject({ subagentRunId: `subagent-${call.toolCallId as string}` });
    expect(comparable(await client.messages(agent.threadId, { format: 'agui' }))).toEqual(comparable(agent.messages));
  });

  it('the sub-agent’s own tool call and its result carry its subagentRunId, on a message of its own; history equals the stream', async () => {
    const { agent, client, ask } = newAgent();
    const run = await ask('research the weather in Oslo');
    const events = run.events as AnyEvent[];
    const delegation = events.find((e) => e.type === 'TOOL_CALL_START' && e.toolCallName === 'agent-researcher')!;
    const subagent = `subagent-${delegation.toolCallId as string}`;
    const inner = events.find((e) => e.type === 'TOOL_CALL_START' && e.toolCallName === 'get_weather')!;
    expect(inner).toMatchObject({ subagentRunId: subagent, parentMessageId: `${subagent}-calls` });
    const innerResult = events.find((e) => e.type === 'TOOL_CALL_RESULT' && e.toolCallId === inner.toolCallId)!;
    expect(innerResult).toMatchObject({ subagentRunId: subagent, content: JSON.stringify({ city: 'Oslo', tempC: 23, conditions: 'cloudy' }) });
    // Inside the delegation's segment: after SUBAGENT_STARTED, before SUBAGENT_FINISHED.
    const at = (e: AnyEvent) => events.indexOf(e);
    expect(at(inner)).toBeGreaterThan(events.findIndex((e) => e.type === 'SUBAGENT_STARTED'));
    expect(at(innerResult)).toBeLessThan(events.findIndex((e) => e.type === 'SUBAGENT_FINISHED'));
    expect(agent.messages.map((m) => [m.role, m.subagentRunId ?? null])).toEqual([
      ['user', null],
      ['assistant', null],
      ['tool', null],
      ['assistant', subagent], // the sub-agent's call
      ['tool', subagent],
      ['assistant', subagent], // its answer
      ['assistant', null],
    ]);
    expect(comparable(await client.messages(agent.threadId, { format: 'agui' }))).toEqual(comparable(agent.messages));
  });

  it('the sub-agent’s reasoning streams as a reasoning message with its subagentRunId; history keeps it (Mastra stores the sub-agent’s thread)', async () => {
    const { agent, client, ask } = newAgent();
    const run = await ask('research tides, think it through');
    const events = run.events as AnyEvent[];
    const subagent = events.find((e) => e.type === 'SUBAGENT_STARTED')!.subagentRunId;
    expect(events.filter((e) => e.type.startsWith('REASONING_')).every((e) => e.subagentRunId === subagent)).toBe(true);
    const reasoning = agent.messages.find((m) => m.role === 'reasoning');
    expect(reasoning).toMatchObject({ id: `${String(subagent)}-reasoning`, content: 'Let me think about that step by step.', subagentRunId: subagent });
    expect(comparable(await client.messages(agent.threadId, { format: 'agui' }))).toEqual(comparable(agent.messages));
  });

  it('an approval the sub-agent needs is the parent run’s interrupt (SUBAGENT_FINISHED suspended); the resume runs the sub-agent’s call and it answers', async () => {
    const { agent, client, ask } = newAgent();
    const first = await ask('research and delete old-notes.txt');
    const events = first.events as AnyEvent[];
    const subagent = events.find((e) => e.type === 'SUBAGENT_STARTED')!.subagentRunId as string;
    expect(first.finished?.outcome).toBe('interrupt');
    const [interrupt] = agent.pendingInterrupts;
    expect(interrupt).toMatchObject({
      reason: 'tool_approval',
      subagentRunId: subagent,
      metadata: { toolName: 'delete_file', args: { path: 'old-notes.txt' } },
    });
    expect(events.find((e) => e.type === 'SUBAGENT_FINISHED')).toEqual({
      type: 'SUBAGENT_FINISHED',
      subagentRunId: subagent,
      outcome: { type: 'suspended', interruptIds: [interrupt.id] },
    });
    // The call waiting for approval is the interrupt's (history has only that while the sub-agent waits).
    expect(events.find((e) => e.type === 'TOOL_CALL_START' && e.toolCallName === 'delete_file')).toBeUndefined();
    expect(comparable(await client.messages(agent.threadId, { format: 'agui' }))).toEqual(comparable(agent.messages));

    const second = await runAgentStrict(agent, { runId: uid('run'), resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] });
    const resumed = second.events as AnyEvent[];
    // The same sub-agent invocation goes on in the resumed run.
    expect(resumed.filter((e) => e.type === 'SUBAGENT_STARTED' || e.type === 'SUBAGENT_FINISHED').map((e) => [e.type, e.subagentRunId])).toEqual([
      ['SUBAGENT_STARTED', subagent],
      ['SUBAGENT_FINISHED', subagent],
    ]);
    expect(second.terminal.type).toBe('RUN_FINISHED');
    const call = resumed.find((e) => e.type === 'TOOL_CALL_START' && e.toolCallName === 'delete_file')!;
    expect(call).toMatchObject({ subagentRunId: subagent, parentMessageId: `${subagent}-calls` });
    expect(resumed.find((e) => e.type === 'TOOL_CALL_ARGS' && e.toolCallId === call.toolCallId)).toMatchObject({ delta: '{"path":"old-notes.txt"}' });
    expect(agent.messages.filter((m) => m.subagentRunId === subagent).map((m) => [m.role, m.content ?? null])).toEqual([
      ['assistant', null],
      ['tool', '{"deleted":"old-notes.txt"}'],
      ['assistant', 'Deleted as requested: {"deleted":"old-notes.txt"}'],
    ]);
    expect(agent.messages.at(-1)?.content).toBe('Summary: Deleted as requested: {"deleted":"old-notes.txt"}');
    expect(comparable(await client.messages(agent.threadId, { format: 'agui' }))).toEqual(comparable(agent.messages));
  });

  it('a sub-agent that fails: SUBAGENT_ERROR, the call’s error result, and the parent answers on', async () => {
    const { agent, ask } = newAgent();
    const run = await ask('research Atlantis');
    const events = run.events as AnyEvent[];
    const error = events.findIndex((e) => e.type === 'SUBAGENT_ERROR');
    expect(events[error]).toMatchObject({
      type: 'SUBAGENT_ERROR',
      subagentRunId: events.find((e) => e.type === 'SUBAGENT_STARTED')?.subagentRunId,
      message: expect.stringContaining('researcher'),
    });
    expect(events[error + 1]).toMatchObject({ type: 'TOOL_CALL_RESULT', content: expect.stringContaining('"error"') });
    expect(run.terminal?.type).toBe('RUN_FINISHED');
    expect(agent.messages.at(-1)?.content).toMatch(/^The tool agent-researcher failed/);
  });

  it('capabilities name the sub-agents of an agent that has them', async () => {
    const caps = (await http(`${b.base}/agents/demo`)).body.capabilities;
    expect(caps.multiAgent).toEqual({
      supported: true,
      delegation: true,
      subagents: [{ name: 'researcher', description: 'Looks a topic up and reports its findings.' }],
    });
  });
});

describe('a delegation on the thread stream', () => {
  it('a follower sees the sub-agent’s reasoning, calls, approval and resume as the running client does; its reducer equals history after every run', async () => {
    const warnings: string[] = [];
    const warn = vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => void warnings.push(args.map(String).join(' ')));
    try {
      const { agent, client, ask } = newAgent();
      const follower = new BridgeAgent({ baseUrl: b.base, threadId: agent.threadId, resourceId: client.resourceId });
      let finished = 0;
      const following = follower.connectAgent({}, { onRunFinishedEvent: () => void finished++ });
      await vi.waitFor(() => expect(finished).toBe(1)); // the opening snapshot run
      const settled = async (runs: number) => {
        await vi.waitFor(() => expect(finished).toBe(runs));
        expect(comparable(follower.messages)).toEqual(comparable(await client.messages(agent.threadId, { format: 'agui' })));
      };
      await ask('research tides, think it through');
      await settled(2);
      await ask('research and delete old-notes.txt');
      await settled(3);
      const [interrupt] = agent.pendingInterrupts;
      await runAgentStrict(agent, { runId: uid('run'), resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] });
      await settled(4);
      expect(comparable(follower.messages)).toEqual(comparable(agent.messages));
      follower.disconnect();
      await following;
      expect(warnings).toEqual([]);
    } finally {
      warn.mockRestore();
    }
  });

  it('a follower’s reducer builds the same messages as history, the sub-agent’s answer attributed', async () => {
    const warnings: string[] = [];
    const warn = vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => void warnings.push(args.map(String).join(' ')));
    try {
      const { client } = newAgent();
      const threadId = uid('sub-thread');
      const follower = new BridgeAgent({ baseUrl: b.base, threadId, resourceId: client.resourceId });
      const events: AnyEvent[] = [];
      let finished = 0;
      const following = follower.connectAgent({}, { onEvent: ({ event }) => void events.push(event), onRunFinishedEvent: () => void finished++ });
      await vi.waitFor(() => expect(finished).toBe(1)); // the opening snapshot run
      await client.sendMessage(threadId, 'research coral reefs');
      await vi.waitFor(() => expect(finished).toBe(2));
      follower.disconnect();
      await following;
      expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['SUBAGENT_STARTED', 'SUBAGENT_FINISHED']));
      expect(follower.messages.find((m) => 'subagentRunId' in m)).toMatchObject({
        role: 'assistant',
        content: 'Findings on coral reefs: three sources agree, and none disagrees.',
      });
      expect(comparable(await client.messages(threadId, { format: 'agui' }))).toEqual(comparable(follower.messages));
      expect(warnings).toEqual([]);
    } finally {
      warn.mockRestore();
    }
  });
});
