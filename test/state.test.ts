import type { BaseEvent } from '@ag-ui/client';
import { Agent } from '@mastra/core/agent';
import { Memory } from '@mastra/memory';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BridgeAgent, BridgeClient } from '../src/client/index.js';
import { DEMO_STATE } from '../src/demo/agent.js';
import { createScriptedModel } from '../src/demo/scripted-model.js';
import { uid } from './support/agui.js';
import { runAgentStrict } from './support/run.js';
import { http, useTestBridge } from './support/server.js';
import { openSse } from './support/sse.js';

// Agent state = the thread's working memory. The demo agent keeps `{ facts: string[] }` (thread
// scoped) and `remember <fact>` adds one through Mastra's working-memory tool. What a client's
// reducer (`@ag-ui/client`) builds from the state events must equal what storage holds, after
// every run, on `/run` and on the thread stream.

const b = useTestBridge({ delayMs: 0 });

const storedState = async (threadId: string, resourceId: string) =>
  (await http(`${b.base}/threads/${threadId}/state?resourceId=${resourceId}`)).body as { state: Record<string, unknown> };

const types = (events: BaseEvent[]) => events.map((e) => e.type);

/** A `BridgeAgent` on a new thread, running `/run`s with the strict pipeline (no client warning). */
function newAgent() {
  const resourceId = uid('state-user');
  const agent = new BridgeAgent({ baseUrl: b.base, threadId: uid('state'), resourceId });
  const ask = (content: string) => {
    agent.addMessage({ id: uid('msg'), role: 'user', content });
    return runAgentStrict(agent, { runId: uid('run') });
  };
  return { agent, resourceId, ask };
}

