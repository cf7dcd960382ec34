import { Agent } from '@mastra/core/agent';
import type { MastraDBMessage } from '@mastra/core/memory';
import type { ErrorProcessor, InputProcessor, OutputProcessor } from '@mastra/core/processors';
import type { MastraStorage } from '@mastra/core/storage';
import { Memory } from '@mastra/memory';
import { createScriptedModel } from './scripted-model.js';

/** The text of the latest user message, as a processor sees the messages. */
function latestUserText(messages: MastraDBMessage[]): string {
  const last = messages.findLast((m) => m.role === 'user');
  return last?.content.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join(' ') ?? '';
}

/**
 * Real guardrails for tests and fixtures: an input processor that blocks a message naming
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
 * An output step processor that turns down the first attempt at an answer saying `draft` and asks
 * the model for another (`abort(…, { retry: true })`): Mastra runs the step again with the reason in
 * the prompt (the scripted model then answers `Revised: <input>`) and keeps only the new attempt.
 */
export const retryDrafts: OutputProcessor = {
  id: 'retry-drafts',
  processOutputStep: ({ text, messages, abort, retryCount }) => {
    if (retryCount === 0 && /\bdraft\b/i.test(text ?? '')) abort('The answer reads like a draft', { retry: true, metadata: { rule: 'no-drafts' } });
    return messages;
  },
};

/**
 * An output stream processor that stops the run at the first streamed word `classified`
 * (`{ category: 'classified' }`): what streamed before it reached the client, nothing is stored.
 */
export const stopClassifiedStream: OutputProcessor = {
  id: 'stop-classified-stream',
  processOutputStream: async ({ part, abort }) => {
    if (part.type === 'text-delta' && /classified/i.test(part.payload.text))
      abort('The answer names classified material', { metadata: { category: 'classified' } });
    return part;
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
 * An error processor that tells the client why the model call failed, with a custom data chunk
 * (`data-model-failure { message }`), and lets the failure stand.
 */
export const reportModelFailure: ErrorProcessor = {
  id: 'report-model-failure',
  processAPIError: async ({ error, writer }) => {
    await writer?.custom({ type: 'data-model-failure', data: { message: error instanceof Error ? error.message : String(error) } });
  },
};

/**
 * The scripted model with memory behind the guardrails above: agent `guarded`, one retry allowed.
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
    outputProcessors: [blockSecretAnswers, retryDrafts, stopClassifiedStream, dropMildSwearing],
    errorProcessors: [reportModelFailure],
    maxProcessorRetries: 1,
  });
}
