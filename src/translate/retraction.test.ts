import { readFileSync } from 'node:fs';
import { EventType, type Event, type Message } from '@ag-ui/core';
import { describe, expect, it } from 'vitest';
import type { MastraChunk } from './chunks.js';
import type { MastraDBMessage } from '@mastra/core/memory';
import { toAguiMessages } from './history.js';
import { beforeTerminal, blockedStep, cutStepMessage } from './retraction.js';
import { RunTranslator } from './run-translator.js';

const chunksOf = (name: string) =>
  (JSON.parse(readFileSync(new URL(`../../test/fixtures/chunks/${name}.json`, import.meta.url), 'utf8')) as { chunks: MastraChunk[] }).chunks;

describe('blockedStep', () => {
  it('names the stored message and the text of the step an output step processor blocked (recorded run)', () => {
    const chunks = chunksOf('tripwire-step');
    const finish = chunks.find((c) => c.type === 'finish') as MastraChunk;
    const streamed = chunks.flatMap((c) => (c.type === 'text-delta' ? [c.payload.text] : [])).join('');
    expect(blockedStep(finish)).toEqual({ messageId: (finish as { payload: { messageId: string } }).payload.messageId, text: streamed });
  });

  it('is none for a finish no processor tripped, a retried run, or any other chunk', () => {
    for (const name of ['echo', 'processor-retry', 'tripwire-stream']) for (const chunk of chunksOf(name)) expect(blockedStep(chunk)).toBeUndefined();
  });
});

describe('beforeTerminal', () => {
  const snapshot: Message[] = [{ id: 'u1', role: 'user', content: 'hi' }];
  it('puts the snapshot just before the terminal event', () => {
    const events: Event[] = [
      { type: EventType.STEP_FINISHED, stepName: 'step-1' },
      { type: EventType.RUN_ERROR, message: 'no', code: 'TRIPWIRE' },
    ];
    expect(beforeTerminal(events, snapshot).map((e) => e.type)).toEqual([EventType.STEP_FINISHED, EventType.MESSAGES_SNAPSHOT, EventType.RUN_ERROR]);
  });

  it('puts it before the run-end message that goes with the terminal event: the message stays on the list the snapshot sets', () => {
    const events = new RunTranslator({ threadId: 't', runId: 'r' }).fail('no', 'TRIPWIRE');
    expect(beforeTerminal(events, snapshot).map((e) => e.type)).toEqual([
      EventType.RUN_STARTED,
      EventType.MESSAGES_SNAPSHOT,
      EventType.ACTIVITY_SNAPSHOT,
      EventType.RUN_ERROR,
    ]);
  });

  it('appends it to a batch with no terminal event', () => {
    expect(beforeTerminal([], snapshot)).toEqual([{ type: EventType.MESSAGES_SNAPSHOT, messages: snapshot }]);
  });
});

describe('RunTranslator.cutStep and cutStepMessage', () => {
  const chunks = chunksOf('reasoning');
  const cutAt = (n: number) => {
    const translator = new RunTranslator({ threadId: 't', runId: 'r' });
    for (const chunk of chunks.slice(0, n)) translator.push(chunk);
    return translator.cutStep;
  };
  const messageId = (chunks.find((c) => c.type === 'step-start') as { payload: { messageId: string } }).payload.messageId;
  const reasoningAt = (n: number) =>
    chunks
      .slice(0, n)
      .flatMap((c) => (c.type === 'reasoning-delta' ? [c.payload.text] : []))
      .join('');

  it('is the reasoning the step in progress showed, under the step’s message id (recorded run, cut anywhere in it)', () => {
    expect(cutAt(2)).toBeUndefined();
    const inReasoning = chunks.findIndex((c) => c.type === 'reasoning-delta') + 2;
    expect(cutAt(inReasoning)).toEqual({ messageId, reasoning: [reasoningAt(inReasoning)] });
    const inText = chunks.findIndex((c) => c.type === 'text-delta') + 1;
    expect(cutAt(inText)).toEqual({ messageId, reasoning: [reasoningAt(inText)] });
  });

  it('is none once a step without reasoning began (the aborted echo)', () => {
    const translator = new RunTranslator({ threadId: 't', runId: 'r' });
    for (const chunk of chunksOf('aborted')) translator.push(chunk);
    expect(translator.cutStep).toBeUndefined();
  });

  const thread = { threadId: 't', resourceId: 'u' };
  const step = { messageId: 'm-live', reasoning: ['Let me think'] };

  it('gives the answer Mastra left the step’s id, its reasoning first', () => {
    const left = {
      id: 'm-new',
      role: 'assistant',
      createdAt: new Date(5),
      ...thread,
      content: { format: 2, parts: [{ type: 'text', text: 'Here ' }] },
    } as MastraDBMessage;
    const kept = cutStepMessage(step, left, thread);
    expect(kept).toMatchObject({
      id: 'm-live',
      createdAt: new Date(5),
      content: {
        parts: [
          { type: 'reasoning', reasoning: 'Let me think' },
          { type: 'text', text: 'Here ' },
        ],
      },
    });
    expect(toAguiMessages([kept]).map((m) => [m.id, m.role])).toEqual([
      ['m-live-reasoning', 'reasoning'],
      ['m-live', 'assistant'],
    ]);
  });

  it('stores the reasoning as a message of its own when Mastra left no answer', () => {
    const kept = cutStepMessage(step, undefined, thread);
    expect(toAguiMessages([kept])).toEqual([{ id: 'm-live-reasoning', role: 'reasoning', content: 'Let me think' }]);
  });
});
