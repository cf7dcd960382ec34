import { readFileSync } from 'node:fs';
import { defaultApplyEvents, enforceEvents, transformChunks, verifyEvents, type AbstractAgent, type BaseEvent, type Message } from '@ag-ui/client';
import { EventType, type Event } from '@ag-ui/core';
import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { MastraChunk } from './chunks.js';
import { ThreadTranslator } from './thread-translator.js';

/**
 * The thread translator on subscription chunk sequences recorded from real demo-agent runs
 * (`test/fixtures/chunks/signal-*.json`): one bracket per Mastra run, nothing outside a bracket,
 * and a stream `@ag-ui/client` accepts. Hand-made chunks appear only where no recording has them.
 */

const FIXTURES = [
  'signal-wake',
  'signal-deliver-during-run',
  'signal-persist',
  'signal-approval',
  'signal-abort',
  'signal-model-error',
  'agent-workflow-suspend',
  'agent-workflow-resume',
] as const;
type FixtureName = (typeof FIXTURES)[number];

function chunks(name: FixtureName): Array<MastraChunk & { runId: string }> {
  const url = new URL(`../../test/fixtures/chunks/${name}.json`, import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { chunks: Array<MastraChunk & { runId: string }> }).chunks;
}

const THREAD = 'thread-1';
type AnyEvent = Event & Record<string, any>;

function translate(input: MastraChunk[], translator = new ThreadTranslator(THREAD)): AnyEvent[] {
  return input.flatMap((chunk) => translator.push(chunk)) as AnyEvent[];
}

/** Splits events into brackets; fails on anything outside one. */
function bracketsOf(events: AnyEvent[]): AnyEvent[][] {
  const out: AnyEvent[][] = [];
  let open = false;
  for (const e of events) {
    if (e.type === EventType.RUN_STARTED) {
      expect(open, 'RUN_STARTED inside an open bracket').toBe(false);
      out.push([]);
      open = true;
    }
    expect(open, `${e.type} outside a bracket`).toBe(true);
    out[out.length - 1].push(e);
    if (e.type === EventType.RUN_FINISHED || e.type === EventType.RUN_ERROR) open = false;
  }
  return out;
}

const runIdsOf = (input: MastraChunk[]) => [...new Set(input.map((c) => (c as { runId?: string }).runId))];

