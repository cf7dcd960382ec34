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
    expect(events[started]).toEqual({ type: 'SUBAGENT_STARTED', subagentRunId: `subagent-${call.toolCallId}`, name: 'researcher', parentToolCallId: call.toolCallId });
    expect(started).toBeGreaterThan(events.findIndex((e) => e.type === 'TOOL_CALL_END'));
    expect(finished).toBeGreaterThan(started);
    expect(result).toBe(finished + 1);
    const answer = events.slice(started + 1, finished);
    expect(answer.every((e) => e.subagentRunId === `subagent-${call.toolCallId}`)).toBe(true);
    expect(answer.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').map((e) => e.delta).join('')).toBe('Findings on tides: three sources agree, and none disagrees.');

    expect(agent.messages.map((m) => [m.role, m.content ?? null])).toEqual([
      ['user', 'research tides'],
      ['assistant', null],
      ['tool', expect.stringContaining('Findings on tides')],
      ['assistant', 'Findings on tides: three sources agree, and none disagrees.'],
      ['assistant', 'Summary: Findings on tides: three sources agree, and none disagrees.'],
    ]);
    expect(agent.messages[3]).toMatchObject({ subagentRunId: `subagent-${call.toolCallId}` });
    expect(comparable(await client.messages(agent.threadId, { format: 'agui' }))).toEqual(comparable(agent.messages));
  });

  it('a sub-agent that fails: SUBAGENT_ERROR, the call’s error result, and the parent answers on', async () => {
    const { agent, ask } = newAgent();
    const run = await ask('research Atlantis');
    const events = run.events as AnyEvent[];
    const error = events.findIndex((e) => e.type === 'SUBAGENT_ERROR');
    expect(events[error]).toMatchObject({ type: 'SUBAGENT_ERROR', subagentRunId: events.find((e) => e.type === 'SUBAGENT_STARTED')?.subagentRunId, message: expect.stringContaining('researcher') });
    expect(events[error + 1]).toMatchObject({ type: 'TOOL_CALL_RESULT', content: expect.stringContaining('"error"') });
    expect(run.terminal?.type).toBe('RUN_FINISHED');
    expect(agent.messages.at(-1)?.content).toMatch(/^The tool agent-researcher failed/);
  });

  it('capabilities name the sub-agents of an agent that has them', async () => {
    const caps = (await http(`${b.base}/agents/demo`)).body.capabilities;
    expect(caps.multiAgent).toEqual({ supported: true, delegation: true, subagents: [{ name: 'researcher', description: 'Looks a topic up and reports its findings.' }] });
  });
});

describe('a delegation on the thread stream', () => {
  it('a follower’s reducer builds the same messages as history, the sub-agent’s answer attributed', async () => {
    const warnings: string[] = [];
    const warn = vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => void warnings.push(args.map(String).join(' ')));
    try {
      const { client } = newAgent();
      const threadId = uid('sub-thread');
      const follower = new BridgeAgent({ baseUrl: b.base, threadId, resourceId: client.resourceId });
      const events: AnyEvent[] = [];
      let finished = 0;
      const following = follower.connectAgent({}, { onEvent: ({ event }) => void events.push(event as AnyEvent), onRunFinishedEvent: () => void finished++ });
      await vi.waitFor(() => expect(finished).toBe(1)); // the opening snapshot run
      await client.sendMessage(threadId, 'research coral reefs');
      await vi.waitFor(() => expect(finished).toBe(2));
      follower.disconnect();
      await following;
      expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['SUBAGENT_STARTED', 'SUBAGENT_FINISHED']));
      expect(follower.messages.find((m) => 'subagentRunId' in m)).toMatchObject({ role: 'assistant', content: 'Findings on coral reefs: three sources agree, and none disagrees.' });
      expect(comparable(await client.messages(threadId, { format: 'agui' }))).toEqual(comparable(follower.messages));
      expect(warnings).toEqual([]);
    } finally {
      warn.mockRestore();
    }
  });
});
