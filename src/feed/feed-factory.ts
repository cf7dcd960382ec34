import type { Message } from '@ag-ui/core';
import type { Mastra } from '@mastra/core';
import { inject, injectable, optional } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import { BridgeError } from '../errors.js';
import { backgroundTaskStream, memoryOf, stoppedThreadRun, suspendedRuns } from '../mastra/index.js';
import type { RunAnnouncements } from '../runs/run-announcements.js';
import { WorkingMemoryState } from '../state/working-memory.js';
import { RunEndings } from '../threads/run-endings.js';
import { WIND_DOWN_MS } from '../threads/thread-control.js';
import { THREAD_LEASE_TTL_MS, threadLeaseKey, threadLeaseOwner, type HolderWatch } from '../threads/thread-lease.js';
import { type ThreadScope, ThreadStore } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';
import { clientRunIdOf, interruptId } from '../translate/ids.js';
import type { ThreadEventLog } from './event-log.js';
import { followedId, type FollowTarget } from './follow-target.js';
import type { FeedMetrics, FeedOptions } from './feed-options.js';
import { ThreadFeed } from './thread-feed.js';

/** What every feed of a process shares, which the hub holds: the log it writes to, and the counters. */
export interface FeedPlumbing {
  log: ThreadEventLog;
  /** The log is shared with other processes (Redis). */
  sharedLog: boolean;
  metrics: FeedMetrics;
}

/**
 * Makes a thread's feed: what it reads of the thread (history, state, what a workflow waits on),
 * of its runs (how each ended, what a cut step showed) and of Mastra (background tasks, the
 * thread's lease). The hub decides which feeds live and for how long.
 */
@injectable()
export class FeedFactory {
  constructor(
    @inject(TOKENS.Config) private readonly config: ResolvedConfig,
    @inject(TOKENS.Mastra) private readonly mastra: Mastra,
    @inject(ThreadStore) private readonly threads: ThreadStore,
    @inject(TOKENS.RunAnnouncements) private readonly announcements: RunAnnouncements,
    @inject(RunEndings) private readonly endings: RunEndings,
    @inject(TOKENS.HolderWatch) @optional() private readonly holders?: HolderWatch,
  ) {}

  async create(target: FollowTarget, { log, sharedLog, metrics }: FeedPlumbing): Promise<ThreadFeed> {
    const scope = { threadId: target.threadId, resourceId: target.resourceId, agentId: followedId(target) };
    // A workflow's state is its run's; an agent's, its working memory (when it keeps one).
    const workingMemory = target.workflow ? undefined : WorkingMemoryState.of(await memoryOf(target.agent));
    // A feed may follow a thread that is not the caller's (answered as one not created yet): Mastra
    // reads a thread's working memory by thread id alone, so the owner is checked first.
    const ownState = async () => ((await this.threads.ownedOrMissing(scope, 'as-missing')).existed ? workingMemory?.read(scope) : undefined);
    const loadState = target.workflow?.loadState ?? (workingMemory && ownState);
    const feed = new ThreadFeed({
      agent: target.agent,
      threadId: target.threadId,
      resourceId: target.resourceId,
      log,
      sharedLog,
      maxClientQueueBytes: this.config.maxClientQueueBytes,
      heartbeatMs: this.config.heartbeatMs,
      announcement: (runId) => this.announcements.get(runId),
      loadHistory: () => this.history(scope),
      ...(loadState && { loadState }),
      ...(target.workflow ? this.workflowReads(target) : agentReads(target)),
      dropBlockedStep: (step) => this.threads.dropBlockedStep(scope, step),
      loadWorkflowActivities: () => this.threads.workflowActivities(scope),
      leaseOwner: async () => {
        const owner = await threadLeaseOwner(target.agent, target);
        return owner && clientRunIdOf(target.threadId, owner);
      },
      runEnded: (runId) => this.endings.woundDown(runId, Date.now() + WIND_DOWN_MS),
      wasCut: (runId) => this.endings.wasCut(runId),
      keepCutStep: (step, since) => this.threads.keepCutStep(scope, step, since),
      closingRun: (runId, closed) => this.endings.closing(target.threadId, runId, closed),
      backgroundStream: (signal) => backgroundTaskStream(this.mastra, target, signal),
      logger: this.config.logger,
      metrics,
    });
    await feed.start();
    return feed;
  }

  /** A workflow's feed reads what its runs wait on from storage, and watches the lease its runs hold under their AG-UI run id. */
  private workflowReads({ workflow, ...thread }: FollowTarget): Partial<FeedOptions> {
    if (!workflow) return {};
    const { holders } = this;
    return {
      loadInterrupts: workflow.loadInterrupts,
      latestRunEnded: workflow.latestRunEnded,
      watchLeaseMs: THREAD_LEASE_TTL_MS,
      ...(holders && { whenHolderGone: (runId: string, gone: () => void) => holders.whenHolderGone(threadLeaseKey(thread), runId, gone) }),
    };
  }

  /** The thread's AG-UI history; a thread that does not exist yet (a stream may come first) has none. */
  private async history(scope: ThreadScope & { agentId: string }): Promise<Message[]> {
    try {
      return await this.threads.messages(scope, {}, 'agui');
    } catch (error) {
      if (error instanceof BridgeError && error.code === 'THREAD_NOT_FOUND') return [];
      throw error;
    }
  }
}

/** An agent's feed reads its run stopped on an interrupt (Mastra replays it) and which interrupts still wait, from Mastra. */
function agentReads({ agent, ...thread }: FollowTarget): Partial<FeedOptions> {
  return {
    stoppedRun: () => stoppedThreadRun(agent, thread),
    waitingInterrupts: async () =>
      new Set(
        (await suspendedRuns(agent, thread)).flatMap(({ runId, toolCalls }) =>
          toolCalls.flatMap((c) => (c.toolCallId ? [interruptId(runId, c.toolCallId)] : [])),
        ),
      ),
  };
}