async function expectValid(events: AnyEvent[]): Promise<void> {
  const warnings: string[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => warnings.push(args.map(String).join(' '));
  try {
    const verified = await lastValueFrom(from(events as BaseEvent[]).pipe(enforceEvents(), transformChunks(), verifyEvents(), toArray()));
    expect(verified).toHaveLength(events.length);
  } finally {
    console.warn = warn;
  }
  expect(warnings).toEqual([]);
}

/** The messages `@ag-ui/client`'s reducer ends up with. */
async function fold(events: AnyEvent[]): Promise<Array<Message & Record<string, any>>> {
  const agent = { messages: [], state: {}, pendingInterrupts: [] } as unknown as AbstractAgent;
  const input = { threadId: THREAD, runId: 'fold', messages: [], tools: [], context: [], state: {}, forwardedProps: {} };
  const mutations = await lastValueFrom(defaultApplyEvents(input, from(events as BaseEvent[]), agent, []).pipe(toArray()));
  return (mutations.filter((m) => m.messages).at(-1)?.messages ?? []) as Array<Message & Record<string, any>>;
}

const text = (run: AnyEvent[], messageId: string) =>
  run
    .filter((e) => e.type === EventType.TEXT_MESSAGE_CONTENT && e.messageId === messageId)
    .map((e) => e.delta)
    .join('');

describe('ThreadTranslator on recorded subscription chunks', () => {
  for (const name of FIXTURES) {
    it(`${name}: one bracket per Mastra run, named by its run id, valid for @ag-ui/client`, async () => {
      const input = chunks(name);
      const events = translate(input);
      const runs = bracketsOf(events);
      // signal-approval is one Mastra run in two brackets: paused, then resumed.
      const expected = name === 'signal-approval' ? [...runIdsOf(input), ...runIdsOf(input)] : runIdsOf(input);
      expect(runs.map((r) => r[0].runId)).toEqual(expected);
      for (const run of runs) {
        expect(run[0]).toEqual({ type: EventType.RUN_STARTED, threadId: THREAD, runId: run[0].runId });
        const terminal = run.at(-1) as AnyEvent;
        if (terminal.type === EventType.RUN_FINISHED) expect(terminal).toMatchObject({ threadId: THREAD, runId: run[0].runId });
      }
      await expectValid(events);
    });
  }

  it('signal-wake: the user echo carries the signal id, the answer follows in the same bracket', () => {
    const input = chunks('signal-wake');
    const echo = input.find((c) => c.type === 'data-user-message') as { data: { id: string; contents: string } };
    const [run] = bracketsOf(translate(input));
    expect(run[1]).toEqual({ type: EventType.TEXT_MESSAGE_START, messageId: echo.data.id, role: 'user' });
    expect(text(run, echo.data.id)).toBe(echo.data.contents);
    expect(run.at(-1)?.type).toBe(EventType.RUN_FINISHED);
  });

  it('signal-deliver-during-run: delivered message and notification inside the active bracket, the queued message opens the next', () => {
    const input = chunks('signal-deliver-during-run');
    const [first, second] = bracketsOf(translate(input));
    const echoes = input.filter((c) => c.type === 'data-user-message') as Array<{ runId: string; data: { id: string; contents: string } }>;
    const notification = input.find((c) => c.type === 'data-signal') as { data: { id: string; contents: string; attributes: unknown } };
    expect(text(first, echoes[1].data.id)).toBe('also Rome please');
    expect(first.find((e) => e.type === EventType.ACTIVITY_SNAPSHOT)).toEqual({
      type: EventType.ACTIVITY_SNAPSHOT,
      messageId: notification.data.id,
      activityType: 'signal.notification',
      content: { tagName: 'notification', contents: 'Build #42 finished', attributes: notification.data.attributes },
    });
    expect(second[0].runId).toBe(echoes[2].runId);
    expect(text(second, echoes[2].data.id)).toBe('queued follow-up');
  });

  it('signal-persist: a bracket with the stored signal only', () => {
    const [run] = bracketsOf(translate(chunks('signal-persist')));
    expect(run.map((e) => e.type)).toEqual([EventType.RUN_STARTED, EventType.ACTIVITY_SNAPSHOT, EventType.RUN_FINISHED]);
    expect(run[1]).toMatchObject({ activityType: 'signal.reactive', content: { tagName: 'system-reminder', contents: 'fyi' } });
  });

  it("signal-approval: the pause ends the bracket with an interrupt; the resumed bracket sends the call's result alone (the client holds the call)", async () => {
    const input = chunks('signal-approval');
    const approval = input.find((c) => c.type === 'tool-call-approval') as { payload: { toolCallId: string } };
    const events = translate(input);
    const [paused, resumed] = bracketsOf(events);
    expect(paused.at(-1)).toMatchObject({
      type: EventType.RUN_FINISHED,
      outcome: { type: 'interrupt', interrupts: [{ toolCallId: approval.payload.toolCallId, reason: 'tool_approval' }] },
    });
    expect(resumed[1].type).toBe(EventType.TOOL_CALL_RESULT);
    expect(resumed.filter((e) => e.type === EventType.TOOL_CALL_START || e.type === EventType.TOOL_CALL_ARGS)).toEqual([]);
    expect(resumed.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
    expect(resumed.at(-1)?.outcome).toBeUndefined();
    // Folded by a client: one call, its arguments once, one result.
    const messages = await fold(events);
    const calls = messages.flatMap((m) => m.toolCalls ?? []);
    expect(calls).toHaveLength(1);
    expect(JSON.parse(calls[0].function.arguments)).toEqual({ path: 'a.txt' });
    expect(messages.filter((m) => m.role === 'tool')).toHaveLength(1);
    // The stream saw the call ask for approval: its result, in the next bracket, says it was approved.
    expect(messages.find((m) => m.role === 'tool')?.metadata).toEqual({ approval: 'approved' });
  });

  it('a resumption this translator never saw paused (the process restarted) does not announce the call again either', () => {
    const input = chunks('signal-approval');
    const resumeAt = input.findIndex((c) => c.type === 'tool-result');
    const [run] = bracketsOf(translate(input.slice(resumeAt)));
    expect(run.slice(0, 2).map((e) => e.type)).toEqual([EventType.RUN_STARTED, EventType.TOOL_CALL_RESULT]);
    expect(run.at(-1)?.type).toBe(EventType.RUN_FINISHED);
    // Nor does it know the call waited for an approval (history does: docs/event-mapping.md).
    expect(run[1]).not.toHaveProperty('metadata');
  });

  it('signal-abort: open messages are closed and the bracket ends cancelled', () => {
    const [run] = bracketsOf(translate(chunks('signal-abort')));
    expect(run.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } });
    const started = run.filter((e) => e.type === EventType.TEXT_MESSAGE_START).map((e) => e.messageId);
    const ended = run.filter((e) => e.type === EventType.TEXT_MESSAGE_END).map((e) => e.messageId);
    expect(ended).toEqual(started);
  });

  it('cancel() ends a run cut before its end came as cancelled, and its `abort` trailing later opens nothing', () => {
    const all = chunks('signal-abort');
    const at = all.findIndex((c) => c.type === 'abort');
    const translator = new ThreadTranslator(THREAD);
    const before = translate(all.slice(0, at), translator);
    const cut = translator.cancel() as AnyEvent[];
    expect(cut.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } });
    const [run] = bracketsOf([...before, ...cut]);
    const started = run.filter((e) => e.type === EventType.TEXT_MESSAGE_START).map((e) => e.messageId);
    expect(run.filter((e) => e.type === EventType.TEXT_MESSAGE_END).map((e) => e.messageId)).toEqual(started);
    expect(translate(all.slice(at), translator)).toEqual([]);
    expect(translator.cancel()).toEqual([]);
  });

  it('a run an abort cut between two steps (Mastra ends it with a plain `finish`) ends cancelled, and counts as cut', () => {
    const all = chunks('signal-deliver-during-run');
    const cutRun = all[0].runId;
    const translator = new ThreadTranslator(THREAD, { wasCut: (runId) => runId === cutRun });
    const brackets = bracketsOf(translate(all, translator));
    expect(brackets[0].at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, runId: cutRun, outcome: { type: 'cancelled' } });
    // The other runs of the recording were not cut: they end as Mastra ended them.
    for (const run of brackets.slice(1)) expect(run.at(-1)).not.toHaveProperty('outcome.type', 'cancelled');
    const plain = bracketsOf(translate(all));
    expect(plain[0].at(-1)).not.toHaveProperty('outcome');
  });

  it('a cut run that paused for approval keeps its interrupt', () => {
    const all = chunks('signal-approval');
    const translator = new ThreadTranslator(THREAD, { wasCut: () => true });
    const [paused] = bracketsOf(translate(all, translator));
    expect(paused.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'interrupt' } });
  });

  it('signal-model-error: RUN_ERROR; a `finish` trailing the failed run opens nothing; the next run gets its own bracket', async () => {
    const failed = chunks('signal-model-error');
    const runId = failed[0].runId;
    const trailing = { type: 'finish', runId, from: 'AGENT', payload: { stepResult: { reason: 'stop' }, output: { usage: {} } } } as unknown as MastraChunk;
    const events = translate([...failed, trailing, ...chunks('signal-wake')]);
    const runs = bracketsOf(events);
    expect(runs).toHaveLength(2);
    expect(runs[0].at(-1)).toMatchObject({ type: EventType.RUN_ERROR, message: 'demo model failure', code: 'MODEL_ERROR' });
    expect(runs[1].at(-1)?.type).toBe(EventType.RUN_FINISHED);
    await expectValid(events);
  });

  it("a thread's life (every recording in a row on one translator) is one valid stream", async () => {
    const translator = new ThreadTranslator(THREAD);
    const events = FIXTURES.flatMap((name) => translate(chunks(name), translator));
    expect(bracketsOf(events).length).toBeGreaterThanOrEqual(FIXTURES.length + 2);
    await expectValid(events);
  });

  it('close() ends an open bracket with everything in it closed', async () => {
    const input = chunks('signal-wake');
    const cut = input.findIndex((c) => c.type === 'text-delta') + 1;
    const translator = new ThreadTranslator(THREAD);
    const events = translate(input.slice(0, cut), translator);
    expect(translator.open).toBe(true);
    events.push(...(translator.close() as AnyEvent[]));
    expect(translator.open).toBe(false);
    expect(events.at(-1)?.type).toBe(EventType.RUN_FINISHED);
    expect(translator.close()).toEqual([]);
    await expectValid(events);
  });

  it('a run that switches without a terminal chunk: the previous bracket is closed first', async () => {
    const first = chunks('signal-wake');
    const cut = first.findIndex((c) => c.type === 'text-delta') + 1;
    const events = translate([...first.slice(0, cut), ...chunks('signal-persist')]);
    const runs = bracketsOf(events);
    expect(runs.map((r) => r[0].runId)).toEqual([first[0].runId, chunks('signal-persist')[0].runId]);
    await expectValid(events);
  });

  describe('task-manager chunks (no top-level runId)', () => {
    const completed = (runId: string) =>
      ({
        type: 'background-task-completed',
        payload: { taskId: 'task-1', toolName: 'slow_task', toolCallId: 'call-1', runId, result: { done: true } },
      }) as unknown as MastraChunk;

    it('while no run is open: a bracket of their own, named by the payload run', async () => {
      const events = translate([...chunks('signal-wake'), completed('run-of-the-task')]);
      const runs = bracketsOf(events);
      expect(runs).toHaveLength(2);
      // The call (the client holds it) gets the task's result alone, then the activity its final state.
      expect(runs[1].map((e) => e.type)).toEqual([EventType.RUN_STARTED, EventType.TOOL_CALL_RESULT, EventType.ACTIVITY_SNAPSHOT, EventType.RUN_FINISHED]);
      expect(runs[1][0].runId).toBe('run-of-the-task');
      expect(runs[1][1]).toMatchObject({ toolCallId: 'call-1', content: '{"done":true}' });
      expect(runs[1][2]).toMatchObject({ activityType: 'background-task', content: { taskId: 'task-1', status: 'completed', result: { done: true } } });
      await expectValid(events);
    });

    it('naming no run at all: each bracket gets an id of its own', async () => {
      const orphan = (taskId: string) =>
        ({ type: 'background-task-completed', payload: { taskId, toolName: 'slow_task', toolCallId: `call-${taskId}`, result: 1 } }) as unknown as MastraChunk;
      let n = 0;
      const events = translate([orphan('a'), orphan('b')], new ThreadTranslator(THREAD, { newRunId: () => `bg-${++n}` }));
      expect(bracketsOf(events).map((run) => run[0].runId)).toEqual(['bg-1', 'bg-2']);
      await expectValid(events);
      // By default, a fresh uuid each.
      const [one, two] = bracketsOf(translate([orphan('a'), orphan('b')])).map((run) => run[0].runId as string);
      expect(one).toMatch(/^background-[0-9a-f-]{36}$/);
      expect(two).not.toBe(one);
    });

    it('while another run is open: inside that bracket, which goes on undivided', async () => {
      const wake = chunks('signal-wake');
      const cut = wake.findIndex((c) => c.type === 'text-delta') + 1;
      const events = translate([...wake.slice(0, cut), completed('some-earlier-run'), ...wake.slice(cut)]);
      const runs = bracketsOf(events);
      expect(runs).toHaveLength(1);
      expect(runs[0].some((e) => e.type === EventType.ACTIVITY_SNAPSHOT && e.activityType === 'background-task')).toBe(true);
      expect(runs[0].at(-1)?.type).toBe(EventType.RUN_FINISHED);
      await expectValid(events);
    });
  });

  describe('message ids across runs, as Mastra stores them', () => {
    const chunk = (runId: string, type: string, payload: Record<string, unknown> = {}) => ({ runId, type, payload }) as unknown as MastraChunk;
    const answer = (runId: string, messageId: string, text: string) => [
      chunk(runId, 'start'),
      chunk(runId, 'step-start', { messageId }),
      chunk(runId, 'text-delta', { id: `${runId}-t`, text }),
      chunk(runId, 'finish', {}),
    ];
    const textIds = (events: AnyEvent[]) => events.filter((e) => e.type === EventType.TEXT_MESSAGE_START).map((e) => e.messageId);

    it("a run announced by /run carries its input, and its answer's ids go on from where it said", async () => {
      const input = [{ id: 'u1', role: 'user' as const, content: 'hi' }];
      const appendsTo = { messageId: 'stored', segment: 0, hasToolCalls: true, texts: 0, reasonings: 0 };
      const translator = new ThreadTranslator(THREAD, { announced: (runId) => (runId === 'r1' ? { messages: input, appendsTo } : undefined) });
      const events = translate(answer('r1', 'fresh', 'x'), translator);
      await expectValid(events);
      expect(events[0].input).toMatchObject({ messages: input });
      expect(textIds(events)).toEqual(['stored-1']);
    });

    it('a run that starts with no message of its own (Mastra going on after a background task) continues the last answer', async () => {
      const events = translate([...answer('r1', 'm1', 'first'), ...answer('r1', 'm2', 'then')]);
      await expectValid(events);
      expect(textIds(events)).toEqual(['m1', 'm1-text-2']);
      // A message in between: the next answer is a message of its own.
      const echo = { runId: 'r2', type: 'data-user-message', data: { id: 's1', type: 'user', contents: 'go' } } as unknown as MastraChunk;
      const after = translate([...answer('r1', 'm1', 'first'), chunk('r2', 'start'), echo, ...answer('r2', 'm3', 'new').slice(1)]);
      expect(textIds(after)).toEqual(['m1', 's1', 'm3']);
    });
  });
});

