import { AgentCapabilitiesSchema } from '@ag-ui/core/schemas';
import { Agent } from '@mastra/core/agent';
import { BridgeAgent } from '../src/client/index.js';
import { describe, expect, it } from 'vitest';
import { createScriptedModel } from '../src/demo/scripted-model.js';
import { assistantText, runInput, runStrict, userMessage, uid } from './support/agui.js';
import { fixedTextModel } from './support/models.js';
import { http, startTestBridge, useTestBridge } from './support/server.js';

/** What the bridge does for any agent (AG-UI `AgentCapabilities`), apart from its identity. */
const BRIDGE_CAPABILITIES = {
  transport: { streaming: true, httpBinary: true, resumable: true },
  tools: { supported: true, clientProvided: true },
  reasoning: { supported: true, streaming: true },
  humanInTheLoop: { supported: true, approvals: true, interrupts: true },
};

const DEMO_INFO = {
  id: 'demo',
  name: 'Demo Agent',
  kind: 'agent',
  description: expect.any(String),
  model: { provider: 'demo', name: 'scripted' },
  default: true,
  // Its thread-scoped working memory is its state.
  capabilities: {
    identity: { name: 'Demo Agent', type: 'mastra', description: expect.any(String) },
    ...BRIDGE_CAPABILITIES,
    state: { snapshots: true, deltas: true, persistentState: true, memory: false },
    multiAgent: { supported: true, delegation: true, subagents: [{ name: 'researcher', description: 'Looks a topic up and reports its findings.' }] },
  },
};
const OTHER_INFO = {
  id: 'other',
  name: 'Other Agent',
  kind: 'agent',
  model: { provider: 'test', name: 'fixed' },
  default: false,
  capabilities: { identity: { name: 'Other Agent', type: 'mastra' }, ...BRIDGE_CAPABILITIES },
};

/** An agent registered under a key ('other-key') that differs from its id ('other'); it has no memory. */
const otherAgent = () =>
  new Agent({ id: 'other', name: 'Other Agent', instructions: 'x', model: fixedTextModel('Other agent here.', { provider: 'test', modelId: 'fixed' }) });

