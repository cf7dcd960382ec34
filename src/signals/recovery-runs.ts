import type { Agent } from '@mastra/core/agent';
import { randomUUID } from 'node:crypto';
import { inject, injectable } from 'inversify';
import { AgentProvider } from '../agents/agent-provider.js';
import type { ResolvedConfig } from '../config.js';
import {
  continueThread,
  sendMessage,
  sendSignal,
  subscribeToThread,
  withId,
  type AgentMessage,
  type AgentSignal,
  type OnWake,
  type ThreadTarget,
  threadTarget,
} from '../mastra/index.js';
import type { BridgeMetrics } from '../observability/metrics.js';
import { RunTracker } from '../observability/run-tracker.js';
import { inTraceOf } from '../observability/trace-context.js';
import { CutWorkflowRuns, isWorkflowRun } from '../threads/cut-workflow-runs.js';
import type { DurableInbox, InboxEntry } from '../threads/inbox.js';
import { threadLeaseOwner } from '../threads/thread-lease.js';
import { TOKENS } from '../tokens.js';
import { runFailure } from '../translate/failure.js';
import { endsRun } from '../translate/chunks.js';
import { isAnswered } from './accepted-signals.js';
import { trackWoken, wokenEnd } from './woken-end.js';

/** How a thread's inbox entries stand towards its stored history (`InboxRecovery` reads it). */
export interface Standing {
  /** Stored, with an answer after it: nothing to do but forget the entry. */
  answered: InboxEntry[];
  /** Stored, and no answer after it: a run took it and was cut. */
  cut: InboxEntry[];
  /** Never stored: no run ever saw it. */
  unseen: InboxEntry[];
  /** Records of workflow `/run`s that were streaming: found with no run holding the thread, they were cut. */
  workflowRuns: InboxEntry[];
}

/**
 * The runs that answer what a thread's inbox held (`InboxRecovery` decides which): a run with no
 * new input for the messages a cut run took, and each message no run saw sent again under its id,
 * in order; the workflow runs a crash cut are settled first (`CutWorkflowRuns`). Each run is
 * tracked (span, metrics, webhook) with the origin `recovery`, in the trace of the request that
 * sent its message.
 */
@injectable()
export class RecoveryRuns {
  constructor(
    @inject(AgentProvider) private readonly agents: AgentProvider,
    @inject(TOKENS.Inbox) private readonly inbox: DurableInbox,
    @inject(TOKENS.Metrics) private readonly metrics: BridgeMetrics,
    @inject(RunTracker) private readonly tracker: RunTracker,
    @inject(TOKENS.Config) private readonly config: ResolvedConfig,
    @inject(CutWorkflowRuns) private readonly workflowRuns: CutWorkflowRuns,
  ) {}

  /**
   * Settles one thread's cut workflow runs, then answers its entries: those a cut run took
   * (`cut`), then those no run saw (`unseen`); answers how many runs were settled and messages answered.
   */
  async answer({ cut, unseen, workflowRuns }: Omit<Standing, 'answered'>): Promise<number> {
    const settled = await this.workflowRuns.settle(workflowRuns);
    const first = cut[0] ?? unseen[0];
    if (!first) return settled;
    const { threadId, resourceId, agentId } = first;
    const { agent } = await this.agents.withMemory(agentId);
    if (cut.length > 0) {
      await inTraceOf(cut[0].traceparent, () => this.continueThread(agent, { resourceId, threadId }));
      await this.inbox.remove(
        threadId,
        cut.map((e) => e.id),
      );
    }
    for (const entry of unseen) await inTraceOf(entry.traceparent, () => this.resend(agent, entry));
    return settled + cut.length + unseen.length;
  }

  /** Whether a run holds the entry's thread now, in any process on the same leases. */
  async held(entry: InboxEntry): Promise<boolean> {
    if (isWorkflowRun(entry)) return this.workflowRuns.held(entry);
    const { threadId, resourceId, agentId } = entry;
    const { agent } = await this.agents.withMemory(agentId);
    return (await threadLeaseOwner(agent, { resourceId, threadId })) !== undefined;
  }

  /**
   * A run with no new input: its prompt ends with the stored messages no run answered, which it
   * answers, as the cut run would have.
   */
  private async continueThread(agent: Agent, target: ThreadTarget): Promise<void> {
    this.metrics.recoveryRun('continue');
    const runId = randomUUID();
    const tracked = this.tracker.start({ agentId: agent.id, origin: 'recovery', threadId: target.threadId, runId, resourceId: target.resourceId });
    try {
      const output = await tracked.within(() => continueThread(agent, target, runId));
      for await (const _chunk of output.fullStream) {
        // drained: the run stores its answer as it goes
      }
      tracked.endWith(wokenEnd(output));
    } catch (error) {
      // As a `/run` that broke says it: an outage is `UNAVAILABLE`, anything else `RUN_FAILED`.
      tracked.endWith({ outcome: 'error', error: runFailure(error, 'RUN_FAILED') });
      throw error;
    }
  }

  /** Sends one entry again under its id, waits for the run that takes it to end, and forgets the entry. */
  private async resend(agent: Agent, entry: InboxEntry): Promise<void> {
    this.metrics.recoveryRun('resend');
    const target = threadTarget(entry);
    // Subscribed first: the run it wakes may end before a later subscription would see it.
    const subscription = await subscribeToThread(agent, target);
    // The run it wakes is Mastra's to stream: tracked for its span, metrics and webhook.
    const onWake: OnWake = (woken) => void trackWoken(this.tracker, { agentId: agent.id, origin: 'recovery', ...target }, woken);
    try {
      // A queued message is sent as a message: it is the thread's next input either way.
      // The inbox holds what the route took (checked by its schema then): a signal's fields, or a message.
      const answer =
        entry.kind === 'signal'
          ? await sendSignal(agent, { ...(entry.message as AgentSignal), id: entry.id }, target, onWake)
          : await sendMessage(agent, withId(entry.message as AgentMessage, entry.id), target, onWake);
      if (isAnswered(answer.action) && answer.runId) {
        for await (const chunk of subscription.stream as AsyncIterable<{ type: string; runId?: string }>) {
          if (chunk.runId === answer.runId && endsRun(chunk.type)) break;
        }
      } else {
        this.config.logger.warn(`Recovery of message ${entry.id} on thread ${entry.threadId}: Mastra answered ${answer.action}; it is not sent again`);
      }
    } finally {
      subscription.unsubscribe();
    }
    // Sent once, whatever came of it: an entry left behind would be sent again by every recovery.
    await this.inbox.remove(entry.threadId, [entry.id]);
  }
}
