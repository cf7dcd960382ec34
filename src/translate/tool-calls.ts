import { EventType, type Event, type Interrupt, type RunFinishedOutcome } from '@ag-ui/core';
import { WORKING_MEMORY_TOOL, type CapturedToolResult, type MastraChunk } from './chunks.js';
import type { Delegations } from './delegations.js';
import { interruptId, subagentRunId, toolResultMessageId } from './ids.js';
import type { RunSteps } from './run-steps.js';
import { declinedContent, toolErrorContent, toolResultContent } from './values.js';
import { errorMessage } from '../text.js';

/** How a run's tool calls are shown: the part of `RunTranslatorOptions` its `ToolCalls` reads. */
export interface ToolCallOptions {
  /** Names of tools the client executes (AG-UI `RunAgentInput.tools`). */
  frontendTools?: ReadonlySet<string>;
  /**
   * `return`: a frontend tool call ends the run with `outcome.pendingToolCallIds`;
   * `proxy`: the result comes back through the bridge and Mastra streams it (default).
   */
  frontendToolMode?: 'proxy' | 'return';
  /**
   * Calls this run resumes (an approval or a suspended tool answered by `resume`). The client holds
   * them from the interrupted run: their results come alone, the calls are not announced again.
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
   * bracket of a thread stream: the paused call, or one from before a restart): its result comes
   * alone, as a resumed call's. Default: announce it with its arguments (`/run`).
   */
  unseenCallsAreResumed?: boolean;
}

/** A call as Mastra's tool chunks name it. */
interface CallPayload {
  toolCallId: string;
  toolName: string;
  args?: unknown;
}

/** A background task's end, as far as its call's result goes. */
export interface BackgroundOutcome {
  toolCallId?: string;
  toolName?: string;
  result?: unknown;
  error?: unknown;
}

type ToolCallState = { name: string; open: boolean; resolved: boolean };

/**
 * The tool calls of one run: each call's `TOOL_CALL_START` / `ARGS` / `END` and its one
 * `TOOL_CALL_RESULT`, the pauses for a human (interrupts), and the frontend calls a run in `return`
 * mode hands back. A resumed call, which the client holds, gets its result alone (`known`).
 *
 * @example
 * const calls = new ToolCalls('run-1', {}, steps, delegations);
 * calls.atomic('call-1', 'weather', { city: 'Paris' }, out); // START, ARGS, END
 * calls.result({ toolCallId: 'call-1', toolName: 'weather', result: 'sunny' }, out);
 */
export class ToolCalls {
  private readonly frontendTools: ReadonlySet<string>;
  private readonly returnFrontendCalls: boolean;
  private readonly resumed: Set<string>;
  private readonly approvals: Set<string>;
  private readonly unseenAreResumed: boolean;
  private readonly calls = new Map<string, ToolCallState>();
  /** Working-memory calls, left out of the stream (`hides`). */
  private readonly hidden = new Set<string>();
  /** Calls Mastra runs in the background: their result comes with the task's end, not as `tool-result`. */
  private readonly background = new Set<string>();
  private readonly interrupts: Interrupt[] = [];
  private readonly pendingFrontendCalls: string[] = [];

  /** @param mastraRunId names the interrupts (`interruptId`). */
  constructor(
    private readonly mastraRunId: string,
    options: ToolCallOptions,
    private readonly steps: RunSteps,
    private readonly delegations: Delegations,
  ) {
    this.frontendTools = options.frontendTools ?? new Set();
    this.returnFrontendCalls = options.frontendToolMode === 'return';
    this.resumed = new Set(options.resumedToolCalls);
    this.approvals = new Set(options.approvalToolCalls);
    this.unseenAreResumed = options.unseenCallsAreResumed ?? false;
  }

  get interrupted(): boolean {
    return this.interrupts.length > 0;
  }

  waitsOn(toolCallId: string): boolean {
    return this.interrupts.some((i) => i.toolCallId === toolCallId);
  }

  /** How the run ends, as far as its calls go: interrupted, or with frontend calls to run. */
  outcome(): RunFinishedOutcome | undefined {
    if (this.interrupts.length > 0) return { type: 'interrupt', interrupts: this.interrupts };
    if (this.pendingFrontendCalls.length > 0) return { type: 'success', pendingToolCallIds: this.pendingFrontendCalls };
    return undefined;
  }

  /**
   * Mastra's working-memory tool is not shown as a tool call: its effect reaches the client as
   * state events (`StateEvents`), and Mastra leaves the call out of the thread's history too.
   */
  hides(chunk: MastraChunk): boolean {
    switch (chunk.type) {
      case 'tool-call-input-streaming-start':
      case 'tool-call':
      case 'tool-result':
      case 'tool-error':
        if (chunk.payload.toolName !== WORKING_MEMORY_TOOL) return false;
        this.hidden.add(chunk.payload.toolCallId);
        return true;
      case 'tool-call-delta':
      case 'tool-call-input-streaming-end':
        return this.hidden.has(chunk.payload.toolCallId);
      default:
        return false;
    }
  }

  start(toolCallId: string, toolName: string, out: Event[]): void {
    if (this.calls.has(toolCallId)) return;
    this.calls.set(toolCallId, { name: toolName, open: true, resolved: false });
    out.push({ type: EventType.TOOL_CALL_START, toolCallId, toolCallName: toolName, parentMessageId: this.steps.toolCallParent() });
  }

  args(toolCallId: string, toolName: string, delta: string, out: Event[]): void {
    if (!this.calls.has(toolCallId)) this.start(toolCallId, toolName, out);
    if (this.calls.get(toolCallId)?.open && delta) out.push({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta });
  }

