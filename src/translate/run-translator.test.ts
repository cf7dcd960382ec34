import { readdirSync, readFileSync } from 'node:fs';
import { enforceEvents, transformChunks, verifyEvents, type BaseEvent } from '@ag-ui/client';
import { EventType, type Event } from '@ag-ui/core';
import { EventSchemas } from '@ag-ui/core/schemas';
import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { CAPTURED_TOOL_RESULTS, isSignalEcho, type CapturedToolResult, type MastraChunk, type SignalEchoChunk } from './chunks.js';
import { TOOL_RESULT_PREFIX } from './ids.js';
import { RunTranslator, type RunTranslatorOptions } from './run-translator.js';

/**
 * Translator tests driven by the chunk fixtures recorded from REAL demo-agent runs
 * (`scripts/record-fixtures.ts`). Expected values are read from the fixture's own chunks wherever
 * possible; the few hand-written chunks live in the `synthetic` block at the end, each for a case
 * no recorded run produces.
 */

// ── fixtures ──────────────────────────────────────────────────────────

interface ChunkFixture {
  scenario: string;
  description: string;
  source: 'stream' | 'subscription';
  chunks: MastraChunk[];
}

const FIXTURE_DIR = new URL('../../test/fixtures/chunks/', import.meta.url);
const FIXTURE_NAMES = readdirSync(FIXTURE_DIR)
  .filter((file) => file.endsWith('.json'))
  .map((file) => file.slice(0, -'.json'.length))
  .sort();

function fixture(name: string): ChunkFixture {
  return JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURE_DIR), 'utf8')) as ChunkFixture;
}

type ChunkOf<T extends MastraChunk['type']> = Extract<MastraChunk, { type: T }>;

function chunksOf<T extends MastraChunk['type']>(chunks: MastraChunk[], type: T): Array<ChunkOf<T>> {
  return chunks.filter((c): c is ChunkOf<T> => c.type === type);
}

function firstChunk<T extends MastraChunk['type']>(chunks: MastraChunk[], type: T): ChunkOf<T> {
  const found = chunksOf(chunks, type)[0];
  if (!found) throw new Error(`fixture has no ${type} chunk`);
  return found;
}

/** Signal echoes (`data-user-message`, `data-signal`), which Mastra's chunk union does not list. */
function echoesOf(chunks: MastraChunk[], type: SignalEchoChunk['type']): SignalEchoChunk[] {
  return chunks.filter((c): c is SignalEchoChunk => isSignalEcho(c) && c.type === type);
}

/** The text a run streamed, straight from its chunks. */
const deltaText = (chunks: MastraChunk[], type: 'text-delta' | 'reasoning-delta') =>
  chunksOf(chunks, type)
    .map((c) => c.payload.text)
    .join('');

/** The Mastra run a chunk belongs to (background-task chunks carry it in the payload only). */
function chunkRunId(chunk: MastraChunk): string | undefined {
  if ('runId' in chunk && typeof chunk.runId === 'string') return chunk.runId;
  const payload = 'payload' in chunk ? (chunk.payload as { runId?: unknown } | undefined) : undefined;
  return typeof payload?.runId === 'string' ? payload.runId : undefined;
}

/** Splits a chunk sequence into Mastra runs: a `start` chunk or a new run id opens the next one. */
function splitRuns(chunks: MastraChunk[]): Array<{ runId: string; chunks: MastraChunk[] }> {
  const runs: Array<{ runId: string | undefined; chunks: MastraChunk[] }> = [];
  for (const chunk of chunks) {
    const runId = chunkRunId(chunk);
    const current = runs[runs.length - 1];
    const opensRun = !current || (chunk.type === 'start' && current.chunks.length > 0) || (runId && current.runId && runId !== current.runId);
    if (opensRun) runs.push({ runId, chunks: [chunk] });
    else {
      current.runId ??= runId;
      current.chunks.push(chunk);
    }
  }
  return runs.map((run) => ({ runId: run.runId ?? 'r', chunks: run.chunks }));
}

/** Splits a run at its `tool-call-approval`: the thread hub brackets the approved continuation as a new run. */
function splitAtApproval(chunks: MastraChunk[]): MastraChunk[][] {
  const at = chunks.findIndex((c) => c.type === 'tool-call-approval');
  return at < 0 ? [chunks] : [chunks.slice(0, at + 1), chunks.slice(at + 1)];
}

// ── translating ───────────────────────────────────────────────────────

const IDS = { threadId: 't', runId: 'r' };

/** A `finish` whose step a processor tripped. */
function isTrippedFinish(chunk: MastraChunk): boolean {
  return chunk.type === 'finish' && (chunk.payload as { stepResult?: { reason?: unknown } }).stepResult?.reason === 'tripwire';
}

function translate(chunks: MastraChunk[], options: Partial<RunTranslatorOptions> = {}): Event[] {
  const t = new RunTranslator({ ...IDS, ...options });
  return [...t.start(), ...chunks.flatMap((c) => t.push(c)), ...t.end()];
}

/** The chunks with the captured tool outcomes passed in before every step end, as `RunService` does. */
function withCaptured(chunks: MastraChunk[], results: CapturedToolResult[]): MastraChunk[] {
  const captured: MastraChunk = { type: CAPTURED_TOOL_RESULTS, results };
  return chunks.flatMap((c): MastraChunk[] => (c.type === 'step-finish' ? [captured, c] : [c]));
}

/** What each chunk produced on its own, to check that a chunk adds nothing (de-dup, after the terminal). */
function translateEach(chunks: MastraChunk[], options: Partial<RunTranslatorOptions> = {}) {
  const t = new RunTranslator({ ...IDS, ...options });
  const start = t.start();
  const perChunk = chunks.map((chunk) => ({ chunk, events: t.push(chunk) }));
  return { start, perChunk, end: t.end(), translator: t };
}

type EventOf<T extends EventType> = Extract<Event, { type: T }>;

function ofType<T extends EventType>(events: Event[], type: T): Array<EventOf<T>> {
  return events.filter((e): e is EventOf<T> => e.type === type);
}

function only<T extends EventType>(events: Event[], type: T): EventOf<T> {
  const found = ofType(events, type);
  expect(found, `exactly one ${type}`).toHaveLength(1);
  return found[0];
}

const types = (events: Event[]) => events.map((e) => e.type);
const terminal = (events: Event[]) => events[events.length - 1];
const indexOf = (events: Event[], predicate: (e: Event) => boolean) => events.findIndex(predicate);

function textOf(events: Event[], role: 'assistant' | 'user' = 'assistant'): string {
  const ids = new Set(
    ofType(events, EventType.TEXT_MESSAGE_START)
      .filter((e) => (e.role ?? 'assistant') === role)
      .map((e) => e.messageId),
  );
  return ofType(events, EventType.TEXT_MESSAGE_CONTENT)
    .filter((e) => ids.has(e.messageId))
    .map((e) => e.delta)
    .join('');
}

// ── validating ────────────────────────────────────────────────────────

/** Opening and closing event types, and the field that pairs them. */
const PAIRS: Array<[EventType, EventType, string]> = [
  [EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_END, 'messageId'],
  [EventType.TOOL_CALL_START, EventType.TOOL_CALL_END, 'toolCallId'],
  [EventType.REASONING_START, EventType.REASONING_END, 'messageId'],
  [EventType.REASONING_MESSAGE_START, EventType.REASONING_MESSAGE_END, 'messageId'],
  [EventType.STEP_STARTED, EventType.STEP_FINISHED, 'stepName'],
];

const isTerminal = (e: Event) => e.type === EventType.RUN_FINISHED || e.type === EventType.RUN_ERROR;

/**
 * One run's events are valid AG-UI: every event parses, `@ag-ui/client`'s strict pipeline accepts
 * them unchanged without a warning, and the checks the client lacks hold.
 */
/**
 * A well-formed run. `held`: calls the client holds from an earlier run (resumed, or a background
 * task's): their results come alone, without the call announced again.
 */