describe('GET /agents', () => {
  const b = useTestBridge({ agents: () => ({ 'other-key': otherAgent() }) });

  it('lists every registered agent with its public description', async () => {
    const res = await http(`${b.base}/agents`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual([DEMO_INFO, OTHER_INFO]);
    // AG-UI's own schema takes each agent's capabilities as they are (strict: no key it lacks).
    for (const agent of res.body) expect(AgentCapabilitiesSchema.strict().parse(agent.capabilities)).toEqual(agent.capabilities);
    expect(res.body[0].description.length).toBeGreaterThan(0);
    // No description configured: the key is left out, not sent as null or ''.
    expect(res.body[1]).not.toHaveProperty('description');
  });

  it('GET /agents/demo answers the same AgentInfo', async () => {
    const res = await http(`${b.base}/agents/demo`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(DEMO_INFO);
  });

  it('BridgeAgent.getCapabilities() answers the named agent’s, or the default agent’s when none is named', async () => {
    const named = new BridgeAgent({ baseUrl: b.base, agentId: 'other-key', resourceId: 'caps-user' });
    expect(await named.getCapabilities()).toEqual(OTHER_INFO.capabilities);
    const unnamed = new BridgeAgent({ baseUrl: b.base, resourceId: 'caps-user' });
    expect(await unnamed.getCapabilities()).toEqual(DEMO_INFO.capabilities);
    await expect(new BridgeAgent({ baseUrl: b.base, agentId: 'nope' }).getCapabilities()).rejects.toMatchObject({ status: 404, code: 'AGENT_NOT_FOUND' });
  });

  it('finds an agent by its id and by its registration key when they differ', async () => {
    const byId = await http(`${b.base}/agents/other`);
    const byKey = await http(`${b.base}/agents/other-key`);
    expect(byId.status).toBe(200);
    expect(byKey.status).toBe(200);
    expect(byId.body.id).toBe('other');
    expect(byKey.body).toEqual(byId.body);
  });

  it('an unknown agent is 404 AGENT_NOT_FOUND with the error body shape', async () => {
    const res = await http(`${b.base}/agents/nope`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({ error: expect.stringContaining('nope'), code: 'AGENT_NOT_FOUND' });
  });

  it('an agent id in the path is URL-decoded', async () => {
    const res = await http(`${b.base}/agents/${encodeURIComponent('other-key')}`);
    expect(res.body.id).toBe('other');
    const missing = await http(`${b.base}/agents/${encodeURIComponent('a b/c')}`);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('AGENT_NOT_FOUND');
  });

  it('/run picks the agent named in forwardedProps.agentId, by id or by key', async () => {
    for (const agentId of ['other', 'other-key']) {
      const run = await runStrict(`${b.base}/run`, runInput({ messages: [userMessage('hello')], forwardedProps: { agentId } }));
      expect(assistantText(run.events)).toBe('Other agent here.');
    }
    const demo = await runStrict(`${b.base}/run`, runInput({ messages: [userMessage('hello')], forwardedProps: { agentId: 'demo' } }));
    expect(assistantText(demo.events)).toBe('Echo: hello');
  });

  it('/run with an unknown agent is 404 AGENT_NOT_FOUND before any stream opens', async () => {
    const res = await http(`${b.base}/run`, { body: runInput({ messages: [userMessage('hello')], forwardedProps: { agentId: 'nope' } }) });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: expect.any(String), code: 'AGENT_NOT_FOUND' });
  });

  it('without agentId or defaultAgentId, the first registered agent answers', async () => {
    const run = await runStrict(`${b.base}/run`, runInput({ messages: [userMessage('hello')] }));
    expect(assistantText(run.events)).toBe('Echo: hello');
  });
});

describe('defaultAgentId', () => {
  const b = useTestBridge({ config: { defaultAgentId: 'other' }, agents: () => ({ 'other-key': otherAgent() }) });

  it('/run without agentId uses the configured default, not the first agent', async () => {
    const run = await runStrict(`${b.base}/run`, runInput({ messages: [userMessage('hello')] }));
    expect(assistantText(run.events)).toBe('Other agent here.');
  });

  it('an explicit agentId still wins over the default', async () => {
    const run = await runStrict(`${b.base}/run`, runInput({ messages: [userMessage('hello')], forwardedProps: { agentId: 'demo' } }));
    expect(assistantText(run.events)).toBe('Echo: hello');
  });

  it('thread routes without agentId use the default agent too (here: it has no memory)', async () => {
    const res = await http(`${b.base}/threads?resourceId=${uid('r')}`);
    expect(res.status).toBe(500);
    expect(res.body.code).toBe('MEMORY_NOT_CONFIGURED');
    const withDemo = await http(`${b.base}/threads?resourceId=${uid('r')}&agentId=demo`);
    expect(withDemo.status).toBe(200);
    expect(withDemo.body).toEqual([]);
  });

  it('a default given by registration key is found as well', async () => {
    const keyed = await startTestBridge({ config: { defaultAgentId: 'other-key' }, agents: () => ({ 'other-key': otherAgent() }) });
    try {
      const run = await runStrict(`${keyed.base}/run`, runInput({ messages: [userMessage('hello')] }));
      expect(assistantText(run.events)).toBe('Other agent here.');
    } finally {
      await keyed.close();
    }
  });

  it('a default that names no agent is 404 AGENT_NOT_FOUND on /run', async () => {
    const bad = await startTestBridge({ config: { defaultAgentId: 'ghost' } });
    try {
      const res = await http(`${bad.base}/run`, { body: runInput({ messages: [userMessage('hello')] }) });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('AGENT_NOT_FOUND');
      // Listing is unaffected by the default.
      expect((await http(`${bad.base}/agents`)).body.map((a: { id: string }) => a.id)).toEqual(['demo']);
    } finally {
      await bad.close();
    }
  });
});

describe('an agent without memory', () => {
  const b = useTestBridge({
    withDemo: false,
    agents: () => ({ nomem: new Agent({ id: 'nomem', name: 'No Memory', instructions: 'x', model: createScriptedModel({ delayMs: 0 }) }) }),
  });

  it('is listed, and a scripted no-memory agent built from createScriptedModel reports its model', async () => {
    expect((await http(`${b.base}/agents`)).body).toEqual([
      {
        id: 'nomem',
        name: 'No Memory',
        kind: 'agent',
        model: { provider: 'demo', name: 'scripted' },
        default: true,
        capabilities: { identity: { name: 'No Memory', type: 'mastra' }, ...BRIDGE_CAPABILITIES },
      },
    ]);
  });
});
