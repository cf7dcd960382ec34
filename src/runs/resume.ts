import type { RunAgentInput } from '@ag-ui/core';
import type { Agent } from '@mastra/core/agent';
import { injectable } from 'inversify';
import { resumeCall, suspendedRuns, type RunOutput, type ThreadTarget } from '../mastra/index.js';
import { interruptNotWaiting } from '../errors.js';
import { INTERRUPT_ID_SEPARATOR } from '../translate/ids.js';
import { streamOptions, type RunLive, type RunShape } from './stream-options.js';

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
 * caller's thread only: anything else is `404 RUN_NOT_FOUND`, before a byte is streamed.
 */
export async function findResumeTargets(agent: Agent, entries: ResumeEntry[], scope: ThreadTarget): Promise<ResumeTarget[]> {
  const runs = await suspendedRuns(agent, scope);
  return entries.map((entry) => {
    const [runId, toolCallId] = entry.interruptId.split(INTERRUPT_ID_SEPARATOR);
    const call = runs.find((r) => r.runId === runId)?.toolCalls.find((t) => t.toolCallId === toolCallId);
    if (!call || !toolCallId) throw interruptNotWaiting(entry.interruptId);
    return { runId, toolCallId, requiresApproval: call.requiresApproval, entry };
  });
}

/** A resume as plain data: the call and the client's answer, and what the run's options are built from. */
export interface ResumeRequest {
  target: ResumeTarget;
  run: RunShape;
}

/**
 * Where a stopped call is resumed. In one process, here; with several, where its run stopped
 * (`RedisThreadControl`): Mastra keeps a stopped run as its thread's in the process that stopped
 * it, and only resuming it there lets go of it. The output reads alike either way.
 */
export interface Resumer {
  resume(agent: Agent, thread: ThreadTarget, request: ResumeRequest, live: RunLive): Promise<RunOutput>;
}

/**
 * Resumes in this process, with the run's options built here, the way the client answered: an
 * approval is approved unless it was cancelled or its payload says `approved: false` (then
 * declined, with `payload.reason`); a suspended tool gets `payload` as its resume data, or is
 * declined when cancelled.
 */
export function resumeHere(agent: Agent, { target, run }: ResumeRequest, live: RunLive): Promise<RunOutput> {
  const { runId, toolCallId, entry } = target;
  const payload = (entry.payload ?? {}) as { approved?: unknown; reason?: unknown };
  const reason = typeof payload.reason === 'string' ? payload.reason : undefined;
  const options = { ...streamOptions(run, live), runId, toolCallId };
  if (entry.status === 'cancelled' || (target.requiresApproval && payload.approved === false)) return resumeCall(agent, { decline: true, reason }, options);
  return resumeCall(agent, target.requiresApproval ? { approve: true } : { resumeData: entry.payload ?? {} }, options);
}

/** Every run is in this process. */
@injectable()
export class LocalResumer implements Resumer {
  resume(agent: Agent, _thread: ThreadTarget, request: ResumeRequest, live: RunLive): Promise<RunOutput> {
    return resumeHere(agent, request, live);
  }
}