async function expectValidRun(events: Event[], ids: { threadId: string; runId: string } = IDS, held: Iterable<string> = []): Promise<void> {
  const heldCalls = new Set(held);
  for (const event of events) {
    const parsed = EventSchemas.safeParse(event);
    expect(parsed.success, `${event.type} does not parse: ${parsed.error?.message}`).toBe(true);
  }

  const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
  try {
    const piped = await lastValueFrom(from(events as BaseEvent[]).pipe(enforceEvents(), transformChunks(), verifyEvents(), toArray()));
    expect(piped).toEqual(events);
    expect(warn).not.toHaveBeenCalled();
  } finally {
    warn.mockRestore();
  }

  expect(events[0]).toMatchObject({ type: EventType.RUN_STARTED, ...ids });
  const terminals = events.filter(isTerminal);
  expect(terminals, 'exactly one terminal event').toHaveLength(1);
  expect(terminal(events), 'the terminal event comes last').toBe(terminals[0]);
  const last = terminal(events);
  if (last.type === EventType.RUN_FINISHED) expect(last).toMatchObject(ids);

  for (const [i, result] of events.entries()) {
    if (result.type !== EventType.TOOL_CALL_RESULT) continue;
    if (heldCalls.has(result.toolCallId)) {
      expect(
        indexOf(events, (e) => e.type === EventType.TOOL_CALL_START && e.toolCallId === result.toolCallId),
        'a held call is not announced again',
      ).toBe(-1);
      continue;
    }
    const start = indexOf(events, (e) => e.type === EventType.TOOL_CALL_START && e.toolCallId === result.toolCallId);
    const end = indexOf(events, (e) => e.type === EventType.TOOL_CALL_END && e.toolCallId === result.toolCallId);
    expect(start, `TOOL_CALL_RESULT for ${result.toolCallId} names a started call`).toBeGreaterThanOrEqual(0);
    expect(end, `TOOL_CALL_RESULT for ${result.toolCallId} follows the end of its call`).toBeGreaterThan(start);
    expect(end).toBeLessThan(i);
  }

  for (const [open, close, key] of PAIRS) {
    const isOpen = new Set<unknown>();
    for (const e of events as Array<Event & Record<string, unknown>>) {
      if (e.type === open) isOpen.add(e[key]);
      if (e.type === close) {
        expect(isOpen.has(e[key]), `${close} ${String(e[key])} closes an open ${open}`).toBe(true);
        isOpen.delete(e[key]);
      }
    }
    expect([...isOpen], `every ${open} has its ${close} before the terminal event`).toEqual([]);
  }
}

// ── every fixture ─────────────────────────────────────────────────────

const streamFixtures = FIXTURE_NAMES.map(fixture).filter((f) => f.source === 'stream');
const subscriptionFixtures = FIXTURE_NAMES.map(fixture).filter((f) => f.source === 'subscription');

describe('RunTranslator on every recorded run', () => {
  it('has fixtures of both sources', () => {
    expect(streamFixtures.length).toBeGreaterThan(0);
    expect(subscriptionFixtures.length).toBeGreaterThan(0);
  });

  // A stream normally carries one Mastra run; `untilIdle` streams carry several, each its own bracket.
  it.each(streamFixtures.map((f) => [f.scenario, f] as const))('stream %s: every Mastra run is a valid AG-UI run', async (_name, f) => {
    for (const run of splitRuns(f.chunks)) {
      const options = f.scenario === 'frontend-tool-return' ? { frontendTools: new Set(['pick_color']), frontendToolMode: 'return' as const } : {};
      await expectValidRun(translate(run.chunks, options));
    }
  });

  it.each(subscriptionFixtures.map((f) => [f.scenario, f] as const))('subscription %s: every bracket is a valid AG-UI run', async (_name, f) => {
    for (const run of splitRuns(f.chunks)) {
      for (const part of splitAtApproval(run.chunks)) {
        await expectValidRun(translate(part, { runId: run.runId }), { threadId: 't', runId: run.runId });
      }
    }
  });

  it.each(FIXTURE_NAMES.map((name) => [name, fixture(name)] as const))('%s: STEP_STARTED / STEP_FINISHED pair up, one per streamed step', (_name, f) => {
    for (const run of splitRuns(f.chunks)) {
      const events = translate(run.chunks);
      const started = ofType(events, EventType.STEP_STARTED).map((e) => e.stepName);
      const finished = ofType(events, EventType.STEP_FINISHED).map((e) => e.stepName);
      expect(started).toHaveLength(chunksOf(run.chunks, 'step-start').length);
      expect(new Set(started).size).toBe(started.length);
      expect([...finished].sort()).toEqual([...started].sort());
    }
  });

  // Runs that end otherwise (an error, an abort, a guardrail) have no RUN_FINISHED to carry usage.
  const endsWell = (f: ChunkFixture) => !f.chunks.some((c) => c.type === 'error' || c.type === 'abort' || c.type === 'tripwire' || isTrippedFinish(c));
  it.each(streamFixtures.filter(endsWell).map((f) => [f.scenario, f] as const))(
    'stream %s: RUN_FINISHED carries the usage of each finish chunk',
    (_name, f) => {
      for (const run of splitRuns(f.chunks)) {
        const finish = chunksOf(run.chunks, 'finish')[0];
        const finished = only(translate(run.chunks), EventType.RUN_FINISHED);
        if (!finish) {
          expect(finished.usage).toBeUndefined();
          continue;
        }
        const { inputTokens, outputTokens, totalTokens } = finish.payload.output.usage;
        const metadata = finish.payload.metadata as { modelProvider?: string; modelId?: string } | undefined;
        expect(finished.usage).toEqual([
          {
            ...(metadata?.modelProvider && { provider: metadata.modelProvider }),
            ...(metadata?.modelId && { model: metadata.modelId }),
            inputTokens,
            outputTokens,
            totalTokens,
          },
        ]);
      }
    },
  );
});

// ── one stream scenario at a time ────────────────────────────────────

