import { describe, expect, it } from 'vitest';
import { createScriptedModel } from './scripted-model.js';

const prompt = (text: string, system = 'Answer the user.') => [
  { role: 'system', content: system },
  { role: 'user', content: [{ type: 'text', text }] },
];

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

  it('answers a processor\'s request for another try (Mastra\'s feedback in the system prompt) with a revision', async () => {
    const model = createScriptedModel({ delayMs: 0 });
    const feedback = 'Answer the user.\n[Processor Feedback] Your previous response was not accepted: too short. Please try again with the feedback in mind.';
    expect(await answer(model, 'a draft', feedback)).toBe('Revised: a draft');
    expect(await answer(model, 'a draft')).toBe('Echo: a draft');
  });
});
