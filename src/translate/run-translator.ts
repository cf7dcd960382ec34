import { EventType, type Event, type Message, type TokenUsage } from '@ag-ui/core';
import { BackgroundTasks, isBackgroundTaskType } from './background-tasks.js';
import { CAPTURED_TOOL_RESULTS, isDataChunk, isLostRemoteRun, isSignalEcho, type MastraChunk } from './chunks.js';
import { Delegations } from './delegations.js';
import { GUARDRAIL_STOPPED, LOST_RUN, runFailure } from './failure.js';
import { clientRunIdOf, type MessagePosition } from './ids.js';
import type { CutStep } from './retraction.js';
import { runEndActivity } from './run-end.js';
import { RunSteps } from './run-steps.js';
import { signalEchoEvents } from './signal-echo.js';
import { TextStreams } from './text-streams.js';
import { ToolCalls, type ToolCallOptions } from './tool-calls.js';
import { trippedStep, tripwireMetadata, type Tripwire } from './tripwire.js';
import { toTokenUsage } from './values.js';
import { WorkflowActivities, type WorkflowActivityContent } from './workflow-activity.js';

/** How a run is translated. Its tool calls' options are declared with `ToolCallOptions`, the part that reads them. */
export interface RunTranslatorOptions extends ToolCallOptions {
  threadId: string;
  /** The AG-UI run id written on `RUN_STARTED` and the terminal event. */
  runId: string;
  /**
   * The Mastra run id, when it differs from `runId` (a resumed run): interrupt ids and the run-end
   * message name it, as the thread's stream and history do. Default `runId`.
   */
  mastraRunId?: string;
  /**
   * Where the stored assistant message that this run's answer is appended to stands: Mastra merges
   * a run that adds no message of its own (it only answers tool calls, or it goes on after a
   * background task) into the latest assistant message, so the answer must carry that message's
   * ids, as history does. Dropped if the run turns out to start with a message (a signal echo).
   */
  appendsTo?: MessagePosition;
  /**
   * What the activities of the workflow calls this run may resume showed when they suspended (the
   * thread keeps them: `WorkflowActivities`), so that their steps before the suspension stay shown.
   */
  workflowActivities?: Readonly<Record<string, WorkflowActivityContent>>;
  /**
   * The messages the run answers, sent as `RUN_STARTED.input` (the reducer adds those it lacks):
   * for followers of a thread, who never saw the request that started the run.
   */
  inputMessages?: Message[];
}

/**
 * Turns the chunks of one Mastra run into AG-UI events: a pure state machine, one per run. Its
 * parts keep one kind of state each: the steps (`RunSteps`), text and reasoning (`TextStreams`),
 * tool calls and interrupts (`ToolCalls`), background tasks, sub-agents and workflow calls.
 *
 * `start()` opens the run, `push(chunk)` maps each chunk, and `end()` closes whatever is still open
 * and writes the terminal event if no chunk did. After the terminal event every call returns `[]`.
 *
 * @example
 * const t = new RunTranslator({ threadId: 't1', runId: 'r1' });
 * const events = [...t.start()];
 * for await (const chunk of output.fullStream) events.push(...t.push(chunk));
 * events.push(...t.end());
 */
export class RunTranslator {
  private readonly threadId: string;
  private readonly runId: string;
  private readonly mastraRunId: string;
  /** What the run-end message is named after: the run as clients know it, one id for its `/run`, its thread stream and history. */
  private readonly endsRunId: string;
  private readonly inputMessages?: Message[];
  private started = false;
  private terminated = false;
  private usage?: TokenUsage;

  private readonly steps: RunSteps;
  private readonly texts: TextStreams;
  private readonly delegations = new Delegations();
  private readonly calls: ToolCalls;
  private readonly tasks: BackgroundTasks;
  private readonly workflows: WorkflowActivities;

  constructor(options: RunTranslatorOptions) {
    this.threadId = options.threadId;
    this.runId = options.runId;
    this.mastraRunId = options.mastraRunId ?? options.runId;
    this.endsRunId = clientRunIdOf(options.threadId, this.mastraRunId);
    if (options.inputMessages?.length) this.inputMessages = options.inputMessages;
    this.steps = new RunSteps(options.runId, options.appendsTo);
    this.texts = new TextStreams(this.steps);
    this.calls = new ToolCalls(this.mastraRunId, options, this.steps, this.delegations);
    this.tasks = new BackgroundTasks(this.calls);
    this.workflows = new WorkflowActivities(options.workflowActivities);
  }

  /** The activities of the workflow calls this run showed, as they stand: what the thread keeps for history and for a resume. */
  get workflowActivities(): Record<string, WorkflowActivityContent> {
    return this.workflows.touched();
  }

  /** Whether the terminal event has been produced. */
  get finished(): boolean {
    return this.terminated;
  }

