import { inject, injectable } from 'inversify';
import { z } from 'zod';
import type { Agent } from '@mastra/core/agent';
import { conflict, notFound, type BridgeError } from '../errors.js';
import { suspendedRuns, threadTarget, type ThreadTarget } from '../mastra/index.js';
import type { ThreadControl } from '../threads/thread-control.js';
import { ThreadStore, type ThreadScope } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';
import { clientRunIdOf } from '../translate/ids.js';
import type { ToolApprovalSchema } from './schemas.js';

/** A call that waits for a person's approval. */
export const PendingApprovalSchema = z.object({ runId: z.string(), toolCallId: z.string(), toolName: z.string(), args: z.unknown() });

export type PendingApproval = z.infer<typeof PendingApprovalSchema>;

/**
 * A thread's tool calls that wait for approval, and their answers: approved or declined once, in
 * any process, also after a restart (Mastra reads the stopped run from storage).
 */
@injectable()
export class ThreadApprovals {
  constructor(
    @inject(ThreadStore) private readonly threads: ThreadStore,
    @inject(TOKENS.ThreadControl) private readonly control: ThreadControl,
  ) {}

  async pendingApprovals(scope: ThreadScope): Promise<PendingApproval[]> {
    const { agent } = await this.threads.own(scope, 'read');
    return approvalsOf(agent, scope);
  }

  /** Approves or declines a call that waits for approval (also after a restart: Mastra reads storage). */
  async toolApproval(scope: ThreadScope, body: z.output<typeof ToolApprovalSchema>): Promise<{ runId: string; toolCallId: string }> {
    const { agent } = await this.threads.own(scope, 'read');
    const call = (await approvalsOf(agent, scope)).find((p) => p.toolCallId === body.toolCallId);
    if (!call) throw await this.notWaiting(scope, body.toolCallId);
    const thread = threadTarget(scope);
    const { toolCallId, approved, resumeData, reason } = body;
    // Two approvals at once (here or in another process) both see the call waiting: one resumes it.
    const result = await this.control.once(toolCallId, () =>
      this.control.answerCall(agent, thread, { approval: { toolCallId, approved, resumeData, reason } }),
    );
    if (!result) throw conflict(`Tool call ${body.toolCallId} was answered already`);
    return { ...result, runId: clientRunIdOf(scope.threadId, result.runId) };
  }

  /**
   * Why an approval finds nothing waiting: a call the thread's history holds is not waiting any
   * more (answered already, or never asked for approval): `409`, as a tool result posted twice.
   * Any other id is unknown: `404`.
   */
  private async notWaiting(scope: ThreadScope, toolCallId: string): Promise<BridgeError> {
    const history = await this.threads.messages(scope, {}, 'agui');
    const known = history.some((m) => m.role === 'assistant' && m.toolCalls?.some((c) => c.id === toolCallId));
    return known
      ? conflict(`Tool call ${toolCallId} is not waiting for approval: it was answered already or never asked for it`)
      : notFound('TOOL_CALL_NOT_FOUND', `No tool call ${toolCallId} is waiting for approval on this thread`);
  }
}

/** The calls of the agent's stopped runs on the thread that wait for approval. */
async function approvalsOf(agent: Agent, thread: ThreadTarget): Promise<PendingApproval[]> {
  const runs = await suspendedRuns(agent, thread);
  return runs.flatMap((run) =>
    run.toolCalls
      .filter((call) => call.requiresApproval && call.toolCallId)
      .map((call) => ({
        runId: clientRunIdOf(thread.threadId, run.runId),
        toolCallId: call.toolCallId as string,
        toolName: call.toolName ?? 'unknown',
        args: call.args ?? {},
      })),
  );
}
