import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import { z } from 'zod';
import { InMemoryStore } from '@mastra/core/storage';
import { describe, expect, it } from 'vitest';
import { createDemoAgent } from './agent.js';
import { createScriptedModel } from './scripted-model.js';

const prompt = (text: string, system = 'Answer the user.') => [
  { role: 'system', content: system },
  { role: 'user', content: [{ type: 'text', text }] },
];

const lookupTool = createTool({
  id: 'lookup',
  description: 'Looks a key up.',
  inputSchema: z.object({ key: z.string() }),
  execute: async ({ key }) => ({ value: key.toUpperCase() }),
});

async function answer(model: ReturnType<typeof createScriptedModel>, text: string, system?: string): Promise<string> {
  const { stream } = await model.doStream({ prompt: prompt(text, system) } as never);
  const reader = (stream as ReadableStream<{ type: string; delta?: string }>).getReader();
  let out = '';
  for (let r = await reader.read(); !r.done; r = await reader.read()) if (r.value.type === 'text-delta') out += r.value.delta;
  return out;
}

describe('createScriptedModel', () => {
  it('answers each call from its own prompt and keeps no call after it (a long-running demo server does not grow)', async () => {
    const model = createScriptedModel({ delayMs: 0 });
    for (let i = 0; i < 5; i++) expect(await answer(model, `hello ${i}`)).toBe(`Echo: hello ${i}`);
    expect(model.doStreamCalls).toHaveLength(0);
  });

  it("answers a processor's request for another try (Mastra's feedback in the system prompt) with a revision", async () => {
    const model = createScriptedModel({ delayMs: 0 });
    const feedback = 'Answer the user.\n[Processor Feedback] Your previous response was not accepted: too short. Please try again with the feedback in mind.';
    expect(await answer(model, 'a draft', feedback)).toBe('Revised: a draft');
    expect(await answer(model, 'a draft')).toBe('Echo: a draft');
  });

  it('answers generate() as it streams: an agent of your own, reasoning, and a tool call and its result', async () => {
    const mine = new Agent({ id: 'support', name: 'Support', instructions: 'Help the user.', model: createScriptedModel({ delayMs: 0 }) });
    expect((await mine.generate('hello there')).text).toBe('Echo: hello there');
    const thought = await mine.generate('think about tea');
    expect([thought.reasoningText, thought.text]).toEqual(['Let me think about that step by step.', 'Here is my answer to: think about tea']);
    const weather = await createDemoAgent({ delayMs: 0, storage: new InMemoryStore() }).generate('What is the weather in Lisbon?');
    expect(weather.toolCalls.map((c) => c.payload.toolName)).toEqual(['get_weather']);
    expect(weather.text).toMatch(/^The tool get_weather returned \{"city":"Lisbon"/);
    const model = createScriptedModel({ delayMs: 0 });
    await new Agent({ id: 'counted', name: 'Counted', instructions: '…', model }).generate('hi');
    expect(model.doGenerateCalls).toHaveLength(0);
  });

  it('rules of your own come first; a call a rule made without a reply is answered as the demo answers any tool', async () => {
    const model = createScriptedModel({
      delayMs: 0,
      rules: [
        { when: /tea/gi, say: (match) => `More ${match[0]}!` },
        { when: /^lookup (\w+)/i, call: { tool: 'lookup', args: (match) => ({ key: match[1] }) } },
      ],
    });
    // A global flag does not carry one call's position into the next.
    expect([await answer(model, 'tea'), await answer(model, 'Tea')]).toEqual(['More tea!', 'More Tea!']);
    expect(await answer(model, 'coffee')).toBe('Echo: coffee');
    const agent = new Agent({ id: 'looker', name: 'Looker', instructions: '…', model, tools: { lookup: lookupTool } });
    const looked = await agent.generate('lookup colour');
    expect(looked.toolCalls.map((c) => c.payload.args)).toEqual([{ key: 'colour' }]);
    expect(looked.text).toMatch(/^The tool lookup returned .*COLOUR/);
  });
});