  end(toolCallId: string, out: Event[]): void {
    const call = this.calls.get(toolCallId);
    if (!call?.open) return;
    call.open = false;
    out.push({ type: EventType.TOOL_CALL_END, toolCallId });
  }

  /** The atomic `tool-call`: a full triad unless the call was already streamed, or the client holds it (a resumed call). */
  atomic(toolCallId: string, toolName: string, args: unknown, out: Event[]): void {
    if (this.resumed.has(toolCallId)) this.known(toolCallId, toolName);
    else if (!this.calls.has(toolCallId)) {
      this.start(toolCallId, toolName, out);
      out.push({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta: JSON.stringify(args ?? {}) });
    }
    this.end(toolCallId, out);
    if (this.frontendTools.has(toolName) && this.returnFrontendCalls) this.pendingFrontendCalls.push(toolCallId);
  }

  closeAll(out: Event[]): void {
    for (const toolCallId of this.calls.keys()) this.end(toolCallId, out);
  }

  result(payload: CallPayload & { result: unknown; isError?: boolean }, out: Event[]): void {
    this.answered(payload, out);
    // A call sent to the background answers the model with a placeholder; its result is the task's.
    if (this.background.has(payload.toolCallId)) return;
    const failure = payload.isError ? errorMessage(payload.result) : undefined;
    this.emitResult(payload.toolCallId, toolResultContent(payload.result, payload.isError), out, { failure });
  }

  error(payload: CallPayload & { error: unknown }, out: Event[]): void {
    this.answered(payload, out);
    this.emitResult(payload.toolCallId, toolErrorContent(payload.error), out, { failure: errorMessage(payload.error) });
  }

  denied(payload: CallPayload & { approval?: { reason?: string } }, out: Event[]): void {
    this.answered(payload, out);
    this.emitResult(payload.toolCallId, declinedContent(payload.toolName, payload.approval?.reason), out, { declined: true });
  }

  /**
   * Server tools whose result Mastra did not stream get the one captured when they ran (the run
   * passes them in just before the step ends). Calls of frontend tools and background tasks get
   * their results elsewhere; a call already answered keeps its answer.
   */
  captured(results: readonly CapturedToolResult[], out: Event[]): void {
    for (const { toolCallId, result, isError } of results) {
      const call = this.calls.get(toolCallId);
      if (!call || call.resolved || this.frontendTools.has(call.name) || this.background.has(toolCallId)) continue;
      this.emitResult(toolCallId, toolResultContent(result, isError), out);
    }
  }

  /** A call runs as a background task: its `tool-result` is a placeholder (`result`). */
  runsInBackground(toolCallId: string): void {
    this.background.add(toolCallId);
  }

  /**
   * The result of a call that ran in the background, when its task ends: usually in a later
   * bracket, whose client holds the call from the run that made it, so only the result is sent.
   */
  backgroundResult(task: BackgroundOutcome, failed: boolean, out: Event[]): void {
    const { toolCallId } = task;
    if (!toolCallId) return;
    const content = failed ? toolErrorContent(task.error ?? 'The background task failed') : toolResultContent(task.result, false);
    this.known(toolCallId, task.toolName ?? 'unknown');
    this.emitResult(toolCallId, content, out);
  }

  /** The run stops for a human: to approve the call, or to answer a tool that suspended. */
  interrupt(payload: CallPayload & { resumeSchema?: string }, reason: 'tool_approval' | 'tool_suspended', suspendPayload: unknown, out: Event[]): void {
    const call = this.ensure(payload, out);
    call.resolved = true; // answered in the next run, not in this one
    if (reason === 'tool_approval') this.approvals.add(payload.toolCallId);
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

  /**
   * A call the client holds already (an earlier run showed it): known here, not announced again.
   * Announced again, it would lack arguments (a client keeping calls per run reads `""`) or, with
   * them, get them twice (`@ag-ui/client` appends `TOOL_CALL_ARGS` to the call it holds).
   */
  private known(toolCallId: string, toolName: string): void {
    if (!this.calls.has(toolCallId)) this.calls.set(toolCallId, { name: toolName, open: false, resolved: false });
  }

  /** Makes sure a call is known (started and ended) before its result: results of resumed calls arrive alone. */
  private ensure(payload: CallPayload, out: Event[]): ToolCallState {
    if (!this.calls.has(payload.toolCallId)) this.atomic(payload.toolCallId, payload.toolName, payload.args, out);
    else this.end(payload.toolCallId, out);
    return this.calls.get(payload.toolCallId) as ToolCallState;
  }

  /** The call a result answers: one this run never showed may be one the client holds already. */
  private answered(payload: CallPayload, out: Event[]): void {
    if (this.unseenAreResumed && !this.calls.has(payload.toolCallId)) this.resumed.add(payload.toolCallId);
    this.ensure(payload, out);
  }

  /**
   * The call's result. `failure` says why it failed, for a delegation's `SUBAGENT_ERROR`;
   * `declined`: its approval was declined (`metadata.approval`).
   */
  private emitResult(toolCallId: string, content: string, out: Event[], { failure, declined = false }: { failure?: string; declined?: boolean } = {}): void {
    const call = this.calls.get(toolCallId);
    if (!call || call.resolved) return;
    call.resolved = true;
    // A delegation that paused for its sub-agent's approval was not itself approved: the sub-agent's call was.
    const approval = declined ? 'declined' : this.approvals.has(toolCallId) && !this.delegations.has(toolCallId) ? 'approved' : undefined;
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