describe('RunTranslator: stream scenarios', () => {
  it('echo: one assistant message with the streamed text, in the step, then RUN_FINISHED', () => {
    const { chunks } = fixture('echo');
    const events = translate(chunks);
    const expected = deltaText(chunks, 'text-delta');
    expect(expected).toBe('Echo: hello world');
    expect(textOf(events)).toBe(expected);
    expect(types(events)).toEqual([
      EventType.RUN_STARTED,
      EventType.STEP_STARTED,
      EventType.TEXT_MESSAGE_START,
      ...chunksOf(chunks, 'text-delta').map(() => EventType.TEXT_MESSAGE_CONTENT),
      EventType.TEXT_MESSAGE_END,
      EventType.STEP_FINISHED,
      EventType.RUN_FINISHED,
    ]);
    // The assistant message takes the id Mastra stores it under, so a later MESSAGES_SNAPSHOT matches.
    expect(only(events, EventType.TEXT_MESSAGE_START)).toEqual({
      type: EventType.TEXT_MESSAGE_START,
      messageId: firstChunk(chunks, 'step-start').payload.messageId,
      role: 'assistant',
    });
    expect(only(events, EventType.RUN_FINISHED).outcome).toBeUndefined();
  });

  it('reasoning: a closed reasoning span (role reasoning) before the text', () => {
    const { chunks } = fixture('reasoning');
    const events = translate(chunks);
    const reasoningTypes = [
      EventType.REASONING_START,
      EventType.REASONING_MESSAGE_START,
      EventType.REASONING_MESSAGE_CONTENT,
      EventType.REASONING_MESSAGE_END,
      EventType.REASONING_END,
    ];
    const firstOf = (type: EventType) => indexOf(events, (e) => e.type === type);
    const order = reasoningTypes.map(firstOf);
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    const lastReasoning = Math.max(...events.flatMap((e, i) => (reasoningTypes.includes(e.type) ? [i] : [])));
    expect(lastReasoning).toBeLessThan(firstOf(EventType.TEXT_MESSAGE_START));

    const start = only(events, EventType.REASONING_MESSAGE_START);
    expect(start.role).toBe('reasoning');
    expect(only(events, EventType.REASONING_START).messageId).toBe(start.messageId);
    const reasoning = ofType(events, EventType.REASONING_MESSAGE_CONTENT);
    expect(reasoning.every((e) => e.messageId === start.messageId)).toBe(true);
    expect(reasoning.map((e) => e.delta).join('')).toBe(deltaText(chunks, 'reasoning-delta'));
    expect(textOf(events)).toBe(deltaText(chunks, 'text-delta'));
    // Reasoning and text are two messages: their ids must not collide.
    expect(start.messageId).not.toBe(only(events, EventType.TEXT_MESSAGE_START).messageId);
  });

  it('subagent: SUBAGENT_STARTED after the delegation’s call, the sub-agent’s answer attributed to it, SUBAGENT_FINISHED just before the result', () => {
    const { chunks } = fixture('subagent');
    const events = translate(chunks);
    const call = firstChunk(chunks, 'tool-call').payload;
    const answer = (firstChunk(chunks, 'tool-result').payload.result as { text: string }).text;
    const subagent = `subagent-${call.toolCallId}`;
    const started = indexOf(events, (e) => e.type === EventType.SUBAGENT_STARTED);
    expect(events[started]).toEqual({ type: EventType.SUBAGENT_STARTED, subagentRunId: subagent, name: 'researcher', parentToolCallId: call.toolCallId });
    expect(started).toBeGreaterThan(indexOf(events, (e) => e.type === EventType.TOOL_CALL_END));
    const finished = indexOf(events, (e) => e.type === EventType.SUBAGENT_FINISHED);
    expect(events[finished + 1]).toMatchObject({ type: EventType.TOOL_CALL_RESULT, toolCallId: call.toolCallId });
    const inside = events.slice(started + 1, finished);
    expect(inside.map((e) => e.type)).toEqual([
      EventType.TEXT_MESSAGE_START,
      ...inside.slice(1, -1).map(() => EventType.TEXT_MESSAGE_CONTENT),
      EventType.TEXT_MESSAGE_END,
    ]);
    expect(inside.every((e) => (e as { subagentRunId?: string }).subagentRunId === subagent)).toBe(true);
    expect(inside.flatMap((e) => (e.type === EventType.TEXT_MESSAGE_CONTENT ? [e.delta] : [])).join('')).toBe(answer);
  });

  it('subagent-tool: the sub-agent’s call and result carry its subagentRunId, on the message `subagent-<call>-calls`, inside its segment', async () => {
    const { chunks } = fixture('subagent-tool');
    const events = translate(chunks);
    await expectValidRun(events);
    const delegation = firstChunk(chunks, 'tool-call').payload;
    const subagent = `subagent-${delegation.toolCallId}`;
    const inner = events.filter((e) => 'subagentRunId' in e && e.type.startsWith('TOOL_CALL_'));
    expect(inner.map((e) => e.type)).toEqual([EventType.TOOL_CALL_START, EventType.TOOL_CALL_ARGS, EventType.TOOL_CALL_END, EventType.TOOL_CALL_RESULT]);
    expect(inner.every((e) => (e as { subagentRunId?: string }).subagentRunId === subagent)).toBe(true);
    expect(inner[0]).toMatchObject({ toolCallName: 'get_weather', parentMessageId: `${subagent}-calls` });
    expect(inner[1]).toMatchObject({ delta: '{"city":"Oslo"}' });
    expect(indexOf(events, (e) => e === inner[3])).toBeLessThan(indexOf(events, (e) => e.type === EventType.SUBAGENT_FINISHED));
  });

  it('subagent-reasoning: the sub-agent’s reasoning is a reasoning message of its own, `subagent-<call>-reasoning`', async () => {
    const { chunks } = fixture('subagent-reasoning');
    const events = translate(chunks);
    await expectValidRun(events);
    const subagent = `subagent-${firstChunk(chunks, 'tool-call').payload.toolCallId}`;
    const reasoning = events.filter((e) => e.type.startsWith('REASONING_'));
    expect(reasoning.map((e) => e.type)).toEqual([
      EventType.REASONING_START,
      EventType.REASONING_MESSAGE_START,
      ...reasoning.slice(2, -2).map(() => EventType.REASONING_MESSAGE_CONTENT),
      EventType.REASONING_MESSAGE_END,
      EventType.REASONING_END,
    ]);
    expect(
      reasoning.every(
        (e) =>
          (e as { subagentRunId?: string; messageId?: string }).subagentRunId === subagent &&
          (e as { messageId?: string }).messageId === `${subagent}-reasoning`,
      ),
    ).toBe(true);
  });

  it('subagent-approval: the sub-agent’s call that waits is the run’s interrupt (with its subagentRunId), not a call; the segment ends suspended', async () => {
    const { chunks } = fixture('subagent-approval');
    const events = translate(chunks);
    await expectValidRun(events);
    const delegation = firstChunk(chunks, 'tool-call').payload.toolCallId;
    const subagent = `subagent-${delegation}`;
    expect(events.filter((e) => e.type === EventType.TOOL_CALL_START).map((e) => (e as { toolCallName: string }).toolCallName)).toEqual(['agent-researcher']);
    const finished = terminal(events) as EventOf<EventType.RUN_FINISHED>;
    const interrupt = finished.outcome?.type === 'interrupt' ? finished.outcome.interrupts[0] : undefined;
    expect(interrupt).toMatchObject({
      toolCallId: delegation,
      subagentRunId: subagent,
      metadata: { toolName: 'delete_file', args: { path: 'old-notes.txt' } },
    });
    expect(only(events, EventType.SUBAGENT_FINISHED)).toEqual({
      type: EventType.SUBAGENT_FINISHED,
      subagentRunId: subagent,
      outcome: { type: 'suspended', interruptIds: [interrupt?.id] },
    });
  });

  it('subagent-approval-approved: the resumed run shows the same sub-agent again, its call (with arguments) and result, then the delegation’s result', async () => {
    const { chunks } = fixture('subagent-approval-approved');
    const delegation = firstChunk(chunks, 'tool-result').payload.toolCallId;
    const events = translate(chunks, { resumedToolCalls: [delegation] });
    await expectValidRun(events, IDS, [delegation]);
    const subagent = `subagent-${delegation}`;
    expect(events.filter((e) => 'subagentRunId' in e).map((e) => e.type)).toEqual(
      expect.arrayContaining([
        EventType.SUBAGENT_STARTED,
        EventType.TOOL_CALL_START,
        EventType.TOOL_CALL_ARGS,
        EventType.TOOL_CALL_END,
        EventType.TOOL_CALL_RESULT,
        EventType.SUBAGENT_FINISHED,
      ]),
    );
    expect(only(events, EventType.SUBAGENT_STARTED)).toMatchObject({ subagentRunId: subagent });
    const results = events.filter((e) => e.type === EventType.TOOL_CALL_RESULT);
    expect(results.map((e) => (e as { toolCallId: string }).toolCallId).at(-1)).toBe(delegation);
  });

  it('subagent-error: the failed delegation ends with SUBAGENT_ERROR, then its error result; the run goes on', () => {
    const { chunks } = fixture('subagent-error');
    const events = translate(chunks);
    const error = indexOf(events, (e) => e.type === EventType.SUBAGENT_ERROR);
    expect(indexOf(events, (e) => e.type === EventType.SUBAGENT_STARTED)).toBeLessThan(error);
    expect(events[error]).toMatchObject({ message: expect.stringContaining('researcher') });
    expect(events[error + 1]).toMatchObject({ type: EventType.TOOL_CALL_RESULT, content: expect.stringContaining('"error"') });
    expect(events.at(-1)?.type).toBe(EventType.RUN_FINISHED);
  });

  it('server-tool: streamed START / ARGS / END, the atomic tool-call adds nothing, then the result', () => {
    const { chunks } = fixture('server-tool');
    const { perChunk } = translateEach(chunks);
    const events = translate(chunks);
    const call = firstChunk(chunks, 'tool-call').payload;
    const result = firstChunk(chunks, 'tool-result').payload;

    expect(perChunk.find((p) => p.chunk.type === 'tool-call')?.events).toEqual([]);
    const start = only(events, EventType.TOOL_CALL_START);
    expect(start).toMatchObject({ toolCallId: call.toolCallId, toolCallName: call.toolName });
    const args = ofType(events, EventType.TOOL_CALL_ARGS);
    expect(args.map((e) => e.delta)).toEqual(chunksOf(chunks, 'tool-call-delta').map((c) => c.payload.argsTextDelta));
    expect(args).toHaveLength(2);
    expect(JSON.parse(args.map((e) => e.delta).join(''))).toEqual(call.args);
    only(events, EventType.TOOL_CALL_END);

    const toolEvents = events.filter((e) => e.type.startsWith('TOOL_CALL_'));
    expect(types(toolEvents)).toEqual([
      EventType.TOOL_CALL_START,
      EventType.TOOL_CALL_ARGS,
      EventType.TOOL_CALL_ARGS,
      EventType.TOOL_CALL_END,
      EventType.TOOL_CALL_RESULT,
    ]);
    expect(only(events, EventType.TOOL_CALL_RESULT)).toEqual({
      type: EventType.TOOL_CALL_RESULT,
      messageId: `${TOOL_RESULT_PREFIX}${call.toolCallId}`,
      toolCallId: call.toolCallId,
      content: JSON.stringify(result.result),
      role: 'tool',
    });
    expect(textOf(events)).toBe(deltaText(chunks, 'text-delta'));
    expect(ofType(events, EventType.STEP_STARTED).map((e) => e.stepName)).toEqual(['step-1', 'step-2']);
  });

  it('server-tool-error: the result says error, with the message the tool threw', () => {
    const { chunks } = fixture('server-tool-error');
    const events = translate(chunks);
    const failure = firstChunk(chunks, 'tool-error').payload;
    const thrown = (failure.error as { cause: { message: string } }).cause.message;
    expect(thrown).toBe('no weather station in Atlantis');

    const result = only(events, EventType.TOOL_CALL_RESULT);
    expect(result).toMatchObject({ toolCallId: failure.toolCallId, messageId: `${TOOL_RESULT_PREFIX}${failure.toolCallId}`, role: 'tool' });
    expect(result.content).toContain('error');
    expect(result.content).toContain(thrown);
    expect(JSON.parse(result.content as string)).toEqual({ error: thrown });
    expect(textOf(events)).toBe(deltaText(chunks, 'text-delta'));
  });

  it('model-error: RUN_ERROR with the model message, and nothing after it although step-finish / finish follow', () => {
    const { chunks } = fixture('model-error');
    const { perChunk, end } = translateEach(chunks);
    const events = translate(chunks);
    const error = firstChunk(chunks, 'error').payload.error as { message: string };

    expect(terminal(events)).toEqual({ type: EventType.RUN_ERROR, message: error.message, code: 'MODEL_ERROR' });
    expect(error.message).toBe('demo model failure');
    const at = perChunk.findIndex((p) => p.chunk.type === 'error');
    expect(perChunk.slice(at + 1).map((p) => p.chunk.type)).toEqual(['step-finish', 'finish']);
    expect(perChunk.slice(at + 1).flatMap((p) => p.events)).toEqual([]);
    expect(end).toEqual([]);
    // The open step is closed before the error, not left dangling; the run-end message says it failed.
    expect(types(perChunk[at].events)).toEqual([EventType.STEP_FINISHED, EventType.ACTIVITY_SNAPSHOT, EventType.RUN_ERROR]);
    expect(only(events, EventType.ACTIVITY_SNAPSHOT)).toEqual({
      type: EventType.ACTIVITY_SNAPSHOT,
      messageId: `run-end-${IDS.runId}`,
      activityType: 'run-end',
      content: { outcome: 'failed', code: 'MODEL_ERROR', message: error.message },
    });
  });

  it('approval-request: the run finishes with an interrupt naming the call and its response schema', () => {
    const { chunks } = fixture('approval-request');
    const { perChunk, end, translator } = translateEach(chunks);
    const events = translate(chunks);
    const approval = firstChunk(chunks, 'tool-call-approval').payload;

    expect(perChunk.find((p) => p.chunk.type === 'tool-call')?.events).toEqual([]);
    expect(perChunk.find((p) => p.chunk.type === 'tool-call-approval')?.events).toEqual([]);
    expect(translator.interrupted).toBe(true);
    expect(terminal(end)).toEqual(terminal(events));

    const finished = only(events, EventType.RUN_FINISHED);
    expect(finished.outcome).toMatchObject({
      type: 'interrupt',
      interrupts: [
        {
          id: `r::${approval.toolCallId}`,
          reason: 'tool_approval',
          toolCallId: approval.toolCallId,
          responseSchema: JSON.parse(approval.resumeSchema),
        },
      ],
    });
    const [interrupt] = finished.outcome?.type === 'interrupt' ? finished.outcome.interrupts : [];
    expect(interrupt.responseSchema).toEqual(expect.objectContaining({ type: 'object' }));
    expect(interrupt.metadata).toMatchObject({ toolName: approval.toolName, args: approval.args });
    // The call is shown once, and not answered in this run.
    only(events, EventType.TOOL_CALL_START);
    only(events, EventType.TOOL_CALL_END);
    expect(ofType(events, EventType.TOOL_CALL_RESULT)).toEqual([]);
  });

  it('approval-request: the interrupt id names the Mastra run when it differs from the AG-UI run', () => {
    const { chunks } = fixture('approval-request');
    const approval = firstChunk(chunks, 'tool-call-approval');
    const events = translate(chunks, { runId: 'agui-run', mastraRunId: approval.runId });
    const finished = only(events, EventType.RUN_FINISHED);
    expect(finished.runId).toBe('agui-run');
    expect(finished.outcome).toMatchObject({ interrupts: [{ id: `${approval.runId}::${approval.payload.toolCallId}` }] });
  });

  it('approval-approved: a resumed run without start still opens with RUN_STARTED and shows the call before its result', async () => {
    const { chunks } = fixture('approval-approved');
    expect(chunks.some((c) => c.type === 'start')).toBe(false);
    const events = translate(chunks);
    const result = firstChunk(chunks, 'tool-result').payload;

    await expectValidRun(events);
    const toolEvents = events.filter((e) => e.type.startsWith('TOOL_CALL_'));
    expect(toolEvents).toEqual([
      { type: EventType.TOOL_CALL_START, toolCallId: result.toolCallId, toolCallName: result.toolName, parentMessageId: expect.any(String) },
      { type: EventType.TOOL_CALL_ARGS, toolCallId: result.toolCallId, delta: JSON.stringify(result.args) },
      { type: EventType.TOOL_CALL_END, toolCallId: result.toolCallId },
      {
        type: EventType.TOOL_CALL_RESULT,
        messageId: `${TOOL_RESULT_PREFIX}${result.toolCallId}`,
        toolCallId: result.toolCallId,
        content: JSON.stringify(result.result),
        role: 'tool',
      },
    ]);
    expect(textOf(events)).toBe(deltaText(chunks, 'text-delta'));
    expect(only(events, EventType.RUN_FINISHED).outcome).toBeUndefined();
  });

  it('approval-approved with resumedToolCalls: the call is not announced again (the client holds it, with its arguments); its result comes alone', async () => {
    const { chunks } = fixture('approval-approved');
    const result = firstChunk(chunks, 'tool-result').payload;
    const events = translate(chunks, { resumedToolCalls: new Set([result.toolCallId]) });

    await expectValidRun(events, IDS, [result.toolCallId]);
    expect(types(events.filter((e) => e.type.startsWith('TOOL_CALL_')))).toEqual([EventType.TOOL_CALL_RESULT]);
    expect(only(events, EventType.TOOL_CALL_RESULT).content).toBe(JSON.stringify(result.result));
  });

  it('approval-approved with approvalToolCalls: the result says the call was approved (metadata.approval), as history does', () => {
    const { chunks } = fixture('approval-approved');
    const result = firstChunk(chunks, 'tool-result').payload;
    const marked = translate(chunks, { resumedToolCalls: [result.toolCallId], approvalToolCalls: [result.toolCallId] });
    expect(only(marked, EventType.TOOL_CALL_RESULT).metadata).toEqual({ approval: 'approved' });
    // A call not known to have waited for an approval says nothing of one.
    expect(only(translate(chunks, { resumedToolCalls: [result.toolCallId] }), EventType.TOOL_CALL_RESULT)).not.toHaveProperty('metadata');
  });

  it('approval-declined: the result says the call was declined, with the reason', () => {
    const { chunks } = fixture('approval-declined');
    const events = translate(chunks);
    const denied = firstChunk(chunks, 'tool-output-denied').payload;
    const reason = (denied as { approval?: { reason?: string } }).approval?.reason;
    expect(reason).toBe('not today');

    const result = only(events, EventType.TOOL_CALL_RESULT);
    expect(result).toMatchObject({ toolCallId: denied.toolCallId, messageId: `${TOOL_RESULT_PREFIX}${denied.toolCallId}`, role: 'tool' });
    expect(result.content).toContain('declined');
    expect(result.content).toContain(reason);
    expect(JSON.parse(result.content as string)).toMatchObject({ declined: true, reason });
    expect(result.metadata).toEqual({ approval: 'declined' });
    // A declined call is still shown before its result.
    expect(indexOf(events, (e) => e.type === EventType.TOOL_CALL_START)).toBeLessThan(indexOf(events, (e) => e.type === EventType.TOOL_CALL_RESULT));
  });

  it('frontend-tool-return: the run finishes with the call pending, and no result', () => {
    const { chunks } = fixture('frontend-tool-return');
    const call = firstChunk(chunks, 'tool-call').payload;
    const events = translate(chunks, { frontendTools: new Set([call.toolName]), frontendToolMode: 'return' });

    expect(call.toolName).toBe('pick_color');
    expect(only(events, EventType.RUN_FINISHED).outcome).toEqual({ type: 'success', pendingToolCallIds: [call.toolCallId] });
    expect(ofType(events, EventType.TOOL_CALL_RESULT)).toEqual([]);
    only(events, EventType.TOOL_CALL_START);
    only(events, EventType.TOOL_CALL_END);
  });

  it('frontend-tool-return: a captured result is never invented for a frontend tool', () => {
    const { chunks } = fixture('frontend-tool-return');
    const call = firstChunk(chunks, 'tool-call').payload;
    const captured = withCaptured(chunks, [{ toolCallId: call.toolCallId, result: 'should not appear', isError: false }]);
    const events = translate(captured, { frontendTools: new Set([call.toolName]), frontendToolMode: 'return' });
    expect(ofType(events, EventType.TOOL_CALL_RESULT)).toEqual([]);
  });

  it('frontend-tool-return in proxy mode: the run ends plainly (the result comes back through the bridge)', () => {
    const { chunks } = fixture('frontend-tool-return');
    const call = firstChunk(chunks, 'tool-call').payload;
    const events = translate(chunks, { frontendTools: new Set([call.toolName]), frontendToolMode: 'proxy' });
    expect(only(events, EventType.RUN_FINISHED).outcome).toBeUndefined();
  });

  it('server-tool without its tool-result chunk (chunk removed): the captured execution result fills in at step end', async () => {
    const chunks = fixture('server-tool').chunks.filter((c) => c.type !== 'tool-result');
    const result = firstChunk(fixture('server-tool').chunks, 'tool-result').payload;
    const captured = withCaptured(chunks, [{ toolCallId: result.toolCallId, result: result.result, isError: false }]);
    const { perChunk } = translateEach(captured);
    const events = translate(captured);

    await expectValidRun(events);
    expect(only(events, EventType.TOOL_CALL_RESULT)).toMatchObject({ toolCallId: result.toolCallId, content: JSON.stringify(result.result) });
    // The result goes out as the run passes the captured outcomes in, just before the step ends.
    const at = perChunk.findIndex((p) => p.chunk.type === CAPTURED_TOOL_RESULTS);
    expect(types(perChunk[at].events)).toEqual([EventType.TOOL_CALL_RESULT]);
    expect(types(perChunk[at + 1].events)).toEqual([EventType.STEP_FINISHED]);
  });

  it('structured-output: the JSON text streams, and the final object arrives as CUSTOM mastra.object-result', () => {
    const { chunks } = fixture('structured-output');
    const { perChunk } = translateEach(chunks);
    const events = translate(chunks);
    const objectResult = firstChunk(chunks, 'object-result');

    expect(textOf(events)).toBe(deltaText(chunks, 'text-delta'));
    expect(only(events, EventType.CUSTOM)).toEqual({ type: EventType.CUSTOM, name: 'mastra.object-result', value: objectResult.object });
    expect(JSON.parse(textOf(events))).toEqual(objectResult.object);
    // Partial `object` chunks repeat what the text already says.
    expect(perChunk.filter((p) => p.chunk.type === 'object').flatMap((p) => p.events)).toEqual([]);
  });

  it('aborted: the open text message and step are closed, then RUN_FINISHED cancelled; the late finish adds nothing', () => {
    const { chunks } = fixture('aborted');
    const { perChunk, end } = translateEach(chunks);
    const events = translate(chunks);

    const abort = perChunk.find((p) => p.chunk.type === 'abort');
    expect(types(abort?.events ?? [])).toEqual([EventType.TEXT_MESSAGE_END, EventType.STEP_FINISHED, EventType.ACTIVITY_SNAPSHOT, EventType.RUN_FINISHED]);
    expect(only(events, EventType.ACTIVITY_SNAPSHOT)).toMatchObject({
      messageId: `run-end-${IDS.runId}`,
      activityType: 'run-end',
      content: { outcome: 'cancelled' },
    });
    expect(terminal(events)).toEqual({ type: EventType.RUN_FINISHED, ...IDS, outcome: { type: 'cancelled' } });
    expect(perChunk.find((p) => p.chunk.type === 'finish')?.events).toEqual([]);
    expect(end).toEqual([]);
    expect(textOf(events)).toBe(deltaText(chunks, 'text-delta'));
  });

  it('background-task: the detached task shows as a background-task activity', () => {
    const { chunks } = fixture('background-task');
    const started = firstChunk(chunks, 'background-task-started').payload;
    const events = translate(chunks);

    expect(only(events, EventType.ACTIVITY_SNAPSHOT)).toEqual({
      type: EventType.ACTIVITY_SNAPSHOT,
      messageId: `background-task-${started.taskId}`,
      activityType: 'background-task',
      content: { taskId: started.taskId, toolName: started.toolName, toolCallId: started.toolCallId, status: 'started' },
    });
    // The tool's immediate "started in the background" answer is for the model, not the call's
    // result: the call stays pending until the task ends (history shows the task's result too).
    expect(ofType(events, EventType.TOOL_CALL_RESULT)).toEqual([]);
    expect(only(events, EventType.TOOL_CALL_START).toolCallId).toBe(started.toolCallId);
  });

  it("background-task: the task's end gives the call its result, in the bracket that carries it", async () => {
    const { chunks } = fixture('background-task');
    const started = firstChunk(chunks, 'background-task-started').payload;
    const completed = { type: 'background-task-completed', payload: { ...started, result: { done: true } } } as unknown as MastraChunk;
    const failed = { type: 'background-task-failed', payload: { ...started, error: { message: 'boom' } } } as unknown as MastraChunk;

    const inRun = translate([...chunks.slice(0, -1), completed, chunks.at(-1) as MastraChunk]);
    await expectValidRun(inRun);
    expect(only(inRun, EventType.TOOL_CALL_RESULT)).toMatchObject({ toolCallId: started.toolCallId, content: '{"done":true}' });

    // Alone (the run that made the call is over): the client holds the call; its result comes alone.
    const alone = translate([failed]);
    await expectValidRun(alone, IDS, [started.toolCallId]);
    expect(ofType(alone, EventType.TOOL_CALL_START)).toEqual([]);
    expect(only(alone, EventType.TOOL_CALL_RESULT)).toMatchObject({ toolCallId: started.toolCallId, content: '{"error":"boom"}' });
  });

  it('background-task-until-idle: running updates the activity; each Mastra run on the stream is its own bracket', () => {
    const { chunks } = fixture('background-task-until-idle');
    const runs = splitRuns(chunks);
    expect(runs).toHaveLength(chunksOf(chunks, 'start').length);

    const events = translate(runs[0].chunks);
    const started = firstChunk(chunks, 'background-task-started').payload;
    const messageId = `background-task-${started.taskId}`;
    expect(only(events, EventType.ACTIVITY_SNAPSHOT)).toMatchObject({ messageId, content: { status: 'started' } });
    expect(only(events, EventType.ACTIVITY_DELTA)).toEqual({
      type: EventType.ACTIVITY_DELTA,
      messageId,
      activityType: 'background-task',
      patch: [{ op: 'replace', path: '/status', value: 'running' }],
    });
  });

  it('background-task-until-idle: the completion, which arrives after its run finished, still carries the result on its own', async () => {
    const { chunks } = fixture('background-task-until-idle');
    const completed = firstChunk(chunks, 'background-task-completed');
    const firstRun = splitRuns(chunks)[0].chunks;
    expect(firstRun.indexOf(completed)).toBeGreaterThan(firstRun.findIndex((c) => c.type === 'finish'));

    // Whoever brackets it (the thread hub), a translator that never saw the task start must not lose the result.
    const events = translate([completed]);
    await expectValidRun(events, IDS, [completed.payload.toolCallId]);
    expect(only(events, EventType.ACTIVITY_SNAPSHOT)).toMatchObject({
      messageId: `background-task-${completed.payload.taskId}`,
      activityType: 'background-task',
      content: { taskId: completed.payload.taskId, status: 'completed', result: completed.payload.result },
    });
  });

  it('background-task-until-idle: started, running and completed in one run end as a completed activity with the result', async () => {
    const { chunks } = fixture('background-task-until-idle');
    const lifecycle = ['background-task-started', 'background-task-running', 'background-task-completed'] as const;
    const taskId = firstChunk(chunks, 'background-task-completed').payload.taskId;
    const taskChunks = lifecycle.map((type) => chunksOf(chunks, type).find((c) => c.payload.taskId === taskId) as MastraChunk);
    const events = translate(taskChunks);

    await expectValidRun(events, IDS, [firstChunk(chunks, 'background-task-completed').payload.toolCallId]);
    expect(ofType(events, EventType.ACTIVITY_DELTA).at(-1)?.patch).toEqual([
      { op: 'replace', path: '/status', value: 'completed' },
      { op: 'add', path: '/result', value: firstChunk(chunks, 'background-task-completed').payload.result },
    ]);
  });
});

