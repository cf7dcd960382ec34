import type { Agent } from '@mastra/core/agent';
import { outputFinished, resumeCall, sendToolApproval, type ThreadTarget, type ToolApproval } from '../mastra/index.js';

/**
 * How a call a stopped run waits on is answered: a person's approval or decline (the run goes on,
 * the model answers the result), or superseded by new input (declined with a reason, and the run
 * stops after that step: nobody asked for a new answer).
 */
export type CallAnswer = { approval: ToolApproval } | { supersede: { runId: string; toolCallId: string; reason: string } };

/** The run an answer resumed, and the call it answered. */
export interface AnsweredCall {
  runId: string;
  toolCallId: string;
}

/**
 * Answers a waiting call with Mastra's own methods, in this process. Where the call's run stopped
 * matters (`ThreadControl.answerCall`): Mastra keeps a stopped run as its thread's run, and only
 * the process that resumes it lets go of it.
 */
export async function answerCall(agent: Agent, thread: ThreadTarget, answer: CallAnswer): Promise<AnsweredCall> {
  if ('supersede' in answer) return declineOnly(agent, thread, answer.supersede);
  return sendToolApproval(agent, thread, answer.approval);
}

/**
 * Declines one call and reads the resumed run to its end. It stops after the declined step, so
 * Mastra stores the decline and the model is not asked again.
 */
async function declineOnly(agent: Agent, thread: ThreadTarget, call: { runId: string; toolCallId: string; reason: string }): Promise<AnsweredCall> {
  const output = await resumeCall(
    agent,
    { decline: true, reason: call.reason },
    {
      runId: call.runId,
      toolCallId: call.toolCallId,
      memory: { thread: thread.threadId, resource: thread.resourceId },
      savePerStep: true,
      stopWhen: () => true,
    },
  );
  for await (const _chunk of output.fullStream) {
    // read to the end: Mastra runs the step as the stream is read
  }
  await outputFinished(output);
  return { runId: call.runId, toolCallId: call.toolCallId };
}
