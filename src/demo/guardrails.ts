import { Agent } from '@mastra/core/agent';
import type { MastraDBMessage } from '@mastra/core/memory';
import type { InputProcessor, OutputProcessor } from '@mastra/core/processors';
import type { MastraStorage } from '@mastra/core/storage';
import { Memory } from '@mastra/memory';
import { createScriptedModel } from './scripted-model.js';

/** The text of the latest user message, as a processor sees the messages. */
function latestUserText(messages: MastraDBMessage[]): string {
  const last = messages.findLast((m) => m.role === 'user');
  return last?.content.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join(' ') ?? '';
}

/**
 * Two real guardrails for tests and fixtures: an input processor that blocks a message naming
 * `forbidden` (`{ category: 'policy' }`) before the model runs, and an output step processor that
 * blocks an answer naming `secret` (`{ category: 'pii' }`) after it streamed.
 *
 * @example
 * const guarded = new Agent({ …, inputProcessors: [blockForbiddenInput], outputProcessors: [blockSecretAnswers] });
 */
export const blockForbiddenInput: InputProcessor = {
  id: 'block-forbidden-input',
  processInput: ({ messages, abort }) => {
    if (/\bforbidden\b/i.test(latestUserText(messages))) abort('The message names a forbidden topic', { metadata: { category: 'policy' } });
    return messages;
  },
};

export const blockSecretAnswers: OutputProcessor = {
  id: 'block-secret-answers',
  processOutputStep: ({ text, messages, abort }) => {
    if (/\bsecret\b/i.test(text ?? '')) abort('The answer contains personal data', { metadata: { category: 'pii' } });
    return messages;
  },
};

/**
 * An output stream processor that drops every streamed word `darn` (a text delta of that word) and
 * says so with a custom data chunk, `data-moderation { dropped: <word> }`.
 */
export const dropMildSwearing: OutputProcessor = {
  id: 'drop-mild-swearing',
  processOutputStream: async ({ part, writer }) => {
    if (part.type !== 'text-delta' || !/^darn\b/i.test(part.payload.text.trim())) return part;
    await writer?.custom({ type: 'data-moderation', data: { dropped: part.payload.text.trim() } });
    return null;
  },
};

/**
 * The scripted model with memory behind the guardrails: agent `guarded`.
 *
 * @example
 * const guarded = createGuardedAgent(storage);
 * const mastra = new Mastra({ agents: { guarded }, storage });
 */
export function createGuardedAgent(storage: MastraStorage): Agent {
  return new Agent({
    id: 'guarded',
    name: 'Guarded',
    instructions: 'Answer the user.',
    model: createScriptedModel({ delayMs: 0 }),
    memory: new Memory({ storage }),
    inputProcessors: [blockForbiddenInput],
    outputProcessors: [blockSecretAnswers, dropMildSwearing],
  });
}
