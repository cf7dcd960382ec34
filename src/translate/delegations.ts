import { EventType, type Event } from '@ag-ui/core';
import { subagentRunId, subagentTextId } from './ids.js';

/** Mastra's tool for a sub-agent registered under `agents: { <name> }`. */
const DELEGATION_PREFIX = 'agent-';

/** A sub-agent's chunk as its delegation tool relays it (`tool-output` whose output comes from an agent). */
export interface RelayedChunk {
  toolCallId: string;
  toolName?: string;
  output: unknown;
}

/** The sub-agent whose call a tool is, if it is one: `agent-researcher` → `researcher`. */
export function delegatedAgent(toolName: string): string | undefined {
  return toolName.startsWith(DELEGATION_PREFIX) ? toolName.slice(DELEGATION_PREFIX.length) : undefined;
}

/** A sub-agent's answer, as its delegation's result carries it (`{ text, subAgentThreadId, … }`). */
export function delegationText(toolName: string, result: unknown): string | undefined {
  if (delegatedAgent(toolName) === undefined || typeof result !== 'object' || result === null) return undefined;
  const text = (result as { text?: unknown }).text;
  return typeof text === 'string' && text !== '' ? text : undefined;
}

/**
 * The sub-agents a run delegates to, as AG-UI 1.0 shows them: `SUBAGENT_STARTED` when the
 * sub-agent's first chunk arrives (relayed by the delegation's tool call), its answer as one
 * assistant message carrying its `subagentRunId`, then `SUBAGENT_FINISHED` (or `SUBAGENT_ERROR`)
 * just before the delegation's `TOOL_CALL_RESULT`. Ids come from the call's id (`ids.ts`), so the
 * history names the answer as the live stream did. The sub-agent's own reasoning and tool calls are
 * not shown (the history has only its answer).
 *
 * @example
 * const delegations = new Delegations();
 * delegations.relay(chunk.payload, out);          // on `tool-output`
 * delegations.end(toolCallId, undefined, out);    // before the delegation's TOOL_CALL_RESULT
 */
export class Delegations {
  /** Open delegations by tool call id: whether the sub-agent's answer message is open. */
  private readonly open = new Map<string, { answering: boolean }>();

  relay({ toolCallId, toolName, output }: RelayedChunk, out: Event[]): void {
    const name = toolName === undefined ? undefined : delegatedAgent(toolName);
    const inner = output as { from?: unknown; type?: unknown; payload?: { text?: unknown } } | undefined;
    if (name === undefined || inner?.from !== 'AGENT') return;
    const subagent = subagentRunId(toolCallId);
    let delegation = this.open.get(toolCallId);
    if (!delegation) {
      delegation = { answering: false };
      this.open.set(toolCallId, delegation);
      out.push({ type: EventType.SUBAGENT_STARTED, subagentRunId: subagent, name, parentToolCallId: toolCallId });
    }
    const delta = inner.type === 'text-delta' ? inner.payload?.text : undefined;
    if (typeof delta !== 'string' || delta === '') return;
    const messageId = subagentTextId(toolCallId);
    if (!delegation.answering) {
      delegation.answering = true;
      out.push({ type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant', subagentRunId: subagent });
    }
    out.push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta, subagentRunId: subagent });
  }

  /** The delegation's call got its result (`failure` when it failed): its sub-agent's segment ends. */
  end(toolCallId: string, failure: string | undefined, out: Event[]): void {
    const delegation = this.open.get(toolCallId);
    if (!delegation) return;
    this.open.delete(toolCallId);
    const subagent = subagentRunId(toolCallId);
    if (delegation.answering) out.push({ type: EventType.TEXT_MESSAGE_END, messageId: subagentTextId(toolCallId), subagentRunId: subagent });
    out.push(failure === undefined ? { type: EventType.SUBAGENT_FINISHED, subagentRunId: subagent } : { type: EventType.SUBAGENT_ERROR, subagentRunId: subagent, message: failure });
  }

  /** The run ends with delegations still open (it failed, or was cancelled). */
  closeAll(reason: string, out: Event[]): void {
    for (const toolCallId of [...this.open.keys()]) this.end(toolCallId, reason, out);
  }
}
