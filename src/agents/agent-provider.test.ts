import 'reflect-metadata';
import { Mastra } from '@mastra/core';
import { Agent } from '@mastra/core/agent';
import { InMemoryStore } from '@mastra/core/storage';
import { Memory } from '@mastra/memory';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../config.js';
import { createScriptedModel } from '../demo/index.js';
import { AgentProvider } from './agent-provider.js';

const storage = new InMemoryStore();
const agent = (id: string, withMemory = true) =>
  new Agent({ id, name: id, instructions: 'answer', model: createScriptedModel(), ...(withMemory && { memory: new Memory({ storage }) }) });

describe('AgentProvider.withMemory', () => {
  it("resolves an agent's memory once, and again once that agent is taken out of Mastra", async () => {
    const first = agent('first');
    const mastra = new Mastra({ agents: { first, second: agent('second') }, storage, logger: false });
    const provider = new AgentProvider(mastra, resolveConfig());
    let resolved = 0;
    const getMemory = first.getMemory.bind(first);
    first.getMemory = (...args) => (resolved++, getMemory(...args));

    const once = await provider.withMemory();
    expect(once.agent).toBe(first);
    expect(await provider.withMemory()).toBe(once);
    expect(resolved).toBe(1);

    mastra.removeAgent('first');
    expect((await provider.withMemory()).agent.id).toBe('second');
  });

  it('keeps no refusal: an agent added after one was asked for is found', async () => {
    const mastra = new Mastra({ agents: { bare: agent('bare', false) }, storage, logger: false });
    const provider = new AgentProvider(mastra, resolveConfig());
    await expect(provider.withMemory()).rejects.toMatchObject({ code: 'MEMORY_NOT_CONFIGURED' });
    await expect(provider.withMemory('late')).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });

    mastra.addAgent(agent('late'));
    expect((await provider.withMemory('late')).agent.id).toBe('late');
    expect((await provider.withMemory()).agent.id).toBe('late');
  });
});
