import type { Interrupt } from '@ag-ui/core';
import type { Agent } from '@mastra/core/agent';
import { inject, injectable } from 'inversify';
import { AgentProvider } from '../agents/agent-provider.js';
import type { ResolvedConfig } from '../config.js';
import type { FollowTarget } from '../feed/follow-target.js';
import { type RunWriter, ThreadHub } from '../feed/thread-hub.js';
import type { AnyWorkflow } from '../mastra/index.js';
import type { AgentState } from '../state/working-memory.js';
import { type ThreadScope, ThreadStore } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';
import { errorMessage } from '../text.js';
import { workflowInterrupts } from '../translate/workflow-translator.js';
import { stepFactsOf } from './workflow-plan.js';

/**
 * A workflow's thread as its followers and readers see it: its state (what its latest run stored
 * last), what that run waits on, whether it ended, and the feed its runs are written into.
 */
@injectable()
export class WorkflowThreads {
  constructor(
    @inject(TOKENS.Config) private readonly config: ResolvedConfig,
    @inject(ThreadStore) private readonly threads: ThreadStore,
    @inject(AgentProvider) private readonly agents: AgentProvider,
    @inject(ThreadHub) private readonly hub: ThreadHub,
  ) {}

  /**
   * The interrupts the thread's latest run of `workflow` waits on (none unless it is suspended):
   * what a thread's snapshot ends with, as the run's own `RUN_FINISHED` did.
   */
  async pendingInterrupts(workflow: AnyWorkflow, scope: ThreadScope): Promise<Interrupt[]> {
    const latest = await this.threads.latestWorkflowRun(scope, workflow.id);
    if (latest?.stored.status !== 'suspended') return [];
    return workflowInterrupts({ workflowId: workflow.id, mastraRunId: latest.runId, stepFacts: stepFactsOf(workflow) }, latest.stored.suspended);
  }

  /**
   * Whether the thread's latest run of `workflow` got to an end of its own, as storage says: how a
   * follower settles a run whose process died (a run cut mid-step is still `running` there).
   */
  async latestRunEnded(workflow: AnyWorkflow, scope: ThreadScope): Promise<boolean> {
    const status = (await this.threads.latestWorkflowRun(scope, workflow.id))?.stored.status;
    return status !== undefined && status !== 'running' && status !== 'failed';
  }

  /** The thread's state: what its latest run of `workflow` stored last (`{}` before any); `404` for a thread that is not the caller's. */
  async state(workflow: AnyWorkflow, scope: ThreadScope): Promise<AgentState> {
    await this.threads.get(scope);
    return this.latestState(workflow, scope);
  }

  /** What the latest run of `workflow` the caller's thread holds stored last: `{}` before any, and on a thread that is not theirs. */
  private async latestState(workflow: AnyWorkflow, scope: ThreadScope): Promise<AgentState> {
    const latest = await this.threads.latestWorkflowRun(scope, workflow.id);
    return (latest?.stored.state ?? {}) as AgentState;
  }

  /**
   * What `GET /threads/:id/events` follows on a workflow's thread: the workflow's feed, where its
   * runs are written (`openRun`), with its state. `agent` is the one that keeps the thread's memory.
   */
  followTarget(workflow: AnyWorkflow, scope: ThreadScope, agent: Agent): FollowTarget {
    const following = {
      id: workflow.id,
      loadState: () => this.latestState(workflow, scope),
      loadInterrupts: () => this.pendingInterrupts(workflow, scope),
      latestRunEnded: () => this.latestRunEnded(workflow, scope),
    };
    return { agent, threadId: scope.threadId, resourceId: scope.resourceId, workflow: following };
  }

  /** The thread's followers, here and in other processes; not reaching them (an outage) costs them this run, not the run. */
  async openRun(workflow: AnyWorkflow, scope: ThreadScope): Promise<RunWriter> {
    try {
      const { agent } = await this.agents.withMemory(workflow.id);
      return await this.hub.openRun(this.followTarget(workflow, scope, agent));
    } catch (error) {
      this.config.logger.warn(`Workflow run on thread ${scope.threadId}: its followers will not see it: ${errorMessage(error)}`);
      return { write: () => {}, close: () => {} };
    }
  }
}
