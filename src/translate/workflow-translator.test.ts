import { readdirSync, readFileSync } from 'node:fs';
import { enforceEvents, transformChunks, verifyEvents, type BaseEvent } from '@ag-ui/client';
import { EventType, type Event } from '@ag-ui/core';
import { EventSchemas } from '@ag-ui/core/schemas';
import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { parseWorkflowInterruptId, workflowInterruptId } from './ids.js';
import { answerText, WorkflowTranslator, type WorkflowResult } from './workflow-translator.js';

/**
 * The workflow translator on chunk sequences recorded from REAL Mastra workflow runs
 * (`scripts/record-fixtures.ts`, `test/fixtures/workflow-chunks/`): each run's chunks, then the
 * result Mastra gave for it. Expected values are read from the recordings.
 */

interface WorkflowFixture {
  scenario: string;
  chunks: Array<{ type: string; runId?: string; payload?: Record<string, any> }>;
  result: WorkflowResult & Record<string, any>;
}

const FIXTURE_DIR = new URL('../../test/fixtures/workflow-chunks/', import.meta.url);
const NAMES = readdirSync(FIXTURE_DIR)
  .filter((file) => file.endsWith('.json'))
  .map((file) => file.slice(0, -'.json'.length));

const fixture = (name: string): WorkflowFixture => JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURE_DIR), 'utf8')) as WorkflowFixture;

const RESUME_SCHEMA = { type: 'object', properties: { approved: { type: 'boolean' } }, required: ['approved'] };

function translate(name: string) {
  const f = fixture(name);
  const mastraRunId = f.chunks[0]?.runId ?? 'mastra-run';
  const translator = new WorkflowTranslator({
    threadId: 'thread-1',
    runId: 'run-1',
    workflowId: 'wf',
    mastraRunId,
    messageIdBase: 'm-1',
    stepFacts: (path) => (path.at(-1) === 'review' ? { responseSchema: RESUME_SCHEMA, description: 'Waits for a person' } : {}),
  });
  const events: Event[] = [...translator.start()];
  for (const chunk of f.chunks) events.push(...translator.chunk(chunk));
  events.push(...translator.end(f.result));
  return { f, events, translator, mastraRunId };
}

/** Through `@ag-ui/client`'s own pipeline: it throws on any event out of order. */
async function verified(events: Event[]): Promise<BaseEvent[]> {
  for (const event of events) EventSchemas.parse(event);
  return lastValueFrom(from(events as BaseEvent[]).pipe(enforceEvents(), transformChunks(), verifyEvents(), toArray()));
}

const ofType = <T extends EventType>(events: Event[], type: T) => events.filter((e): e is Extract<Event, { type: T }> => e.type === type);

describe('every recorded workflow run', () => {
  it.each(NAMES)('%s: a valid AG-UI run, every step it started finished, one terminal event last', async (name) => {
    const { events, f } = translate(name);
    await verified(events);
    expect(events[0].type).toBe(EventType.RUN_STARTED);
    expect(events.filter((e) => e.type === EventType.RUN_FINISHED || e.type === EventType.RUN_ERROR)).toEqual([events.at(-1)]);
    const started = ofType(events, EventType.STEP_STARTED).map((e) => e.stepName);
    const finished = ofType(events, EventType.STEP_FINISHED).map((e) => e.stepName);
    expect([...finished].sort()).toEqual([...started].sort());
    // One bracket per step start (or a sleep's wait) Mastra reported.
    expect(started).toEqual(f.chunks.filter((c) => c.type === 'workflow-step-start' || c.type === 'workflow-step-waiting').map((c) => c.payload!.id));
  });
});

describe('suspend and resume', () => {
  it('a suspended step is an interrupt: its id names the Mastra run and the step; its payload, resume schema and description', () => {
    const { events, mastraRunId } = translate('workflow-suspend');
    const end = events.at(-1) as Extract<Event, { type: EventType.RUN_FINISHED }>;
    expect(end.outcome).toEqual({
      type: 'interrupt',
      interrupts: [
        {
          id: `${mastraRunId}::review`,
          reason: 'workflow_suspended',
          message: 'Waits for a person.',
          responseSchema: RESUME_SCHEMA,
          metadata: { workflowId: 'wf', stepId: 'review', suspendPayload: { draft: 'Draft about tea.' } },
        },
      ],
    });
    // The step's text: one message, closed with its step.
    const texts = ofType(events, EventType.TEXT_MESSAGE_CONTENT);
    expect(texts.map((e) => e.delta)).toEqual(['Draft about tea.']);
  });

  it('a resumed run ends with the answer as one message and the result on RUN_FINISHED; custom writes are CUSTOM', () => {
    const { events, f, translator } = translate('workflow-resume');
    expect(f.result.status).toBe('success');
    const end = events.at(-1) as Extract<Event, { type: EventType.RUN_FINISHED }>;
    expect(end.result).toEqual(f.result.result);
    expect(ofType(events, EventType.TEXT_MESSAGE_CONTENT).map((e) => e.delta)).toEqual([(f.result.result as { text: string }).text]);
    const written = f.chunks.filter((c) => c.type === 'workflow-step-output').map((c) => c.payload!.output);
    expect(ofType(events, EventType.CUSTOM).map((e) => [e.name, e.value])).toEqual(written.map((output) => [output.type, output]));
    expect(translator.messages).toEqual([{ id: 'm-1-answer', text: 'Sent: Tea, edited.' }]);
  });

  it('a nested workflow’s steps are named by their path, and so is its suspended step', () => {
    const { events, mastraRunId } = translate('workflow-shapes');
    const names = ofType(events, EventType.STEP_STARTED).map((e) => e.stepName);
    expect(names).toContain('draft-and-send.review');
    const end = events.at(-1) as Extract<Event, { type: EventType.RUN_FINISHED }>;
    expect(end.outcome).toMatchObject({
      interrupts: [
        { id: `${mastraRunId}::draft-and-send.review`, metadata: { stepId: 'draft-and-send.review', suspendPayload: { draft: 'Draft about tea.' } } },
      ],
    });
  });
});

