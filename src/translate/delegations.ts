import { EventType, type Event } from '@ag-ui/core';
import { subagentCallsId, subagentReasoningId, subagentRunId, subagentTextId, toolResultMessageId } from './ids.js';
import { declinedContent, toolErrorContent, toolResultContent } from './values.js';
import { textOr } from '../text.js';

/** Mastra's tool for a sub-agent registered under `agents: { <name> }`. */
const DELEGATION_PREFIX = 'agent-';

/** A sub-agent's chunk as its delegation tool relays it (`tool-output` whose output comes from an agent). */
export interface RelayedChunk {
  toolCallId: string;
  toolName?: string;
  output: unknown;
}

/** The sub-agent's own chunk inside a relayed one: its type and payload, as the sub-agent's stream has them. */
type Inner = {
  from?: unknown;
  type?: unknown;
  payload?: {
    id?: unknown;
    text?: unknown;
    toolCallId?: unknown;
    toolName?: unknown;
    args?: unknown;
    result?: unknown;
    isError?: unknown;
    error?: unknown;
    approval?: { reason?: string };
  };
};

/** The sub-agent whose call a tool is, if it is one: `agent-researcher` → `researcher`. */
export function delegatedAgent(toolName: string): string | undefined {
  return toolName.startsWith(DELEGATION_PREFIX) ? toolName.slice(DELEGATION_PREFIX.length) : undefined;
}

/** One delegation being shown: what of its sub-agent's messages is open, and the calls it made. */
interface Delegation {
  subagentRunId: string;
  answering: boolean;
  reasonings: number;
  reasoning?: string;
  /** The sub-agent's tool calls shown in this bracket, and whether each has its result. */
  calls: Map<string, boolean>;
  /** A call just made, shown with the next chunk unless that chunk asks to approve it (`relay`). */
  held?: InnerPayload;
}

type InnerPayload = NonNullable<Inner['payload']>;

/**
 * The sub-agents a run delegates to, as AG-UI 1.0 shows them: `SUBAGENT_STARTED` when the
 * sub-agent's first chunk arrives (relayed by the delegation's tool call); its reasoning, tool
 * calls (with results) and answer, each carrying its `subagentRunId`; then `SUBAGENT_FINISHED` (or
 * `SUBAGENT_ERROR`) just before the delegation's `TOOL_CALL_RESULT`, or `SUBAGENT_FINISHED
 * { outcome: suspended }` when the sub-agent waits for an approval (the run's interrupt); the
 * resumed run shows the same sub-agent again. Ids come from the delegation's call id (`ids.ts`),
 * as in history: one answer message, one carrying its calls, one per reasoning.
 *
 * @example
 * const delegations = new Delegations();
 * delegations.relay(chunk.payload, out);          // on `tool-output`
 * delegations.end(toolCallId, undefined, out);    // before the delegation's TOOL_CALL_RESULT
 */
export class Delegations {
  /** Open delegations by the delegation's tool call id. */
  private readonly open = new Map<string, Delegation>();

  /** Whether `toolCallId` is a delegation whose sub-agent is being shown. */
  has(toolCallId: string): boolean {
    return this.open.has(toolCallId);
  }

  relay({ toolCallId, toolName, output }: RelayedChunk, out: Event[]): void {
    const name = toolName === undefined ? undefined : delegatedAgent(toolName);
    const inner = output as Inner | undefined;
    if (name === undefined || inner?.from !== 'AGENT') return;
    const delegation = this.opened(toolCallId, name, out);
    const payload = inner.payload ?? {};
    // A call that waits for approval is not shown: the run's interrupt carries it (its name and
    // arguments), and history, which has only that while the sub-agent waits, shows the same.
    const held = delegation.held;
    delegation.held = undefined;
    if (held && !(inner.type === 'tool-call-approval' && payload.toolCallId === held.toolCallId)) this.call(toolCallId, delegation, held, out);
    switch (inner.type) {
      case 'text-delta':
        return this.answer(toolCallId, delegation, payload.text, out);
      case 'reasoning-start':
        return void this.openReasoning(toolCallId, delegation, out);
      case 'reasoning-delta':
        return this.reason(toolCallId, delegation, payload.text, out);
      case 'reasoning-end':
        return this.closeReasoning(delegation, out);
      case 'tool-call':
        return void (delegation.held = payload);
      case 'tool-result':
        return this.result(toolCallId, delegation, payload, toolResultContent(payload.result, payload.isError === true), out);
      case 'tool-error':
        return this.result(toolCallId, delegation, payload, toolErrorContent(payload.error), out);
      case 'tool-output-denied':
        return this.result(toolCallId, delegation, payload, declinedContent(textOr(payload.toolName, 'unknown'), payload.approval?.reason), out);
    }
  }

  /** The delegation's call got its result (`failure` when it failed): its sub-agent's segment ends. */
  end(toolCallId: string, failure: string | undefined, out: Event[]): void {
    const delegation = this.close(toolCallId, out);
    if (!delegation) return;
    const { subagentRunId } = delegation;
    out.push(
      failure === undefined ? { type: EventType.SUBAGENT_FINISHED, subagentRunId } : { type: EventType.SUBAGENT_ERROR, subagentRunId, message: failure },
    );
  }