// ── thread subscriptions ─────────────────────────────────────────────

describe('RunTranslator: thread subscription scenarios', () => {
  const runsOf = (name: string) => splitRuns(fixture(name).chunks).map((run) => ({ ...run, events: translate(run.chunks, { runId: run.runId }) }));

  it('signal-wake: the echoed user message is a user text message with the signal id', () => {
    const [run, ...rest] = runsOf('signal-wake');
    expect(rest).toEqual([]);
    const [echo] = echoesOf(run.chunks, 'data-user-message');
    const { data } = echo;
    expect(typeof data.contents).toBe('string');

    expect(run.events[0]).toEqual({ type: EventType.RUN_STARTED, threadId: 't', runId: echo.runId });
    const userEvents = run.events.filter((e) => 'messageId' in e && e.messageId === data.id);
    expect(userEvents).toEqual([
      { type: EventType.TEXT_MESSAGE_START, messageId: data.id, role: 'user' },
      { type: EventType.TEXT_MESSAGE_CONTENT, messageId: data.id, delta: data.contents },
      { type: EventType.TEXT_MESSAGE_END, messageId: data.id },
    ]);
    expect(textOf(run.events, 'user')).toBe(data.contents);
    expect(textOf(run.events)).toBe(deltaText(run.chunks, 'text-delta'));
    expect(terminal(run.events)).toMatchObject({ type: EventType.RUN_FINISHED, runId: echo.runId });
  });

  it('signal-deliver-during-run: delivered messages and the notification land in the active run, the queued one in the next', () => {
    const runs = runsOf('signal-deliver-during-run');
    expect(runs).toHaveLength(2);
    const [first, second] = runs;

    for (const run of runs) {
      const echoes = echoesOf(run.chunks, 'data-user-message');
      expect(echoes.length).toBeGreaterThan(0);
      for (const { data } of echoes) {
        expect(
          only(
            run.events.filter((e) => 'messageId' in e && e.messageId === data.id),
            EventType.TEXT_MESSAGE_START,
          ).role,
        ).toBe('user');
      }
      expect(textOf(run.events, 'user')).toBe(echoes.map((c) => c.data.contents as string).join(''));
      expect(textOf(run.events)).toBe(deltaText(run.chunks, 'text-delta'));
    }

    const [signal] = echoesOf(first.chunks, 'data-signal');
    expect(only(first.events, EventType.ACTIVITY_SNAPSHOT)).toEqual({
      type: EventType.ACTIVITY_SNAPSHOT,
      messageId: signal.data.id,
      activityType: `signal.${signal.data.type}`,
      content: { tagName: signal.data.tagName, contents: signal.data.contents, attributes: signal.data.attributes },
    });
    expect(signal.data.type).toBe('notification');
    expect(signal.data.attributes).toEqual({ source: 'ci' });
    expect(second.events[0]).toMatchObject({ type: EventType.RUN_STARTED, runId: second.runId });
    expect(second.runId).not.toBe(first.runId);
  });

  it('signal-persist: a run with just the ACTIVITY_SNAPSHOT of the stored signal', () => {
    const [run, ...rest] = runsOf('signal-persist');
    expect(rest).toEqual([]);
    const [signal] = echoesOf(run.chunks, 'data-signal');

    expect(types(run.events)).toEqual([EventType.RUN_STARTED, EventType.ACTIVITY_SNAPSHOT, EventType.RUN_FINISHED]);
    expect(only(run.events, EventType.ACTIVITY_SNAPSHOT)).toEqual({
      type: EventType.ACTIVITY_SNAPSHOT,
      messageId: signal.data.id,
      activityType: 'signal.reactive',
      content: { tagName: signal.data.tagName, contents: signal.data.contents, attributes: {} },
    });
  });

  it('signal-abort: the run is cancelled with the user and assistant messages closed', () => {
    const [run] = runsOf('signal-abort');
    const last = terminal(run.events);
    expect(last).toEqual({ type: EventType.RUN_FINISHED, threadId: 't', runId: run.runId, outcome: { type: 'cancelled' } });
    expect(ofType(run.events, EventType.TEXT_MESSAGE_END)).toHaveLength(2);
    expect(textOf(run.events)).toBe(deltaText(run.chunks, 'text-delta'));
  });

  it('signal-model-error: RUN_ERROR with the model message', () => {
    const [run] = runsOf('signal-model-error');
    const error = firstChunk(run.chunks, 'error').payload.error as { message: string };
    expect(terminal(run.events)).toEqual({ type: EventType.RUN_ERROR, message: error.message, code: 'MODEL_ERROR' });
    expect(only(run.events, EventType.TEXT_MESSAGE_START).role).toBe('user');
  });

  it('signal-approval: the approval ends the first bracket with an interrupt, the approved continuation is a fresh bracket', async () => {
    const [run, ...rest] = splitRuns(fixture('signal-approval').chunks);
    expect(rest).toEqual([]);
    const [before, after] = splitAtApproval(run.chunks);
    const approval = firstChunk(before, 'tool-call-approval').payload;

    const first = translate(before, { runId: run.runId });
    expect(only(first, EventType.RUN_FINISHED).outcome).toMatchObject({
      type: 'interrupt',
      interrupts: [{ id: `${run.runId}::${approval.toolCallId}`, reason: 'tool_approval', toolCallId: approval.toolCallId }],
    });
    expect(ofType(first, EventType.TOOL_CALL_RESULT)).toEqual([]);

    const second = translate(after, { runId: run.runId });
    await expectValidRun(second, { threadId: 't', runId: run.runId });
    const result = firstChunk(after, 'tool-result').payload;
    expect(types(second.filter((e) => e.type.startsWith('TOOL_CALL_')))).toEqual([
      EventType.TOOL_CALL_START,
      EventType.TOOL_CALL_ARGS,
      EventType.TOOL_CALL_END,
      EventType.TOOL_CALL_RESULT,
    ]);
    expect(only(second, EventType.TOOL_CALL_RESULT)).toMatchObject({ toolCallId: approval.toolCallId, content: JSON.stringify(result.result) });
    // A translator of its own has not seen the approval: only the thread translator, which saw it, marks the result.
    expect(only(second, EventType.TOOL_CALL_RESULT)).not.toHaveProperty('metadata');
    expect(textOf(second)).toBe(deltaText(after, 'text-delta'));
    expect(only(second, EventType.RUN_FINISHED).outcome).toBeUndefined();
  });

  it('signal-approval: one translator fed past the approval stays a single well-formed run (splitting is the hub’s job)', async () => {
    const [run] = splitRuns(fixture('signal-approval').chunks);
    const events = translate(run.chunks, { runId: run.runId });
    // Still one valid run, but not a meaningful one: the interrupt already answered the call, so the
    // approved result is dropped and the run finishes as `interrupt`. Hence the split above, which
    // the thread hub (`ThreadTranslator`) makes by ending the bracket at the pause.
    await expectValidRun(events, { threadId: 't', runId: run.runId });
  });
});

