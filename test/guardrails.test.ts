import { describe, expect, it } from 'vitest';
import { createGuardedAgent } from '../src/demo/guardrails.js';
import { runInput, runStrict, uid, userMessage } from './support/agui.js';
import { useTestBridge } from './support/server.js';

// Real Mastra processors behind the bridge: a guardrail that stops a run ends it with
// RUN_ERROR TRIPWIRE, its reason, and which processor said what (`metadata`).

const b = useTestBridge({ delayMs: 0, agents: (storage) => ({ guarded: createGuardedAgent(storage) }) });

const ask = (content: string) =>
  runStrict(`${b.base}/run`, runInput({ threadId: uid('guarded'), messages: [userMessage(content)], forwardedProps: { resourceId: 'guard-user', agentId: 'guarded' } }));

describe('a guardrail that stops a run', () => {
  it('an input processor: RUN_ERROR TRIPWIRE before any answer, with the processor and its metadata', async () => {
    const run = await ask('tell me about the forbidden zone');
    expect(run.events.map((e) => e.type)).not.toContain('TEXT_MESSAGE_START');
    expect(run.events.at(-1)).toEqual({
      type: 'RUN_ERROR',
      message: 'The message names a forbidden topic',
      code: 'TRIPWIRE',
      metadata: { processorId: 'block-forbidden-input', processorMetadata: { category: 'policy' } },
    });
  });

  it('an output step processor: the run that streamed the blocked answer ends RUN_ERROR TRIPWIRE, never RUN_FINISHED', async () => {
    const run = await ask('what is the secret');
    expect(run.events.map((e) => e.type)).not.toContain('RUN_FINISHED');
    expect(run.events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'TRIPWIRE', metadata: { processorId: 'block-secret-answers', processorMetadata: { category: 'pii' } } });
  });

  it('a run the guardrails let through finishes as usual', async () => {
    const run = await ask('hello there');
    expect(run.events.at(-1)?.type).toBe('RUN_FINISHED');
  });
});
