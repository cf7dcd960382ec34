import type { MastraDBMessage } from '@mastra/core/memory';
import type { InputProcessor, OutputProcessor } from '@mastra/core/processors';

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