  /** Whether the run stopped to wait for a human (approval or a suspended tool). */
  get interrupted(): boolean {
    return this.calls.interrupted;
  }

  /** Whether the run stopped to wait on call `toolCallId`: a resumed call that asks again (a workflow suspended at its next step). */
  waitsOn(toolCallId: string): boolean {
    return this.calls.waitsOn(toolCallId);
  }

  /**
   * Whether the client was shown something Mastra did not keep: a step a processor turned down
   * (`abort(…, { retry: true })`) or blocked. The caller then sends the thread as stored before the
   * terminal event (`beforeTerminal`), which this pure translator cannot read.
   */
  get retracts(): boolean {
    return this.steps.discarded;
  }

  /**
   * What the step in progress showed that Mastra does not keep when the run is cut there: its
   * reasoning (Mastra saves a cut step's text alone, under a new id). `undefined` when it showed none.
   */
  get cutStep(): CutStep | undefined {
    return this.steps.cutStep;
  }

  /** Where the numbering of the stored message stands (what a run appended to it goes on from); none before a step. */
  position(): MessagePosition | undefined {
    return this.steps.position();
  }

  /** `RUN_STARTED`, once. */
  start(): Event[] {
    if (this.started) return [];
    this.started = true;
    const { threadId, runId, inputMessages } = this;
    const input = inputMessages && { threadId, runId, messages: inputMessages, tools: [], context: [] };
    return [{ type: EventType.RUN_STARTED, threadId, runId, ...(input && { input }) }];
  }

  /** Maps one chunk to zero or more events. */
  push(chunk: MastraChunk): Event[] {
    if (this.terminated) return [];
    const out = this.start();
    this.map(chunk, out);
    return out;
  }

  /** Closes everything still open and finishes the run (with an interrupt outcome if one was met). */
  end(): Event[] {
    if (this.terminated) return [];
    const out = this.start();
    this.finish(out);
    return out;
  }

  /** Closes everything still open and ends the run with its run-end message and `RUN_ERROR`. */
  fail(message: string, code = 'INTERNAL_ERROR', metadata?: Record<string, unknown>): Event[] {
    if (this.terminated) return [];
    const out = this.start();
    this.closeAll(out);
    this.terminated = true;
    out.push(runEndActivity(this.endsRunId, { outcome: 'failed', code, message }));
    out.push({ type: EventType.RUN_ERROR, message, code, ...(metadata && { metadata }) });
    return out;
  }

  /** Ends the run as cancelled (the client or an operator aborted it), after its run-end message. */
  cancel(): Event[] {
    if (this.terminated) return [];
    const out = this.start();
    this.closeAll(out);
    this.terminated = true;
    out.push(runEndActivity(this.endsRunId, { outcome: 'cancelled' }));
    out.push({ type: EventType.RUN_FINISHED, threadId: this.threadId, runId: this.runId, outcome: { type: 'cancelled' } });
    return out;
  }

  /**
   * Turns the `RUN_FINISHED` that ends `events` (this run's) into a cancelled one, after its
   * run-end message: the run was cut between two steps (an abort that found no step streaming),
   * and Mastra ended it with a plain `finish`. Answers whether it did; an interrupt's end is left as it is.
   */
  endAsCancelled(events: Event[]): boolean {
    const end = events.at(-1);
    if (end?.type !== EventType.RUN_FINISHED || end.outcome) return false;
    end.outcome = { type: 'cancelled' };
    events.splice(-1, 0, runEndActivity(this.endsRunId, { outcome: 'cancelled' }));
    return true;
  }

  private map(chunk: MastraChunk, out: Event[]): void {
    // Most chunks of a run are text deltas: straight to their message.
    if (chunk.type === 'text-delta') return this.texts.delta('text', chunk.payload.id, chunk.payload.text, out);
    if (isSignalEcho(chunk)) {
      this.steps.startsOwnMessage();
      out.push(...signalEchoEvents(chunk));
    } else if (this.calls.hides(chunk)) {
      return;
    } else if (isDataChunk(chunk)) {
      out.push({ type: EventType.CUSTOM, name: chunk.type, value: chunk.data });
    } else if (!this.mapContent(chunk, out) && !this.mapToolChunk(chunk, out)) {
      this.mapRunChunk(chunk, out);
    }
  }

