import type { Mastra } from '@mastra/core';
import { inject, injectable } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import { cancelWorkflowRun } from '../mastra/index.js';
import { RunTracker } from '../observability/run-tracker.js';
import { inTraceOf } from '../observability/trace-context.js';
import { TOKENS } from '../tokens.js';
import { LOST_RUN } from '../translate/failure.js';
import type { DurableInbox, InboxEntry } from './inbox.js';
import { workflowLeaseOwner } from './thread-lease.js';
import { ThreadStore } from './thread-store.js';

/** Where Mastra leaves a workflow run that was going on when its process died. */
const UNFINISHED = new Set(['running', 'waiting', 'pending']);

/** Whether an inbox entry is a workflow `/run`'s record (`WorkflowTurns`). */
export const isWorkflowRun = (entry: InboxEntry) => entry.kind === 'workflow';

/**
 * Settles the workflow `/run`s a crash cut, as recovery finds their records in the durable inbox
 * (on restart, or in a survivor once no process holds the thread). Such a run is not run again:
 * its steps may act on the world, and Mastra would run the cut step a second time. It ends
 * failed, as a run whose process was lost (`UNAVAILABLE`): cancelled in storage (so that nothing
 * restarts it, and a resume of it is `404`), its run-end message kept in the thread's history
 * and its webhook sent (`RunTracker`, origin `recovery`). A record whose run ended in storage
 * (its process died after the end, before it dropped the record) is just dropped.
 */
@injectable()
export class CutWorkflowRuns {
  constructor(
    @inject(TOKENS.Config) private readonly config: ResolvedConfig,
    @inject(TOKENS.Mastra) private readonly mastra: Mastra,
    @inject(ThreadStore) private readonly threads: ThreadStore,
    @inject(TOKENS.Inbox) private readonly inbox: DurableInbox,
    @inject(RunTracker) private readonly tracker: RunTracker,
  ) {}

  /** Whether a run holds the record's thread now, in any process on the same leases (a live run renews its lease). */
  async held(entry: InboxEntry): Promise<boolean> {
    return (await workflowLeaseOwner(this.mastra, entry)) !== undefined;
  }

  /** Settles each record's run, in order; answers how many were cut. */
  async settle(entries: readonly InboxEntry[]): Promise<number> {
    let cut = 0;
    for (const entry of entries) if (await this.settleOne(entry)) cut++;
    return cut;
  }

  private async settleOne(entry: InboxEntry): Promise<boolean> {
    // Asked last, after the record was read: a run records itself once it holds the thread and
    // drops its record before letting go, so a record read earlier on a thread nobody holds now is a run that is over.
    if (await this.held(entry)) return false;
    const { threadId, resourceId, agentId } = entry;
    const latest = await this.threads.latestWorkflowRun({ threadId, resourceId, agentId }, agentId);
    // A later run on the thread took over from it (and cancelled it): it was settled then.
    const cut = latest?.lastRunId === entry.id && UNFINISHED.has(latest.stored.status);
    if (cut) {
      await cancelWorkflowRun(latest.workflow, { runId: latest.runId, resourceId });
      const { inputId } = entry.message as { inputId?: string };
      const run = { agentId, origin: 'recovery' as const, threadId, resourceId, runId: entry.id, ...(inputId && { inputId }) };
      inTraceOf(entry.traceparent, () => this.tracker.start(run).endWith({ outcome: 'error', error: { ...LOST_RUN } }));
      this.config.logger.info(`Thread ${threadId}: workflow run ${entry.id} of ${agentId} was cut by a lost process; it ends failed`);
    }
    await this.inbox.remove(threadId, [entry.id]);
    return cut;
  }
}
