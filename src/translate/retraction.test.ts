import { readFileSync } from 'node:fs';
import { EventType, type Event, type Message } from '@ag-ui/core';
import { describe, expect, it } from 'vitest';
import type { MastraChunk } from './chunks.js';
import { beforeTerminal, blockedStep } from './retraction.js';

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

  it('appends it to a batch with no terminal event', () => {
    expect(beforeTerminal([], snapshot)).toEqual([{ type: EventType.MESSAGES_SNAPSHOT, messages: snapshot }]);
  });
});
