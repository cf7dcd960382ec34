import { Delegations } from './delegations.js';
import { WorkflowActivities, type WorkflowActivityContent } from './workflow-activity.js';
import { EventType, type Event, type Interrupt, type Message, type RunFinishedEvent, type RunFinishedOutcome, type TokenUsage } from '@ag-ui/core';
import {
  CAPTURED_TOOL_RESULTS,
  WORKING_MEMORY_TOOL,
  isDataChunk,
  isLostRemoteRun,
  isSignalEcho,
  type CapturedToolResult,
  type MastraChunk,
  type SignalEchoChunk,
} from './chunks.js';
import { backgroundTaskId, interruptId, MessageNumbering, subagentRunId, toolResultMessageId, type MessagePosition } from './ids.js';
import { GUARDRAIL_STOPPED, LOST_RUN, runFailure } from './failure.js';
import { declinedContent, signalText, toolErrorContent, toolResultContent, toTokenUsage } from './values.js';
import { errorMessage } from '../text.js';
import type { CutStep } from './retraction.js';
import { runEndActivity } from './run-end.js';

/** A run of another process that stopped before its end was published (its process died, or it lost Redis). */

export interface RunTranslatorOptions {
  threadId: string;
  /** The AG-UI run id written on `RUN_STARTED` and the terminal event. */
  runId: string;
  /**
   * The Mastra run id, when it differs from `runId` (a resumed run): interrupt ids and the run-end
   * message name it, as the thread's stream and history do. Default `runId`.
   */
  mastraRunId?: string;
  /** Names of tools the client executes (AG-UI `RunAgentInput.tools`). */
  frontendTools?: ReadonlySet<string>;
  /**
   * `return`: a frontend tool call ends the run with `outcome.pendingToolCallIds`;
   * `proxy`: the result comes back through the bridge and Mastra streams it (default).
   */
  frontendToolMode?: 'proxy' | 'return';
  /**
   * Calls this run resumes (an approval or a suspended tool answered by `resume`). The client got
   * their arguments in the interrupted run; its reducer appends `TOOL_CALL_ARGS` to the call it
   * already holds, so a replayed call is re-opened and closed without arguments.
   */
  resumedToolCalls?: Iterable<string>;
  /**
   * Calls that waited for an approval before this run (it resumes them, or a thread stream saw them
   * pause): their result says how they were answered, `metadata.approval` (`approved` | `declined`),
   * as history's tool message does. Calls that ask for approval in this run count too. A sub-agent's
   * own calls carry no such mark (history has none for them either).
   */
  approvalToolCalls?: Iterable<string>;
  /**
   * A result for a call this run never showed answers a call the client already holds (a later
   * bracket of a thread stream: the paused call, or one from before a restart): re-announce it
   * without arguments, as a resumed call. Default: announce it with its arguments (`/run`).
   */
  unseenCallsAreResumed?: boolean;
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

type ToolCallState = { name: string; open: boolean; resolved: boolean };

type StreamKind = 'text' | 'reasoning';
const STREAM_KINDS: readonly StreamKind[] = ['text', 'reasoning'];

/** The events that open, fill and close a text or a reasoning message: the only difference between the two. */
const STREAMS = {
  text: {
    start: (messageId: string): Event[] => [{ type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant' }],
    content: EventType.TEXT_MESSAGE_CONTENT,
    end: (messageId: string): Event[] => [{ type: EventType.TEXT_MESSAGE_END, messageId }],
  },
  reasoning: {
    start: (messageId: string): Event[] => [
      { type: EventType.REASONING_START, messageId },
      { type: EventType.REASONING_MESSAGE_START, messageId, role: 'reasoning' },
    ],
    content: EventType.REASONING_MESSAGE_CONTENT,
    end: (messageId: string): Event[] => [
      { type: EventType.REASONING_MESSAGE_END, messageId },
      { type: EventType.REASONING_END, messageId },
    ],
  },
} as const;

/**
 * Turns the chunks of one Mastra run into AG-UI events: a pure state machine, one per run.
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
  private readonly frontendTools: ReadonlySet<string>;
  private readonly returnFrontendCalls: boolean;
  private readonly resumedToolCalls: Set<string>;
  private readonly approvalToolCalls: Set<string>;
  private readonly unseenCallsAreResumed: boolean;
  private readonly inputMessages?: Message[];

  private started = false;
  private terminated = false;
  /** The ids of the stored assistant message the current step writes into (Mastra's `messageId`). */
  private numbering: MessageNumbering;
  private appendsTo?: MessagePosition;
  /** A step started: the run writes an assistant message. */
  private wrote = false;
  /** Calls Mastra runs in the background: their result comes with the task's end, not as `tool-result`. */
  private readonly backgroundCalls = new Set<string>();
  /** Open text and reasoning messages: Mastra's part id → AG-UI message id, per kind. */
  private readonly open: Record<StreamKind, Map<string, string>> = { text: new Map(), reasoning: new Map() };
  /** Working-memory calls, left out of the stream (`hidesCall`). */
  private readonly hiddenCalls = new Set<string>();
  /** Sub-agents this run delegates to. */
  private readonly delegations = new Delegations();
  /** Workflows this run runs as tools. */
  private readonly workflows: WorkflowActivities;
  private readonly toolCalls = new Map<string, ToolCallState>();
  private readonly openSteps: string[] = [];
  private stepCount = 0;
  /** The current step showed the client something (text, reasoning, a tool call). */
  private shownInStep = false;
  /** The reasoning the current step showed, one text per reasoning message (only reasoning: a cut drops it). */
  private stepReasoning: string[] = [];
  /** A step the client saw was turned down or blocked by a processor: Mastra did not keep it. */
  private discarded = false;
  private readonly interrupts: Interrupt[] = [];
  private readonly pendingFrontendCalls: string[] = [];
  /** Last status sent per background task. */
  private readonly backgroundTasks = new Map<string, string>();
  private usage?: TokenUsage;

  constructor(options: RunTranslatorOptions) {
    this.threadId = options.threadId;
    this.runId = options.runId;
    this.mastraRunId = options.mastraRunId ?? options.runId;
    this.frontendTools = options.frontendTools ?? new Set();
    this.returnFrontendCalls = options.frontendToolMode === 'return';
    this.resumedToolCalls = new Set(options.resumedToolCalls);
    this.approvalToolCalls = new Set(options.approvalToolCalls);
    this.unseenCallsAreResumed = options.unseenCallsAreResumed ?? false;
    this.numbering = MessageNumbering.start(options.runId);
    this.appendsTo = options.appendsTo;
    if (options.inputMessages?.length) this.inputMessages = options.inputMessages;
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
    return this.interrupts.length > 0;
  }

  /**
   * Whether the client was shown something Mastra did not keep: a step a processor turned down
   * (`abort(…, { retry: true })`) or blocked. The caller then sends the thread as stored before the
   * terminal event (`beforeTerminal`), which this pure translator cannot read.
   */
  get retracts(): boolean {
    return this.discarded;
  }

  /**
   * What the step in progress showed that Mastra does not keep when the run is cut there: its
   * reasoning (Mastra saves a cut step's text alone, under a new id). `undefined` when it showed none.
   */
  get cutStep(): CutStep | undefined {
    return this.stepReasoning.length > 0 ? { messageId: this.numbering.messageId, reasoning: [...this.stepReasoning] } : undefined;
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
    out.push(runEndActivity(this.mastraRunId, { outcome: 'failed', code, message }));
    out.push({ type: EventType.RUN_ERROR, message, code, ...(metadata && { metadata }) });
    return out;
  }

  /**
   * A guardrail (a processor's `abort`) stopped the run: `RUN_ERROR TRIPWIRE` with its reason, and
   * the processor and what it said in `metadata` (`{ processorId, processorMetadata }`).
   */
  private tripped({ reason, processorId, metadata }: Tripwire): Event[] {
    if (this.shownInStep) this.discarded = true;
    const said = processorId === undefined ? undefined : { processorId, ...(metadata !== undefined && { processorMetadata: metadata }) };
    return this.fail(reason || GUARDRAIL_STOPPED, 'TRIPWIRE', said);
  }

  /** Ends the run as cancelled (the client or an operator aborted it), after its run-end message. */
  cancel(): Event[] {
    if (this.terminated) return [];
    const out = this.start();
    this.closeAll(out);
    this.terminated = true;
    out.push(runEndActivity(this.mastraRunId, { outcome: 'cancelled' }));
    out.push({ type: EventType.RUN_FINISHED, threadId: this.threadId, runId: this.runId, outcome: { type: 'cancelled' } });
    return out;
  }

  private map(chunk: MastraChunk, out: Event[]): void {
    if (isSignalEcho(chunk)) return this.signalEcho(chunk, out);
    if (this.hidesCall(chunk)) return;
    if (isDataChunk(chunk)) {
      out.push({ type: EventType.CUSTOM, name: chunk.type, value: chunk.data });
      return;
    }
    switch (chunk.type) {
      case 'start':
        return;
      case 'step-start':
        return this.stepStart(chunk.payload.messageId, out);
      case 'step-finish':
        // Mastra's step reasons go beyond its declared type: `retry` is a processor's.
        return this.stepFinish((chunk.payload.stepResult?.reason as string | undefined) === 'retry', out);
      case 'text-start':
        return void this.openMessage('text', chunk.payload.id, out);
      case 'text-delta':
        return this.delta('text', chunk.payload.id, chunk.payload.text, out);
      case 'text-end':
        return this.closeMessage('text', chunk.payload.id, out);
      case 'reasoning-start':
        return void this.openMessage('reasoning', chunk.payload.id, out);
      case 'reasoning-delta':
        return this.delta('reasoning', chunk.payload.id, chunk.payload.text, out);
      case 'reasoning-end':
        return this.closeMessage('reasoning', chunk.payload.id, out);
      case CAPTURED_TOOL_RESULTS:
        return this.capturedResults(chunk.results, out);
      case 'tool-call-input-streaming-start':
        return this.toolCallStart(chunk.payload.toolCallId, chunk.payload.toolName, out);
      case 'tool-call-delta':
        return this.toolCallArgs(chunk.payload.toolCallId, chunk.payload.toolName ?? 'unknown', chunk.payload.argsTextDelta, out);
      case 'tool-call-input-streaming-end':
        return this.toolCallEnd(chunk.payload.toolCallId, out);
      case 'tool-call':
        return this.atomicToolCall(chunk.payload.toolCallId, chunk.payload.toolName, chunk.payload.args, out);
      case 'tool-output':
        this.workflows.relay(chunk.payload, out);
        return this.delegations.relay(chunk.payload, out);
      case 'tool-result':
        return this.toolResult(chunk.payload, out);
      case 'tool-error':
        return this.toolError(chunk.payload, out);
      case 'tool-output-denied':
        return this.toolDenied(chunk.payload, out);
      case 'tool-call-approval':
        return this.interrupt(chunk.payload, 'tool_approval', undefined, out);
      case 'tool-call-suspended':
        return this.interrupt(chunk.payload, 'tool_suspended', chunk.payload.suspendPayload, out);
      case 'finish': {
        this.usage = toTokenUsage(chunk.payload.output?.usage, chunk.payload.metadata);
        // A step processor that blocks the answer ends the run with a plain `finish`, its tripwire in the step.
        const tripwire = trippedStep(chunk.payload);
        if (tripwire) return void out.push(...this.tripped(tripwire));
        return this.finish(out);
      }
      case 'error': {
        // Mastra reports a storage failure during the run as an `error` chunk too, and a run of
        // another process that was lost (its process died, or Redis was away) as one.
        const { message, code } = isLostRemoteRun(chunk) ? LOST_RUN : runFailure(chunk.payload.error, 'MODEL_ERROR');
        out.push(...this.fail(message, code));
        return;
      }
      case 'tripwire':
        out.push(...this.tripped(chunk.payload));
        return;
      case 'abort':
        out.push(...this.cancel());
        return;
      case 'object-result':
        out.push({ type: EventType.CUSTOM, name: 'mastra.object-result', value: chunk.object });
        return;
      case 'source':
      case 'file':
      case 'goal':
      case 'is-task-complete':
        out.push({ type: EventType.CUSTOM, name: `mastra.${chunk.type}`, value: chunk.payload });
        return;
      default:
        if (chunk.type.startsWith('background-task-') && 'payload' in chunk) this.backgroundTask(chunk.type, chunk.payload, out);
    }
  }

  // ── steps ────────────────────────────────────────────────────────────

  private stepStart(messageId: string | undefined, out: Event[]): void {
    if (messageId) this.enterMessage(messageId);
    this.shownInStep = false;
    this.stepReasoning = [];
    const stepName = `step-${++this.stepCount}`;
    this.openSteps.push(stepName);
    out.push({ type: EventType.STEP_STARTED, stepName });
  }

  /** A step ends; one a processor turned down (`retried`) is run again, and Mastra keeps only the new attempt. */
  private stepFinish(retried: boolean, out: Event[]): void {
    if (retried && this.shownInStep) this.discarded = true;
    this.closeStreams(out);
    const stepName = this.openSteps.pop();
    if (stepName) out.push({ type: EventType.STEP_FINISHED, stepName });
  }

  /**
   * A step writes into Mastra's stored message `messageId`; the first step of a run that Mastra
   * appends to an earlier message writes into that one, after what it holds.
   */
  private enterMessage(messageId: string): void {
    this.wrote = true;
    const target = this.appendsTo;
    this.appendsTo = undefined;
    if (target) this.numbering = MessageNumbering.resume(target);
    else if (messageId !== this.numbering.messageId) this.numbering = MessageNumbering.start(messageId);
  }

  /** Where the numbering of the stored message stands (what a run appended to it goes on from); none before a step. */
  position(): MessagePosition | undefined {
    return this.wrote ? this.numbering.position() : undefined;
  }

  // ── text and reasoning ──────────────────────────────────────────────

  private openMessage(kind: StreamKind, partId: string, out: Event[]): string {
    // Numbered as history numbers the stored parts: text written after a tool call starts a new
    // segment (the reducer would otherwise fold the answer into the message that made the call).
    const messageId = this.numbering.next(kind);
    this.shownInStep = true;
    this.open[kind].set(partId, messageId);
    if (kind === 'reasoning') this.stepReasoning.push('');
    out.push(...STREAMS[kind].start(messageId));
    return messageId;
  }

  /** A delta with no open message opens one first; empty deltas are dropped. */
  private delta(kind: StreamKind, partId: string, delta: string, out: Event[]): void {
    const messageId = this.open[kind].get(partId) ?? this.openMessage(kind, partId, out);
    if (!delta) return;
    if (kind === 'reasoning') this.stepReasoning[this.stepReasoning.length - 1] += delta;
    out.push({ type: STREAMS[kind].content, messageId, delta } as Event);
  }

  private closeMessage(kind: StreamKind, partId: string, out: Event[]): void {
    const messageId = this.open[kind].get(partId);
    if (messageId === undefined) return;
    this.open[kind].delete(partId);
    out.push(...STREAMS[kind].end(messageId));
  }

  // ── tool calls ──────────────────────────────────────────────────────

  /**
   * Mastra's working-memory tool is not shown as a tool call: its effect reaches the client as
   * state events (`StateEvents`), and Mastra leaves the call out of the thread's history too.
   */
  private hidesCall(chunk: MastraChunk): boolean {
    switch (chunk.type) {
      case 'tool-call-input-streaming-start':
      case 'tool-call':
      case 'tool-result':
      case 'tool-error':
        if (chunk.payload.toolName !== WORKING_MEMORY_TOOL) return false;
        this.hiddenCalls.add(chunk.payload.toolCallId);
        return true;
      case 'tool-call-delta':
      case 'tool-call-input-streaming-end':
        return this.hiddenCalls.has(chunk.payload.toolCallId);
      default:
        return false;
    }
  }

  private toolCallStart(toolCallId: string, toolName: string, out: Event[]): void {
    if (this.toolCalls.has(toolCallId)) return;
    this.toolCalls.set(toolCallId, { name: toolName, open: true, resolved: false });
    this.shownInStep = true;
    out.push({ type: EventType.TOOL_CALL_START, toolCallId, toolCallName: toolName, parentMessageId: this.numbering.toolCallParent() });
  }

  private toolCallArgs(toolCallId: string, toolName: string, delta: string, out: Event[]): void {
    if (!this.toolCalls.has(toolCallId)) this.toolCallStart(toolCallId, toolName, out);
    const call = this.toolCalls.get(toolCallId);
    if (call?.open && delta) out.push({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta });
  }

  private toolCallEnd(toolCallId: string, out: Event[]): void {
    const call = this.toolCalls.get(toolCallId);
    if (!call?.open) return;
    call.open = false;
    out.push({ type: EventType.TOOL_CALL_END, toolCallId });
  }

  /** The atomic `tool-call`: a full triad unless the call was already streamed. */
  private atomicToolCall(toolCallId: string, toolName: string, args: unknown, out: Event[]): void {
    if (!this.toolCalls.has(toolCallId)) {
      this.toolCallStart(toolCallId, toolName, out);
      if (!this.resumedToolCalls.has(toolCallId)) out.push({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta: JSON.stringify(args ?? {}) });
    }
    this.toolCallEnd(toolCallId, out);
    if (this.frontendTools.has(toolName) && this.returnFrontendCalls) this.pendingFrontendCalls.push(toolCallId);
  }

  /** Makes sure a call is known (started and ended) before its result: results of resumed calls arrive alone. */
  private ensureCall(payload: { toolCallId: string; toolName: string; args?: unknown }, out: Event[]): ToolCallState {
    if (!this.toolCalls.has(payload.toolCallId)) this.atomicToolCall(payload.toolCallId, payload.toolName, payload.args, out);
    else this.toolCallEnd(payload.toolCallId, out);
    return this.toolCalls.get(payload.toolCallId) as ToolCallState;
  }

  /** The call a result answers: one this run never showed may be one the client holds already. */
  private answeredCall(payload: { toolCallId: string; toolName: string; args?: unknown }, out: Event[]): ToolCallState {
    if (this.unseenCallsAreResumed && !this.toolCalls.has(payload.toolCallId)) this.resumedToolCalls.add(payload.toolCallId);
    return this.ensureCall(payload, out);
  }

  /**
   * The call's result. `failure` says why it failed, for a delegation's `SUBAGENT_ERROR`; `declined`:
   * its approval was declined (the result says how an approval was answered, `metadata.approval`).
   */
  private emitResult(toolCallId: string, content: string, out: Event[], { failure, declined = false }: { failure?: string; declined?: boolean } = {}): void {
    const call = this.toolCalls.get(toolCallId);
    if (!call || call.resolved) return;
    call.resolved = true;
    // A delegation that paused for its sub-agent's approval was not itself approved: the sub-agent's call was.
    const approval = declined ? 'declined' : this.approvalToolCalls.has(toolCallId) && !this.delegations.has(toolCallId) ? 'approved' : undefined;
    this.delegations.end(toolCallId, failure, out);
    out.push({
      type: EventType.TOOL_CALL_RESULT,
      messageId: toolResultMessageId(toolCallId),
      toolCallId,
      content,
      role: 'tool',
      ...(approval && { metadata: { approval } }),
    });
  }

  private toolResult(payload: { toolCallId: string; toolName: string; args?: unknown; result: unknown; isError?: boolean }, out: Event[]): void {
    this.answeredCall(payload, out);
    // A call sent to the background answers the model with a placeholder; its result is the task's.
    if (this.backgroundCalls.has(payload.toolCallId)) return;
    this.emitResult(payload.toolCallId, toolResultContent(payload.result, payload.isError), out, {
      failure: payload.isError ? errorMessage(payload.result) : undefined,
    });
  }

  private toolError(payload: { toolCallId: string; toolName: string; args?: unknown; error: unknown }, out: Event[]): void {
    this.answeredCall(payload, out);
    this.emitResult(payload.toolCallId, toolErrorContent(payload.error), out, { failure: errorMessage(payload.error) });
  }

  private toolDenied(payload: { toolCallId: string; toolName: string; args?: unknown; approval?: { reason?: string } }, out: Event[]): void {
    this.answeredCall(payload, out);
    this.emitResult(payload.toolCallId, declinedContent(payload.toolName, payload.approval?.reason), out, { declined: true });
  }

  /**
   * Server tools whose result Mastra did not stream get the one captured when they ran (the run
   * passes them in just before the step ends). Calls of frontend tools and background tasks get
   * their results elsewhere; a call already answered keeps its answer.
   */
  private capturedResults(results: readonly CapturedToolResult[], out: Event[]): void {
    this.closeStreams(out);
    for (const { toolCallId, result, isError } of results) {
      const call = this.toolCalls.get(toolCallId);
      if (!call || call.resolved || this.frontendTools.has(call.name) || this.backgroundCalls.has(toolCallId)) continue;
      this.emitResult(toolCallId, toolResultContent(result, isError), out);
    }
  }

  private interrupt(
    payload: { toolCallId: string; toolName: string; args?: unknown; resumeSchema?: string },
    reason: 'tool_approval' | 'tool_suspended',
    suspendPayload: unknown,
    out: Event[],
  ): void {
    const call = this.ensureCall(payload, out);
    call.resolved = true; // answered in the next run, not in this one
    if (reason === 'tool_approval') this.approvalToolCalls.add(payload.toolCallId);
    const id = interruptId(this.mastraRunId, payload.toolCallId);
    // A delegation's call pauses for what its sub-agent asked: the interrupt is the sub-agent's.
    const subagent = this.delegations.has(payload.toolCallId) ? subagentRunId(payload.toolCallId) : undefined;
    if (subagent) this.delegations.suspend(payload.toolCallId, id, out);
    this.interrupts.push({
      id,
      ...(subagent && { subagentRunId: subagent }),
      reason,
      message: reason === 'tool_approval' ? `Approve the call to ${payload.toolName}?` : `${payload.toolName} is waiting for input.`,
      toolCallId: payload.toolCallId,
      responseSchema: parseSchema(payload.resumeSchema),
      metadata: { toolName: payload.toolName, args: payload.args, ...(suspendPayload === undefined ? {} : { suspendPayload }) },
    });
  }

  // ── signals, background tasks ───────────────────────────────────────

  private signalEcho(chunk: SignalEchoChunk, out: Event[]): void {
    // The run starts with a message of its own: Mastra stores its answer as a new message.
    this.appendsTo = undefined;
    const { data } = chunk;
    if (chunk.type === 'data-user-message') {
      const metadata = data.attributes ? { attributes: data.attributes } : undefined;
      out.push(
        { type: EventType.TEXT_MESSAGE_START, messageId: data.id, role: 'user', ...(metadata && { metadata }) },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: data.id, delta: signalText(data.contents) },
        { type: EventType.TEXT_MESSAGE_END, messageId: data.id },
      );
      return;
    }
    out.push({
      type: EventType.ACTIVITY_SNAPSHOT,
      messageId: data.id,
      activityType: `signal.${data.type}`,
      content: { tagName: data.tagName ?? data.type, contents: data.contents, attributes: data.attributes ?? {} },
    });
  }

  private backgroundTask(type: string, payload: unknown, out: Event[]): void {
    const task = (payload ?? {}) as { taskId?: string; toolName?: string; toolCallId?: string; result?: unknown; error?: unknown };
    const status = type.slice('background-task-'.length);
    // Streamed tool output is not a status: it would overwrite `running`; the result comes with `completed`.
    if (!task.taskId || status === 'output') return;
    const messageId = backgroundTaskId(task.taskId);
    if (task.toolCallId) this.backgroundCalls.add(task.toolCallId);
    const outcome = {
      ...(task.result !== undefined && { result: task.result }),
      ...(task.error !== undefined && { error: errorMessage(task.error) }),
    };
    const known = this.backgroundTasks.get(task.taskId);
    // The task manager's stream repeats a state it already sent (e.g. `running` on subscribe): skip it.
    if (known === status && Object.keys(outcome).length === 0) return;
    this.backgroundTasks.set(task.taskId, status);
    if (status === 'completed' || status === 'failed') this.backgroundResult(task, status === 'failed', out);
    if (known === undefined) {
      // A task first seen at its end (its run already bracketed elsewhere) must still carry the outcome.
      out.push({
        type: EventType.ACTIVITY_SNAPSHOT,
        messageId,
        activityType: 'background-task',
        content: { taskId: task.taskId, toolName: task.toolName, toolCallId: task.toolCallId, status, ...outcome },
      });
      return;
    }
    const patch: Array<{ op: 'replace' | 'add'; path: string; value: unknown }> = [{ op: 'replace', path: '/status', value: status }];
    for (const [key, value] of Object.entries(outcome)) patch.push({ op: 'add', path: `/${key}`, value });
    out.push({ type: EventType.ACTIVITY_DELTA, messageId, activityType: 'background-task', patch });
  }

  /**
   * The result of a call that ran in the background, when its task ends. The task usually ends
   * after the run that made the call, in a bracket that never saw the call.
   */
  private backgroundResult(task: { toolCallId?: string; toolName?: string; result?: unknown; error?: unknown }, failed: boolean, out: Event[]): void {
    const { toolCallId } = task;
    if (!toolCallId) return;
    const content = failed ? toolErrorContent(task.error ?? 'The background task failed') : toolResultContent(task.result, false);
    if (!this.toolCalls.has(toolCallId)) {
      // Re-announced as a resumed call is: no arguments (the client has them) and no parent, so
      // the numbering of what this bracket writes is not moved by a call made elsewhere.
      this.toolCalls.set(toolCallId, { name: task.toolName ?? 'unknown', open: false, resolved: false });
      out.push({ type: EventType.TOOL_CALL_START, toolCallId, toolCallName: task.toolName ?? 'unknown' }, { type: EventType.TOOL_CALL_END, toolCallId });
    }
    this.emitResult(toolCallId, content, out);
  }

  // ── closing ─────────────────────────────────────────────────────────

  private closeStreams(out: Event[]): void {
    for (const kind of STREAM_KINDS) {
      for (const messageId of this.open[kind].values()) out.push(...STREAMS[kind].end(messageId));
      this.open[kind].clear();
    }
    for (const toolCallId of this.toolCalls.keys()) this.toolCallEnd(toolCallId, out);
  }

  private closeAll(out: Event[]): void {
    this.delegations.closeAll('The run ended before the sub-agent finished', out);
    this.closeStreams(out);
    for (let stepName = this.openSteps.pop(); stepName; stepName = this.openSteps.pop()) {
      out.push({ type: EventType.STEP_FINISHED, stepName });
    }
  }

  private finish(out: Event[]): void {
    this.closeAll(out);
    this.terminated = true;
    out.push({
      type: EventType.RUN_FINISHED,
      threadId: this.threadId,
      runId: this.runId,
      ...(this.outcome() && { outcome: this.outcome() }),
      ...(this.usage && { usage: [this.usage] }),
    });
  }

  private outcome(): RunFinishedOutcome | undefined {
    if (this.interrupts.length > 0) return { type: 'interrupt', interrupts: this.interrupts as [Interrupt, ...Interrupt[]] };
    if (this.pendingFrontendCalls.length > 0) return { type: 'success', pendingToolCallIds: this.pendingFrontendCalls };
    return undefined;
  }
}

function parseSchema(schema: string | undefined): Record<string, unknown> | undefined {
  if (!schema) return undefined;
  try {
    const parsed: unknown = JSON.parse(schema);
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** What a processor's `abort` says: Mastra's `tripwire` chunk payload, also kept on a tripped step. */
interface Tripwire {
  reason?: string;
  processorId?: string;
  metadata?: unknown;
}

/** The tripwire of a `finish` whose step a processor tripped (`stepResult.reason: 'tripwire'`), if any. */
function trippedStep(payload: { stepResult?: { reason?: unknown }; output?: { steps?: ReadonlyArray<{ tripwire?: Tripwire }> } }): Tripwire | undefined {
  if (payload.stepResult?.reason !== 'tripwire') return undefined;
  return payload.output?.steps?.findLast((step) => step.tripwire !== undefined)?.tripwire ?? {};
}

/**
 * Turns the `RUN_FINISHED` that ends `events` into a cancelled one, after Mastra run `runId`'s
 * run-end message: the run was cut between two steps (an abort that found no step streaming), and
 * Mastra ended it with a plain `finish`. Answers whether it did; an interrupt's end is left as it is.
 *
 * @example
 * if (endings.wasCut(runId)) endAsCancelled(events, runId);
 */
export function endAsCancelled(events: Event[], runId: string): boolean {
  const end = events.at(-1);
  if (end?.type !== EventType.RUN_FINISHED || (end as RunFinishedEvent).outcome) return false;
  (end as RunFinishedEvent).outcome = { type: 'cancelled' };
  events.splice(-1, 0, runEndActivity(runId, { outcome: 'cancelled' }));
  return true;
}
