import { readFileSync } from 'node:fs';
import { EventType, type Event } from '@ag-ui/core';
import { describe, expect, it } from 'vitest';
import type { MastraChunk } from './chunks.js';
import { closeRun } from './close-run.js';
import { RunTranslator } from './run-translator.js';

const lost = { error: { code: 'UNAVAILABLE', message: 'lost' } };

/** Chunk sequences recorded from real demo runs (`scripts/record-fixtures.ts`): reasoning, text, a server tool's call and result, steps. */
const recorded = (name: string) =>
  (JSON.parse(readFileSync(new URL(`../../test/fixtures/chunks/${name}.json`, import.meta.url), 'utf8')) as { chunks: MastraChunk[] }).chunks;

describe('closeRun: the end of a cut run, from its events', () => {
  it.each(['reasoning', 'server-tool', 'echo'])('closes what a recorded run (%s) left open, cut after any chunk, as its translator would', (name) => {
    const chunks = recorded(name);
    for (let cut = 1; cut < chunks.length; cut++) {
      const translator = new RunTranslator({ threadId: 't', runId: 'r1' });
      const events: Event[] = [...translator.start(), ...chunks.slice(0, cut).flatMap((chunk) => translator.push(chunk))];
      if (events.some((e) => e.type === EventType.RUN_FINISHED || e.type === EventType.RUN_ERROR)) break;
      // Without the run-end message: a lost run's end is not kept (recovery answers its input again).
      const failed = translator.fail('lost', 'UNAVAILABLE').filter((e) => e.type !== EventType.ACTIVITY_SNAPSHOT);
      expect(closeRun(events, lost), `cut after chunk ${cut} (${chunks[cut - 1].type})`).toEqual(failed);
    }
  });

  it('ends a run with nothing open with its terminal event alone: RUN_FINISHED names the run', () => {
    const events: Event[] = [
      { type: EventType.RUN_STARTED, threadId: 't', runId: 'r1' },
      { type: EventType.TEXT_MESSAGE_START, messageId: 'm', role: 'assistant' },
      { type: EventType.TEXT_MESSAGE_END, messageId: 'm' },
    ];
    expect(closeRun(events, { finished: true })).toEqual([{ type: EventType.RUN_FINISHED, threadId: 't', runId: 'r1' }]);
  });

  it('closes nothing when no run is open', () => {
    expect(closeRun([], lost)).toEqual([]);
    expect(closeRun([{ type: EventType.TEXT_MESSAGE_END, messageId: 'm' }], lost)).toEqual([]);
  });
});