  /** Steps, text (its deltas come first, in `map`) and reasoning. Answers whether the chunk was one of those. */
  private mapContent(chunk: MastraChunk, out: Event[]): boolean {
    switch (chunk.type) {
      case 'step-start':
        this.steps.start(chunk.payload.messageId, out);
        return true;
      case 'step-finish':
        this.closeStreams(out);
        // Mastra's step reasons go beyond its declared type: `retry` is a processor's.
        this.steps.finish((chunk.payload.stepResult?.reason as string | undefined) === 'retry', out);
        return true;
      case 'text-start':
        this.texts.start('text', chunk.payload.id, out);
        return true;
      case 'text-end':
        this.texts.end('text', chunk.payload.id, out);
        return true;
      case 'reasoning-start':
        this.texts.start('reasoning', chunk.payload.id, out);
        return true;
      case 'reasoning-delta':
        this.texts.delta('reasoning', chunk.payload.id, chunk.payload.text, out);
        return true;
      case 'reasoning-end':
        this.texts.end('reasoning', chunk.payload.id, out);
        return true;
      default:
        return false;
    }
  }

  /** Tool calls, their results and pauses, and what a sub-agent or workflow call relays. Answers whether the chunk was one of those. */
  private mapToolChunk(chunk: MastraChunk, out: Event[]): boolean {
    switch (chunk.type) {
      case CAPTURED_TOOL_RESULTS:
        this.closeStreams(out);
        this.calls.captured(chunk.results, out);
        return true;
      case 'tool-call-input-streaming-start':
        this.calls.start(chunk.payload.toolCallId, chunk.payload.toolName, out);
        return true;
      case 'tool-call-delta':
        this.calls.args(chunk.payload.toolCallId, chunk.payload.toolName ?? 'unknown', chunk.payload.argsTextDelta, out);
        return true;
      case 'tool-call-input-streaming-end':
        this.calls.end(chunk.payload.toolCallId, out);
        return true;
      case 'tool-call':
        this.calls.atomic(chunk.payload.toolCallId, chunk.payload.toolName, chunk.payload.args, out);
        return true;
      case 'tool-output':
        this.workflows.relay(chunk.payload, out);
        this.delegations.relay(chunk.payload, out);
        return true;
      case 'tool-result':
        this.calls.result(chunk.payload, out);
        return true;
      case 'tool-error':
        this.calls.error(chunk.payload, out);
        return true;
      case 'tool-output-denied':
        this.calls.denied(chunk.payload, out);
        return true;
      case 'tool-call-approval':
        this.calls.interrupt(chunk.payload, 'tool_approval', undefined, out);
        return true;
      case 'tool-call-suspended':
        this.calls.interrupt(chunk.payload, 'tool_suspended', chunk.payload.suspendPayload, out);
        return true;
      default:
        return false;
    }
  }

  /** The run's end, and what else Mastra streams beside the answer. */
  private mapRunChunk(chunk: MastraChunk, out: Event[]): void {
    switch (chunk.type) {
      case 'finish': {
        this.usage = toTokenUsage(chunk.payload.output?.usage, chunk.payload.metadata);
        const tripwire = trippedStep(chunk.payload);
        return void out.push(...(tripwire ? this.tripped(tripwire) : this.end()));
      }
      case 'error': {
        // A storage failure comes as an `error` chunk too, as does a lost run of another process.
        const { message, code } = isLostRemoteRun(chunk) ? LOST_RUN : runFailure(chunk.payload.error, 'MODEL_ERROR');
        return void out.push(...this.fail(message, code));
      }
      case 'tripwire':
        return void out.push(...this.tripped(chunk.payload));
      case 'abort':
        return void out.push(...this.cancel());
      case 'object-result':
        return void out.push({ type: EventType.CUSTOM, name: 'mastra.object-result', value: chunk.object });
      case 'source':
      case 'file':
      case 'goal':
      case 'is-task-complete':
        return void out.push({ type: EventType.CUSTOM, name: `mastra.${chunk.type}`, value: chunk.payload });
      default:
        if (isBackgroundTaskType(chunk.type) && 'payload' in chunk) this.tasks.update(chunk.type, chunk.payload, out);
    }
  }

  /** A guardrail (a processor's `abort`) stopped the run: `RUN_ERROR TRIPWIRE`, with its reason. */
  private tripped(tripwire: Tripwire): Event[] {
    this.steps.discardIfShown();
    return this.fail(tripwire.reason || GUARDRAIL_STOPPED, 'TRIPWIRE', tripwireMetadata(tripwire));
  }

  private closeStreams(out: Event[]): void {
    this.texts.closeAll(out);
    this.calls.closeAll(out);
  }

  private closeAll(out: Event[]): void {
    this.delegations.closeAll('The run ended before the sub-agent finished', out);
    this.closeStreams(out);
    this.steps.closeAll(out);
  }

  private finish(out: Event[]): void {
    this.closeAll(out);
    this.terminated = true;
    const outcome = this.calls.outcome();
    out.push({
      type: EventType.RUN_FINISHED,
      threadId: this.threadId,
      runId: this.runId,
      ...(outcome && { outcome }),
      ...(this.usage && { usage: [this.usage] }),
    });
  }
}