  /** The sub-agent waits for an approval (interrupt `interruptId`): its segment of this run ends suspended. */
  suspend(toolCallId: string, interruptId: string, out: Event[]): void {
    const delegation = this.close(toolCallId, out);
    if (delegation)
      out.push({ type: EventType.SUBAGENT_FINISHED, subagentRunId: delegation.subagentRunId, outcome: { type: 'suspended', interruptIds: [interruptId] } });
  }

  /** The run ends with delegations still open (it failed, or was cancelled). */
  closeAll(reason: string, out: Event[]): void {
    for (const toolCallId of [...this.open.keys()]) this.end(toolCallId, reason, out);
  }

  private opened(toolCallId: string, name: string, out: Event[]): Delegation {
    let delegation = this.open.get(toolCallId);
    if (!delegation) {
      delegation = { subagentRunId: subagentRunId(toolCallId), answering: false, reasonings: 0, calls: new Map() };
      this.open.set(toolCallId, delegation);
      out.push({ type: EventType.SUBAGENT_STARTED, subagentRunId: delegation.subagentRunId, name, parentToolCallId: toolCallId });
    }
    return delegation;
  }

  private answer(toolCallId: string, delegation: Delegation, delta: unknown, out: Event[]): void {
    if (typeof delta !== 'string' || delta === '') return;
    const { subagentRunId } = delegation;
    const messageId = subagentTextId(toolCallId);
    if (!delegation.answering) {
      delegation.answering = true;
      out.push({ type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant', subagentRunId });
    }
    out.push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta, subagentRunId });
  }

  private openReasoning(toolCallId: string, delegation: Delegation, out: Event[]): string {
    this.closeReasoning(delegation, out);
    const messageId = subagentReasoningId(toolCallId, ++delegation.reasonings);
    const { subagentRunId } = delegation;
    delegation.reasoning = messageId;
    out.push(
      { type: EventType.REASONING_START, messageId, subagentRunId },
      { type: EventType.REASONING_MESSAGE_START, messageId, role: 'reasoning', subagentRunId },
    );
    return messageId;
  }

  private reason(toolCallId: string, delegation: Delegation, delta: unknown, out: Event[]): void {
    if (typeof delta !== 'string' || delta === '') return;
    const messageId = delegation.reasoning ?? this.openReasoning(toolCallId, delegation, out);
    out.push({ type: EventType.REASONING_MESSAGE_CONTENT, messageId, delta, subagentRunId: delegation.subagentRunId });
  }

  private closeReasoning(delegation: Delegation, out: Event[]): void {
    const messageId = delegation.reasoning;
    if (messageId === undefined) return;
    delegation.reasoning = undefined;
    const { subagentRunId } = delegation;
    out.push({ type: EventType.REASONING_MESSAGE_END, messageId, subagentRunId }, { type: EventType.REASONING_END, messageId, subagentRunId });
  }

  /** The sub-agent's call, whole: when it was made, or at its result (one that waited for approval). */
  private call(toolCallId: string, delegation: Delegation, payload: InnerPayload, out: Event[]): void {
    const callId = payload.toolCallId;
    if (typeof callId !== 'string' || delegation.calls.has(callId)) return;
    delegation.calls.set(callId, false);
    const { subagentRunId } = delegation;
    const toolCallName = typeof payload.toolName === 'string' ? payload.toolName : 'unknown';
    out.push({ type: EventType.TOOL_CALL_START, toolCallId: callId, toolCallName, parentMessageId: subagentCallsId(toolCallId), subagentRunId });
    out.push({ type: EventType.TOOL_CALL_ARGS, toolCallId: callId, delta: JSON.stringify(payload.args ?? {}), subagentRunId });
    out.push({ type: EventType.TOOL_CALL_END, toolCallId: callId, subagentRunId });
  }

  private result(toolCallId: string, delegation: Delegation, payload: InnerPayload, content: string, out: Event[]): void {
    const callId = payload.toolCallId;
    if (typeof callId !== 'string' || delegation.calls.get(callId) === true) return;
    this.call(toolCallId, delegation, payload, out);
    delegation.calls.set(callId, true);
    out.push({
      type: EventType.TOOL_CALL_RESULT,
      messageId: toolResultMessageId(callId),
      toolCallId: callId,
      content,
      role: 'tool',
      subagentRunId: delegation.subagentRunId,
    });
  }

  /** Closes what the sub-agent has open and forgets the delegation; answers it, if it was open. */
  private close(toolCallId: string, out: Event[]): Delegation | undefined {
    const delegation = this.open.get(toolCallId);
    if (!delegation) return undefined;
    this.open.delete(toolCallId);
    if (delegation.held) this.call(toolCallId, delegation, delegation.held, out);
    this.closeReasoning(delegation, out);
    const { subagentRunId } = delegation;
    if (delegation.answering) out.push({ type: EventType.TEXT_MESSAGE_END, messageId: subagentTextId(toolCallId), subagentRunId });
    return delegation;
  }
}
