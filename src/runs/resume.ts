import type { RunAgentInput } from '@ag-ui/core';
import type { Agent } from '@mastra/core/agent';
import { resumeCall, type RunOptions, type RunOutput } from '../agents/mastra.js';
import { notFound } from '../errors.js';
import { INTERRUPT_ID_SEPARATOR } from '../translate/ids.js';

type ResumeEntry = NonNullable<RunAgentInput['resume']>[number];

/** A suspended Mastra call and the client's answer to it. */
export interface ResumeTarget {
  runId: string;
  toolCallId: string;
  /** Waiting for approval (approve/decline), rather than suspended by the tool (resume with data). */
  requiresApproval: boolean;
  entry: ResumeEntry;
}

/**
 * Finds the suspended Mastra call behind each interrupt id (`<runId>::<toolCallId>`), on the
 * caller's thread only: anything else is `404 TOOL_CALL_NOT_FOUND`, before a byte is streamed.
 *
 * @example
 * const targets = await findResumeTargets(agent, input.resume, { threadId, resourceId });
 */
export async function findResumeTargets(agent: Agent, entries: ResumeEntry[], scope: { threadId: string; resourceId: string }): Promise<ResumeTarget[]> {
  const { runs } = await agent.listSuspendedRuns({ threadId: scope.threadId, resourceId: scope.resourceId });
  return entries.map((entry) => {
    const [runId, toolCallId] = entry.interruptId.split(INTERRUPT_ID_SEPARATOR);
    const call = runs.find((r) => r.runId === runId)?.toolCalls.find((t) => t.toolCallId === toolCallId);
    if (!call || !toolCallId) throw notFound('TOOL_CALL_NOT_FOUND', `Nothing is waiting for interrupt ${entry.interruptId} on this thread`);
    return { runId, toolCallId, requiresApproval: call.requiresApproval, entry };
  });
}

/**
 * Continues a suspended call the way the client answered: an approval is approved unless it was
 * cancelled or its payload says `approved: false` (then declined, with `payload.reason`); a
 * suspended tool gets `payload` as its resume data, or is declined when cancelled.
 */
export function resume(agent: Agent, target: ResumeTarget, streamOptions: RunOptions): Promise<RunOutput> {
  const { runId, toolCallId, entry } = target;
  const payload = (entry.payload ?? {}) as { approved?: unknown; reason?: unknown };
  const reason = typeof payload.reason === 'string' ? payload.reason : undefined;
  const options = { ...streamOptions, runId, toolCallId };
  if (entry.status === 'cancelled' || (target.requiresApproval && payload.approved === false)) return resumeCall(agent, { decline: true, reason }, options);
  return resumeCall(agent, target.requiresApproval ? { approve: true } : { resumeData: entry.payload ?? {} }, options);
}
