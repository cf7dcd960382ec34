import { readFileSync } from 'node:fs';
import { applyPatch } from 'fast-json-patch';
import { EventType, type Event } from '@ag-ui/core';
import { describe, expect, it } from 'vitest';
import type { MastraChunk } from './chunks.js';
import { RunTranslator } from './run-translator.js';
import { workflowActivityId, type WorkflowActivityContent } from './workflow-activity.js';

/**
 * A workflow the demo agent runs as a tool (`draft tea`), on the chunks recorded from the real run
 * (`scripts/record-fixtures.ts`: agent-workflow-suspend, then agent-workflow-resume): one activity
 * per call, built by its snapshot and deltas, carried across the suspension.
 */
const chunksOf = (name: string) =>
  (JSON.parse(readFileSync(new URL(`../../test/fixtures/chunks/${name}.json`, import.meta.url), 'utf8')) as { chunks: MastraChunk[] }).chunks;

function translate(name: string, workflowActivities?: Record<string, WorkflowActivityContent>) {
  const chunks = chunksOf(name);
  const translator = new RunTranslator({ threadId: 't', runId: 'r', workflowActivities });
  const events: Event[] = [...translator.start(), ...chunks.flatMap((chunk) => translator.push(chunk)), ...translator.end()];
  return { events, translator, toolCallId: chunks.find((c) => c.type === 'tool-output')!.payload.toolCallId };
}

/** What a client builds of the activity: the snapshot, then each delta applied in order. */
function built(events: Event[], messageId: string): unknown {
  let content: unknown;
  for (const event of events) {
    if (event.type === EventType.ACTIVITY_SNAPSHOT && event.messageId === messageId) content = structuredClone(event.content);
    if (event.type === EventType.ACTIVITY_DELTA && event.messageId === messageId) content = applyPatch(content, structuredClone(event.patch)).newDocument;
  }
  return content;
}

describe('a workflow run as an agent’s tool', () => {
  it('is one activity after the call ends: the steps up to the suspension, and what the translator keeps equals what the client built', () => {
    const { events, translator, toolCallId } = translate('agent-workflow-suspend');
    const types = events.map((e) => e.type);
    expect(types.indexOf(EventType.ACTIVITY_SNAPSHOT)).toBeGreaterThan(types.indexOf(EventType.TOOL_CALL_END));
    const content = built(events, workflowActivityId(toolCallId));
    expect(content).toEqual({
      workflowId: 'draft-and-send',
      status: 'suspended',
      steps: [
        { id: 'draft', status: 'success' },
        { id: 'review', status: 'suspended' },
      ],
    });
    expect(translator.workflowActivities).toEqual({ [toolCallId]: content });
  });

  it('resumed from what it showed, the steps before the suspension stay, and it ends before the call’s result', () => {
    const first = translate('agent-workflow-suspend');
    const { events, toolCallId } = translate('agent-workflow-resume', first.translator.workflowActivities);
    const types = events.map((e) => e.type);
    expect(types.lastIndexOf(EventType.ACTIVITY_DELTA)).toBeLessThan(types.indexOf(EventType.TOOL_CALL_RESULT));
    expect(built(events, workflowActivityId(toolCallId))).toEqual({
      workflowId: 'draft-and-send',
      status: 'success',
      steps: ['draft', 'review', 'send'].map((id) => ({ id, status: 'success' })),
    });
  });

  it('resumed with nothing kept, it shows the steps of this run', () => {
    const { events, toolCallId } = translate('agent-workflow-resume');
    expect(built(events, workflowActivityId(toolCallId))).toEqual({
      workflowId: 'draft-and-send',
      status: 'success',
      steps: [
        { id: 'review', status: 'success' },
        { id: 'send', status: 'success' },
      ],
    });
  });
});