// ── synthetic cases: hand-written chunks for what no recorded run produces ──────────────

/** A synthetic chunk: the shape Mastra's types allow, written by hand. */
const synthetic = (chunk: Record<string, unknown>) => ({ runId: 'mastra-run', from: 'AGENT', ...chunk }) as unknown as MastraChunk;

describe('RunTranslator: synthetic cases', () => {
  it('SYNTHETIC: a text-delta with no text-start opens an assistant message', async () => {
    const events = translate([synthetic({ type: 'text-delta', payload: { id: 'p1', text: 'hi' } })]);
    await expectValidRun(events);
    expect(types(events)).toEqual([
      EventType.RUN_STARTED,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.RUN_FINISHED,
    ]);
    expect(only(events, EventType.TEXT_MESSAGE_START).role).toBe('assistant');
    expect(textOf(events)).toBe('hi');
  });

  it('SYNTHETIC: two text parts in one step get two message ids', async () => {
    const events = translate([
      synthetic({ type: 'step-start', payload: { messageId: 'm1' } }),
      synthetic({ type: 'text-start', payload: { id: 'a' } }),
      synthetic({ type: 'text-delta', payload: { id: 'a', text: 'one' } }),
      synthetic({ type: 'text-end', payload: { id: 'a' } }),
      synthetic({ type: 'text-delta', payload: { id: 'b', text: 'two' } }),
    ]);
    await expectValidRun(events);
    const ids = ofType(events, EventType.TEXT_MESSAGE_START).map((e) => e.messageId);
    expect(ids[0]).toBe('m1');
    expect(new Set(ids).size).toBe(2);
  });

  it('SYNTHETIC: text after a tool call is a new message (`<id>-1`), as history splits the stored message', async () => {
    const events = translate([
      synthetic({ type: 'step-start', payload: { messageId: 'm1' } }),
      synthetic({ type: 'tool-call', payload: { toolCallId: 'c1', toolName: 'lookup', args: {} } }),
      synthetic({ type: 'tool-result', payload: { toolCallId: 'c1', toolName: 'lookup', result: 1 } }),
      synthetic({ type: 'step-finish', payload: {} }),
      synthetic({ type: 'step-start', payload: { messageId: 'm1' } }),
      synthetic({ type: 'reasoning-delta', payload: { id: 'r', text: 'hm' } }),
      synthetic({ type: 'text-delta', payload: { id: 'a', text: 'one' } }),
    ]);
    await expectValidRun(events);
    expect(only(events, EventType.TOOL_CALL_START).parentMessageId).toBe('m1');
    expect(only(events, EventType.REASONING_MESSAGE_START).messageId).toBe('m1-1-reasoning');
    expect(only(events, EventType.TEXT_MESSAGE_START).messageId).toBe('m1-1');
  });

  it('SYNTHETIC: a run appended to a stored message goes on with its numbering, unless it starts with a message', () => {
    const appendsTo = { messageId: 'stored', segment: 0, hasToolCalls: true, texts: 0, reasonings: 0 };
    const answer = [synthetic({ type: 'step-start', payload: { messageId: 'fresh' } }), synthetic({ type: 'text-delta', payload: { id: 'a', text: 'x' } })];
    expect(only(translate(answer, { appendsTo }), EventType.TEXT_MESSAGE_START).messageId).toBe('stored-1');
    const echo = synthetic({ type: 'data-user-message', data: { id: 'sig', type: 'user', contents: 'hi' } });
    const started = ofType(translate([echo, ...answer], { appendsTo }), EventType.TEXT_MESSAGE_START);
    expect(started.map((e) => e.messageId)).toEqual(['sig', 'fresh']);
  });

  it('SYNTHETIC: the input messages ride on RUN_STARTED, for followers who never saw the request', async () => {
    const inputMessages = [{ id: 'u1', role: 'user' as const, content: 'hi' }];
    const events = translate([], { inputMessages });
    await expectValidRun(events);
    expect(events[0]).toEqual({ type: EventType.RUN_STARTED, ...IDS, input: { ...IDS, messages: inputMessages, tools: [], context: [] } });
    expect(translate([])[0]).not.toHaveProperty('input');
  });

  it('SYNTHETIC: a tool-result for a call never streamed gets START / ARGS / END first', async () => {
    const events = translate([synthetic({ type: 'tool-result', payload: { toolCallId: 'c1', toolName: 'lookup', result: 42 } })]);
    await expectValidRun(events);
    expect(events.filter((e) => e.type.startsWith('TOOL_CALL_'))).toEqual([
      { type: EventType.TOOL_CALL_START, toolCallId: 'c1', toolCallName: 'lookup', parentMessageId: 'r' },
      { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: '{}' },
      { type: EventType.TOOL_CALL_END, toolCallId: 'c1' },
      { type: EventType.TOOL_CALL_RESULT, messageId: `${TOOL_RESULT_PREFIX}c1`, toolCallId: 'c1', content: '42', role: 'tool' },
    ]);
  });

  it('SYNTHETIC: a tool-result flagged isError says error', () => {
    const events = translate([synthetic({ type: 'tool-result', payload: { toolCallId: 'c1', toolName: 'lookup', result: new Error('boom'), isError: true } })]);
    expect(JSON.parse(only(events, EventType.TOOL_CALL_RESULT).content as string)).toEqual({ error: 'boom' });
  });

  it('SYNTHETIC: a second result for the same call is dropped', () => {
    const result = synthetic({ type: 'tool-result', payload: { toolCallId: 'c1', toolName: 'lookup', result: 1 } });
    expect(ofType(translate([result, result]), EventType.TOOL_CALL_RESULT)).toHaveLength(1);
  });

  it('tripwire-input: an input guardrail ends the run with RUN_ERROR TRIPWIRE, its reason, the processor and what it said', async () => {
    const events = translate(fixture('tripwire-input').chunks);
    await expectValidRun(events);
    expect(terminal(events)).toEqual({
      type: EventType.RUN_ERROR,
      message: 'The message names a forbidden topic',
      code: 'TRIPWIRE',
      metadata: { processorId: 'block-forbidden-input', processorMetadata: { category: 'policy' } },
    });
  });

  it('tripwire-step: a step guardrail that blocks the streamed answer ends the run with RUN_ERROR TRIPWIRE, not RUN_FINISHED', async () => {
    const { chunks } = fixture('tripwire-step');
    const events = translate(chunks);
    await expectValidRun(events);
    expect(textOf(events)).toBe(deltaText(chunks, 'text-delta'));
    expect(terminal(events)).toEqual({
      type: EventType.RUN_ERROR,
      message: 'The answer contains personal data',
      code: 'TRIPWIRE',
      metadata: { processorId: 'block-secret-answers', processorMetadata: { category: 'pii' } },
    });
  });

  it('processor-retry: both attempts stream as their own text messages, the run finishes, and it retracts (the first attempt is not kept)', async () => {
    const { chunks } = fixture('processor-retry');
    const { translator, perChunk, start, end } = translateEach(chunks);
    const events = [...start, ...perChunk.flatMap((p) => p.events), ...end];
    await expectValidRun(events);
    const starts = events.filter((e) => e.type === EventType.TEXT_MESSAGE_START);
    expect(starts).toHaveLength(2);
    expect(new Set(starts.map((e) => e.messageId)).size).toBe(2);
    expect(textOf(events)).toBe(deltaText(chunks, 'text-delta'));
    expect(terminal(events).type).toBe(EventType.RUN_FINISHED);
    expect(translator.retracts).toBe(true);
  });

  it('tripwire-step and tripwire-stream retract what streamed; tripwire-input and a clean run retract nothing', () => {
    const retracts = (name: string) => translateEach(fixture(name).chunks).translator.retracts;
    expect(retracts('tripwire-step')).toBe(true);
    expect(retracts('tripwire-stream')).toBe(true);
    expect(retracts('tripwire-input')).toBe(false);
    expect(retracts('echo')).toBe(false);
    expect(retracts('server-tool')).toBe(false);
  });

  it('tripwire-stream: the text before the stopping word streamed, then RUN_ERROR TRIPWIRE with the processor', async () => {
    const { chunks } = fixture('tripwire-stream');
    const events = translate(chunks);
    await expectValidRun(events);
    expect(textOf(events)).toBe(deltaText(chunks, 'text-delta'));
    expect(terminal(events)).toEqual({
      type: EventType.RUN_ERROR,
      message: 'The answer names classified material',
      code: 'TRIPWIRE',
      metadata: { processorId: 'stop-classified-stream', processorMetadata: { category: 'classified' } },
    });
  });

  it('SYNTHETIC: tripwire ends the run with RUN_ERROR TRIPWIRE and the reason', async () => {
    const events = translate([
      synthetic({ type: 'text-start', payload: { id: 'p' } }),
      synthetic({ type: 'text-delta', payload: { id: 'p', text: 'partial' } }),
      synthetic({ type: 'tripwire', payload: { reason: 'blocked by moderation' } }),
    ]);
    await expectValidRun(events);
    expect(terminal(events)).toEqual({ type: EventType.RUN_ERROR, message: 'blocked by moderation', code: 'TRIPWIRE' });
    const fallback = translate([synthetic({ type: 'tripwire', payload: { reason: '' } })]);
    expect(terminal(fallback)).toMatchObject({ type: EventType.RUN_ERROR, code: 'TRIPWIRE', message: expect.stringMatching(/guardrail/) });
  });

  it('SYNTHETIC: a custom data-foo chunk (writer.custom) becomes CUSTOM with its data', async () => {
    const events = translate([{ type: 'data-foo', data: { progress: 0.5 } }]);
    await expectValidRun(events);
    expect(only(events, EventType.CUSTOM)).toEqual({ type: EventType.CUSTOM, name: 'data-foo', value: { progress: 0.5 } });
  });

  it('SYNTHETIC: a data-user-message with attributes puts them in metadata; file parts show as placeholders', async () => {
    const events = translate([
      {
        type: 'data-user-message',
        runId: 'r',
        transient: true,
        data: {
          id: 'sig-1',
          type: 'user',
          createdAt: '2026-01-01T00:00:00.000Z',
          attributes: { channel: 'email' },
          contents: [
            { type: 'text', text: 'see ' },
            { type: 'file', data: 'AAAA', mediaType: 'image/png', filename: 'a.png' },
          ],
        },
      },
    ]);
    await expectValidRun(events);
    expect(only(events, EventType.TEXT_MESSAGE_START)).toEqual({
      type: EventType.TEXT_MESSAGE_START,
      messageId: 'sig-1',
      role: 'user',
      metadata: { attributes: { channel: 'email' } },
    });
    expect(textOf(events, 'user')).toBe('see [file a.png]');
  });

  it('SYNTHETIC: tool-call-suspended ends the run with a tool_suspended interrupt carrying the suspend payload', async () => {
    const events = translate([
      synthetic({
        type: 'tool-call-suspended',
        payload: { toolCallId: 'c9', toolName: 'ask_user', args: { q: 'why?' }, suspendPayload: { prompt: 'why?' }, resumeSchema: '{"type":"object"}' },
      }),
    ]);
    await expectValidRun(events);
    expect(terminal(events)).toMatchObject({
      type: EventType.RUN_FINISHED,
      outcome: {
        type: 'interrupt',
        interrupts: [
          { id: 'r::c9', reason: 'tool_suspended', toolCallId: 'c9', responseSchema: { type: 'object' }, metadata: { suspendPayload: { prompt: 'why?' } } },
        ],
      },
    });
  });

  it('SYNTHETIC: background-task failed and output updates', async () => {
    const task = { taskId: 'bt1', toolName: 'slow', toolCallId: 'c1', runId: 'mastra-run', agentId: 'demo' };
    const events = translate([
      synthetic({ type: 'background-task-started', payload: { taskId: 'bt1', toolName: 'slow', toolCallId: 'c1' } }),
      synthetic({ type: 'background-task-progress', payload: { taskIds: ['bt1'], runningCount: 1, elapsedMs: 10 } }),
      synthetic({ type: 'background-task-output', payload: { ...task, payload: { type: 'tool-output', payload: { output: 'x' } } } }),
      synthetic({ type: 'background-task-failed', payload: { ...task, error: { message: 'disk full' }, completedAt: '2026-01-01T00:00:00.000Z' } }),
    ]);
    await expectValidRun(events, IDS, ['c1']);
    const deltas = ofType(events, EventType.ACTIVITY_DELTA).map((e) => e.patch);
    expect(deltas.at(-1)).toEqual([
      { op: 'replace', path: '/status', value: 'failed' },
      { op: 'add', path: '/error', value: 'disk full' },
    ]);
    // Output chunks are not a status: the activity must not read "output" in between.
    expect(deltas.flat().some((op) => (op as { value?: unknown }).value === 'output')).toBe(false);
  });

  it('SYNTHETIC: a Mastra-wrapped error chunk reports the inner message', () => {
    const events = translate([synthetic({ type: 'error', payload: { error: { message: 'Tool failed', cause: { message: 'socket hang up' } } } })]);
    expect(terminal(events)).toEqual({ type: EventType.RUN_ERROR, message: 'socket hang up', code: 'MODEL_ERROR' });
  });
});