describe('a workflow call suspended in one bracket and resumed in the next (agent-workflow-*)', () => {
  const activityOf = (events: AnyEvent[]) => events.find((e) => e.type === EventType.ACTIVITY_SNAPSHOT);

  it('the resumed bracket’s activity goes on from the steps the suspended one showed', () => {
    const translator = new ThreadTranslator(THREAD);
    const suspended = translate(chunks('agent-workflow-suspend'), translator);
    expect(activityOf(suspended)?.content).toMatchObject({ steps: [] });
    const resumed = translate(chunks('agent-workflow-resume'), translator);
    expect(activityOf(resumed)?.content.steps.map((s: { id: string }) => s.id)).toEqual(['draft', 'review']);
  });

  it('a translator that met the call only resumed starts from what it was given (the thread as stored)', () => {
    const stored = {
      workflowId: 'draft-and-send',
      status: 'suspended',
      steps: [
        { id: 'draft', status: 'success' },
        { id: 'review', status: 'suspended' },
      ],
    };
    const toolCallId = (chunks('agent-workflow-resume')[0] as unknown as { payload: { toolCallId: string } }).payload.toolCallId;
    const given = new ThreadTranslator(THREAD, { workflowActivities: { [toolCallId]: stored } });
    expect(activityOf(translate(chunks('agent-workflow-resume'), given))?.content.steps).toEqual(stored.steps);
    expect(activityOf(translate(chunks('agent-workflow-resume')))?.content.steps).toEqual([]);
  });
});