describe('loops', () => {
  it('a foreach reports its progress as CUSTOM, a dountil loop opens its step once per pass, a sleep is a step of its own', () => {
    const { events, f } = translate('workflow-loops');
    const started = ofType(events, EventType.STEP_STARTED).map((e) => e.stepName);
    expect(started.slice(0, 5)).toEqual(['split', 'shout', 'count', 'up', 'up']);
    expect(started[5]).toMatch(/^sleep_/);
    const progress = f.chunks.filter((c) => c.type === 'workflow-step-progress').map((c) => c.payload);
    expect(progress).toHaveLength(2);
    expect(ofType(events, EventType.CUSTOM).map((e) => [e.name, e.value])).toEqual(progress.map((p) => ['workflow-step-progress', p]));
    const at = (type: EventType, name: string) => events.findIndex((e) => e.type === type && (e as { stepName?: string }).stepName === name);
    // The progress shows inside the foreach step's bracket (docs/workflows.md "Step names").
    const customAt = events.flatMap((e, i) => (e.type === EventType.CUSTOM ? [i] : []));
    for (const i of customAt) {
      expect(i).toBeGreaterThan(at(EventType.STEP_STARTED, 'shout'));
      expect(i).toBeLessThan(at(EventType.STEP_FINISHED, 'shout'));
    }
    // The sleep's step stays open while it waits: its STEP_FINISHED comes with Mastra's result of it.
    expect(at(EventType.STEP_FINISHED, started[5])).toBeGreaterThan(at(EventType.STEP_STARTED, started[5]));
  });
});

describe('other ends', () => {
  it('a failed run is RUN_ERROR WORKFLOW_FAILED with the error’s message', () => {
    const { events, f } = translate('workflow-fail');
    expect(events.at(-1)).toEqual({ type: EventType.RUN_ERROR, code: 'WORKFLOW_FAILED', message: (f.result.error as { message: string }).message });
  });

  it('a cancelled run ends cancelled', () => {
    const { events } = translate('workflow-cancel');
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } });
  });

  it('an agent step’s text streams as one message; its other chunks are the agent’s own', () => {
    const { events, f, translator } = translate('workflow-agent-step');
    const agentText = f.chunks
      .filter((c) => c.type === 'workflow-step-output' && c.payload!.output.type === 'text-delta')
      .map((c) => c.payload!.output.payload.text)
      .join('');
    expect(agentText.length).toBeGreaterThan(0);
    expect(translator.messages.map((m) => m.text)).toEqual([agentText, answerText(f.result.result)]);
    expect(ofType(events, EventType.CUSTOM)).toEqual([]);
  });

  it('a cut run closes what it opened and ends cancelled; nothing follows a terminal event', async () => {
    const f = fixture('workflow-suspend');
    const t = new WorkflowTranslator({ threadId: 't', runId: 'r', workflowId: 'wf', mastraRunId: 'm', messageIdBase: 'm-1', stepFacts: () => ({}) });
    const events = [...t.start(), ...f.chunks.slice(0, 3).flatMap((c) => t.chunk(c)), ...t.cancelled()];
    await verified(events);
    expect(events.slice(-3).map((e) => e.type)).toEqual([EventType.TEXT_MESSAGE_END, EventType.STEP_FINISHED, EventType.RUN_FINISHED]);
    expect([...t.chunk(f.chunks[3]), ...t.end(f.result), ...t.broke(new Error('late'), 'X')]).toEqual([]);
  });
});

describe('values', () => {
  it('the answer: a string as it is, else its text field, else JSON', () => {
    expect(answerText('done')).toBe('done');
    expect(answerText({ text: 'Sent.', other: 1 })).toBe('Sent.');
    expect(answerText({ n: 1 })).toBe('{"n":1}');
    expect(answerText(undefined)).toBe('');
  });

  it('interrupt ids round-trip; anything else is not one', () => {
    expect(parseWorkflowInterruptId(workflowInterruptId('run-1', ['outer', 'review']))).toEqual({ mastraRunId: 'run-1', stepPath: ['outer', 'review'] });
    expect(parseWorkflowInterruptId('no-separator')).toBeUndefined();
    expect(parseWorkflowInterruptId('::review')).toBeUndefined();
    expect(parseWorkflowInterruptId('run-1::')).toBeUndefined();
  });
});