// ── the translator's own API ──────────────────────────────────────────

describe('RunTranslator: lifecycle', () => {
  it('end() with no chunk is RUN_STARTED then RUN_FINISHED, and then nothing more', async () => {
    const t = new RunTranslator(IDS);
    const events = [...t.start(), ...t.start(), ...t.end()];
    await expectValidRun(events);
    expect(types(events)).toEqual([EventType.RUN_STARTED, EventType.RUN_FINISHED]);
    expect(t.finished).toBe(true);
    const { chunks } = fixture('echo');
    expect([...t.push(chunks[0]), ...t.end(), ...t.fail('x'), ...t.cancel()]).toEqual([]);
  });

  it('fail() closes what the fixture left open and ends with RUN_ERROR', async () => {
    const { chunks } = fixture('reasoning');
    const cut = chunks.findIndex((c) => c.type === 'reasoning-delta') + 1;
    const t = new RunTranslator(IDS);
    const events = [...t.start(), ...chunks.slice(0, cut).flatMap((c) => t.push(c)), ...t.fail('socket closed', 'RUN_FAILED')];
    await expectValidRun(events);
    expect(terminal(events)).toEqual({ type: EventType.RUN_ERROR, message: 'socket closed', code: 'RUN_FAILED' });
    expect(t.fail('again')).toEqual([]);
  });

  it('cancel() mid tool call closes the call and ends cancelled', async () => {
    const { chunks } = fixture('server-tool');
    const cut = chunks.findIndex((c) => c.type === 'tool-call-delta') + 1;
    const t = new RunTranslator(IDS);
    const events = [...t.start(), ...chunks.slice(0, cut).flatMap((c) => t.push(c)), ...t.cancel()];
    await expectValidRun(events);
    expect(terminal(events)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } });
  });

  it('push() without start() still opens the run first', () => {
    const { chunks } = fixture('echo');
    const t = new RunTranslator(IDS);
    expect(t.push(chunks[0])[0]).toEqual({ type: EventType.RUN_STARTED, ...IDS });
  });
});
