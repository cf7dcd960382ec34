import type { BaseEvent } from '@ag-ui/client';
import { describe, expect, it } from 'vitest';
import { createGuardedAgent } from '../src/demo/guardrails.js';
import { runInput, runStrict, uid, userMessage } from './support/agui.js';
import { http, useTestBridge } from './support/server.js';

// Real Mastra processors behind the bridge: a guardrail that stops a run ends it with
// RUN_ERROR TRIPWIRE, its reason, and which processor said what (`metadata`); a stream processor
// that drops chunks and writes its own (`writer.custom`) reaches the client as it shaped them.

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

  it('an output stream processor that drops a word: the client gets the answer without it, and its custom chunk; history holds what the client built', async () => {
    const threadId = uid('guarded');
    const run = await runStrict(`${b.base}/run`, runInput({ threadId, messages: [userMessage('say darn it')], forwardedProps: { resourceId: 'guard-user', agentId: 'guarded' } }));
    expect(run.events.find((e) => e.type === 'CUSTOM')).toEqual({ type: 'CUSTOM', name: 'data-moderation', value: { dropped: 'darn' } });
    const events = run.events as Array<BaseEvent & { messageId?: string; delta?: string }>;
    const start = events.find((e) => e.type === 'TEXT_MESSAGE_START');
    const text = events.flatMap((e) => (e.type === 'TEXT_MESSAGE_CONTENT' ? [e.delta] : [])).join('');
    expect(text).toBe('Echo: say it');
    const history = await http(`${b.base}/threads/${threadId}/messages?resourceId=guard-user&agentId=guarded&format=agui`);
    expect(history.body.at(-1)).toEqual({ id: start?.messageId, role: 'assistant', content: 'Echo: say it' });
    expect(run.events.at(-1)?.type).toBe('RUN_FINISHED');
  });

  it('a run the guardrails let through finishes as usual', async () => {
    const run = await ask('hello there');
    expect(run.events.at(-1)?.type).toBe('RUN_FINISHED');
  });
});