describe('working memory as AG-UI state on /run', () => {
  it('a first fact: STATE_SNAPSHOT after the update; a second: STATE_SNAPSHOT after RUN_STARTED, then a STATE_DELTA; the reducer equals storage each time', async () => {
    const { agent, resourceId, ask } = newAgent();
    const first = await ask('remember tea, no sugar.');
    // A thread without state opens without a state event; the update sends the first, a snapshot.
    expect(first.types[1]).not.toBe('STATE_SNAPSHOT');
    expect(first.events.find((e) => e.type.startsWith('STATE_'))).toMatchObject({ type: 'STATE_SNAPSHOT', snapshot: { facts: ['tea, no sugar'] } });
    expect(agent.state).toEqual({ facts: ['tea, no sugar'] });
    expect(await storedState(agent.threadId, resourceId)).toEqual({ state: agent.state });

    const second = await ask('remember the window seat');
    expect(second.types.slice(0, 2)).toEqual(['RUN_STARTED', 'STATE_SNAPSHOT']);
    expect(second.events.find((e) => e.type === 'STATE_DELTA')).toMatchObject({ delta: [{ op: 'add', path: '/facts/1', value: 'the window seat' }] });
    expect(agent.state).toEqual({ facts: ['tea, no sugar', 'the window seat'] });
    expect(await storedState(agent.threadId, resourceId)).toEqual({ state: agent.state });

    // The working-memory tool is not shown as a call (history leaves it out too): live == history.
    expect([...first.types, ...second.types]).not.toContain('TOOL_CALL_START');
    const history = await new BridgeClient({ baseUrl: b.base, resourceId }).messages(agent.threadId, { format: 'agui' });
    expect(history.map((m) => [m.role, m.content])).toEqual(agent.messages.map((m) => [m.role, m.content]));
    expect(agent.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Noted: the window seat' });
  });

  it('a run that changes nothing sends the state once, after RUN_STARTED, and no delta', async () => {
    const { agent, ask } = newAgent();
    await ask('remember one thing');
    const plain = await ask('just talk');
    expect(plain.types.filter((t) => t.startsWith('STATE_'))).toEqual(['STATE_SNAPSHOT']);
    expect(plain.types[1]).toBe('STATE_SNAPSHOT');
    expect(agent.state).toEqual({ facts: ['one thing'] });
  });
});

describe('client state in (RunAgentInput.state)', () => {
  it('a state that differs from the stored one is stored before the run, which opens with it and builds on it', async () => {
    const { agent, resourceId, ask } = newAgent();
    agent.setState({ facts: ['from the client'] });
    const run = await ask('remember and from the agent');
    expect(run.types.slice(0, 2)).toEqual(['RUN_STARTED', 'STATE_SNAPSHOT']);
    expect(run.events[1]).toMatchObject({ snapshot: { facts: ['from the client'] } });
    expect(agent.state).toEqual({ facts: ['from the client', 'and from the agent'] });
    expect(await storedState(agent.threadId, resourceId)).toEqual({ state: agent.state });
  });

  it('a state that does not fit the schema is 400 INVALID_INPUT naming the field, before any event; nothing is stored', async () => {
    const { agent, resourceId, ask } = newAgent();
    await ask('remember kept');
    const res = await http(`${b.base}/run`, {
      body: {
        threadId: agent.threadId,
        runId: uid('run'),
        messages: [{ id: uid('msg'), role: 'user', content: 'hi' }],
        tools: [],
        context: [],
        state: { facts: 'not a list' },
        forwardedProps: { resourceId },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_INPUT', details: [expect.objectContaining({ path: 'state.facts' })] });
    const notObject = await http(`${b.base}/run`, {
      body: {
        threadId: agent.threadId,
        runId: uid('run'),
        messages: [{ id: uid('msg'), role: 'user', content: 'hi' }],
        tools: [],
        context: [],
        state: ['x'],
        forwardedProps: { resourceId },
      },
    });
    expect(notObject).toMatchObject({ status: 400, body: { code: 'INVALID_INPUT', details: [{ path: 'state' }] } });
    expect(await storedState(agent.threadId, resourceId)).toEqual({ state: { facts: ['kept'] } });
    expect((await new BridgeClient({ baseUrl: b.base, resourceId }).messages(agent.threadId, { format: 'agui' })).map((m) => m.content)).toEqual([
      'remember kept',
      'Noted: kept',
    ]);
  });

  it('{} and the stored state itself change nothing', async () => {
    const { agent, resourceId, ask } = newAgent();
    await ask('remember stays');
    agent.setState({});
    await ask('hello');
    expect(await storedState(agent.threadId, resourceId)).toEqual({ state: { facts: ['stays'] } });
  });
});

describe('what is stored is the checked state, and only /run writes it', () => {
  /** A `/run` sent as JSON text (a JS object literal cannot carry an own `__proto__` key), its events and the raw text of the stored state. */
  async function runRaw(threadId: string, resourceId: string, stateJson: string) {
    const rawBody = `{"threadId":${JSON.stringify(threadId)},"runId":${JSON.stringify(uid('run'))},"messages":[{"id":${JSON.stringify(uid('msg'))},"role":"user","content":"hello"}],"tools":[],"context":[],"state":${stateJson},"forwardedProps":{"resourceId":${JSON.stringify(resourceId)}}}`;
    const res = await http(`${b.base}/run`, { rawBody });
    expect(res.status).toBe(200);
    const events = (res.body as string)
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice(5)) as BaseEvent & Record<string, unknown>);
    const stored = await fetch(`${b.base}/threads/${threadId}/state?resourceId=${resourceId}`).then((r) => r.text());
    return { events, stored };
  }

  it.each([
    ['an extra key', '{"facts":["a"],"evil":true}'],
    ['__proto__', '{"facts":["a"],"__proto__":{"polluted":true}}'],
    ['constructor', '{"facts":["a"],"constructor":{"prototype":{"polluted":true}}}'],
  ])(
    'RunAgentInput.state with %s: the schema drops it; the stored state and the opening STATE_SNAPSHOT are exactly the checked value',
    async (_, stateJson) => {
      const resourceId = uid('state-user');
      const threadId = uid('state');
      const { events, stored } = await runRaw(threadId, resourceId, stateJson);
      expect(stored).toBe('{"state":{"facts":["a"]}}');
      const snapshot = events.find((e) => e.type === 'STATE_SNAPSHOT');
      expect(JSON.stringify(snapshot?.snapshot)).toBe('{"facts":["a"]}');
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
  );

  it('a state that differs from the stored one only by keys the schema drops changes nothing', async () => {
    const { agent, resourceId, ask } = newAgent();
    await ask('remember same');
    const { stored } = await runRaw(agent.threadId, resourceId, '{"facts":["same"],"extra":1}');
    expect(stored).toBe('{"state":{"facts":["same"]}}');
  });

  it('PATCH and POST /threads refuse metadata.workingMemory (400 naming it, pointing at RunAgentInput.state) and store nothing', async () => {
    const { agent, resourceId, ask } = newAgent();
    await ask('remember kept');
    const url = `${b.base}/threads/${agent.threadId}?resourceId=${resourceId}`;
    for (const workingMemory of ['{"facts":5,"evil":true}', '{"facts":["fits"]}', null]) {
      const res = await http(url, { method: 'PATCH', body: { title: 'renamed', metadata: { workingMemory, color: 'red' } } });
      expect(res).toMatchObject({
        status: 400,
        body: { code: 'INVALID_INPUT', details: [{ path: 'metadata.workingMemory', message: expect.stringContaining('RunAgentInput.state') }] },
      });
    }
    // Nothing stored: not the state, not the title, not the other key.
    expect(await storedState(agent.threadId, resourceId)).toEqual({ state: { facts: ['kept'] } });
    const thread = (await http(url)).body as { title?: string; metadata?: Record<string, unknown> };
    expect(thread.title).not.toBe('renamed');
    expect(thread.metadata?.color).toBeUndefined();
    // The next run opens with the stored state.
    const next = await ask('hello');
    expect(next.events[1]).toMatchObject({ type: 'STATE_SNAPSHOT', snapshot: { facts: ['kept'] } });

    const threadId = uid('state');
    const created = await http(`${b.base}/threads`, { body: { resourceId, threadId, metadata: { workingMemory: '{"facts":5}' } } });
    expect(created).toMatchObject({ status: 400, body: { code: 'INVALID_INPUT', details: [{ path: 'metadata.workingMemory' }] } });
    expect((await http(`${b.base}/threads/${threadId}?resourceId=${resourceId}`)).status).toBe(404);
  });
});

describe('GET /threads/:threadId/state', () => {
  it('is { state: {} } for a thread with none; a thread not created yet and another resource’s thread are 404', async () => {
    const { agent, resourceId, ask } = newAgent();
    const early = await http(`${b.base}/threads/${agent.threadId}/state?resourceId=${resourceId}`);
    expect(early).toMatchObject({ status: 404, body: { code: 'THREAD_NOT_FOUND' } });
    await ask('no state yet');
    expect(await storedState(agent.threadId, resourceId)).toEqual({ state: {} });
    await ask('remember mine');
    const foreign = await http(`${b.base}/threads/${agent.threadId}/state?resourceId=${uid('someone-else')}`);
    expect(foreign).toMatchObject({ status: 404, body: { code: 'THREAD_NOT_FOUND' } });
  });
});

describe('working memory as AG-UI state on the thread stream', () => {
  let warn: { mockRestore(): void } | undefined;
  afterEach(() => warn?.mockRestore());

  it('runs woken by messages carry their state events; a follower’s reducer equals storage after every run; the snapshot bracket holds the state', async () => {
    const warnings: string[] = [];
    warn = vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => void warnings.push(args.map(String).join(' ')));
    const resourceId = uid('state-user');
    const threadId = uid('state-thread');
    const follower = new BridgeAgent({ baseUrl: b.base, threadId, resourceId });
    let finished = 0;
    const following = follower.connectAgent({}, { onRunFinishedEvent: () => void finished++ });
    await vi.waitFor(() => expect(finished).toBe(1)); // the opening snapshot run
    const client = new BridgeClient({ baseUrl: b.base, resourceId });
    for (const [i, fact] of ['aisle seat', 'no onions'].entries()) {
      await client.sendMessage(threadId, `remember ${fact}`);
      await vi.waitFor(() => expect(finished).toBe(i + 2));
      expect(follower.state).toEqual((await storedState(threadId, resourceId)).state);
    }
    expect(follower.state).toEqual({ facts: ['aisle seat', 'no onions'] });
    follower.disconnect();
    await following;
    expect(warnings).toEqual([]);

    const late = await openSse(`${b.base}/threads/${threadId}/events?resourceId=${resourceId}&snapshot=1`);
    await late.waitForCount('RUN_FINISHED', 1);
    expect(types(late.list)).toEqual(['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'STATE_SNAPSHOT', 'RUN_FINISHED']);
    expect(late.list[2]).toMatchObject({ snapshot: { facts: ['aisle seat', 'no onions'] } });
    await late.close();
  });
});

describe('other working memories: resource-scoped (schema) and template-based (Markdown)', () => {
  const others = useTestBridge({
    delayMs: 0,
    agents: (storage) => ({
      shared: new Agent({
        id: 'shared',
        name: 'Resource-scoped',
        instructions: 'x',
        model: createScriptedModel({ delayMs: 0 }),
        memory: new Memory({ storage, options: { workingMemory: { enabled: true, scope: 'resource', schema: DEMO_STATE } } }),
      }),
      notes: new Agent({
        id: 'notes',
        name: 'Template-based',
        instructions: 'x',
        model: createScriptedModel({ delayMs: 0 }),
        memory: new Memory({ storage, options: { workingMemory: { enabled: true, scope: 'thread', template: '# Notes\n' } } }),
      }),
    }),
  });

  /** Asks `agentId` on a thread of `resourceId`, with the strict pipeline. */
  async function ask(agentId: string, resourceId: string, threadId: string, content: string, state?: Record<string, unknown>) {
    const agent = new BridgeAgent({ baseUrl: others.base, threadId, resourceId, agentId });
    if (state) agent.setState(state);
    agent.addMessage({ id: uid('msg'), role: 'user', content });
    return { agent, run: await runAgentStrict(agent, { runId: uid('run') }) };
  }
  const stateOf = async (agentId: string, resourceId: string, threadId: string) =>
    (await http(`${others.base}/threads/${threadId}/state?resourceId=${resourceId}&agentId=${agentId}`)).body as { state: Record<string, unknown> };

  it('resource scope: a fact remembered on one thread is every thread’s state; another thread opens its next run with it', async () => {
    const resourceId = uid('res');
    const [a, b2] = [uid('thread-a'), uid('thread-b')];
    const first = await ask('shared', resourceId, a, 'remember shared fact');
    expect(first.agent.state).toEqual({ facts: ['shared fact'] });
    expect(await stateOf('shared', resourceId, a)).toEqual({ state: { facts: ['shared fact'] } });
    const other = await ask('shared', resourceId, b2, 'hello');
    expect(other.run.events[1]).toMatchObject({ type: 'STATE_SNAPSHOT', snapshot: { facts: ['shared fact'] } });
    expect(await stateOf('shared', resourceId, b2)).toEqual({ state: { facts: ['shared fact'] } });
    const caps = (await http(`${others.base}/agents/shared`)).body.capabilities;
    expect(caps.state).toEqual({ snapshots: true, deltas: true, persistentState: true, memory: true });
  });

  it('template-based: the state is { workingMemory: "<markdown>" }; a client’s Markdown is stored and opens the run; anything else is 400', async () => {
    const resourceId = uid('res');
    const threadId = uid('notes');
    const markdown = '# Notes\n- likes tea\n';
    const { agent, run } = await ask('notes', resourceId, threadId, 'hello', { workingMemory: markdown });
    expect(run.events[1]).toMatchObject({ type: 'STATE_SNAPSHOT', snapshot: { workingMemory: markdown } });
    expect(agent.state).toEqual({ workingMemory: markdown });
    expect(await stateOf('notes', resourceId, threadId)).toEqual({ state: { workingMemory: markdown } });
    const bad = await http(`${others.base}/run`, {
      body: {
        threadId,
        runId: uid('run'),
        messages: [{ id: uid('msg'), role: 'user', content: 'hi' }],
        tools: [],
        context: [],
        state: { facts: ['x'] },
        forwardedProps: { resourceId, agentId: 'notes' },
      },
    });
    expect(bad).toMatchObject({ status: 400, body: { code: 'INVALID_INPUT', details: [{ path: 'state' }] } });
  });
});
