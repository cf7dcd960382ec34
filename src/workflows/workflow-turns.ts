import type { Mastra } from '@mastra/core';
import { inject, injectable } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import { threadBusy } from '../errors.js';
import { workflowLeases } from '../mastra/index.js';
import type { RunOptions } from '../runs/prepared-run.js';
import { inboxEntry, type DurableInbox } from '../threads/inbox.js';
import { RecoveryGate } from '../threads/recovery-gate.js';
import type { ThreadControl } from '../threads/thread-control.js';
import { keepLease, takeThreadTurn, workflowLeaseOwner } from '../threads/thread-lease.js';
import type { ThreadScope } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';

/** A workflow run's hold on its thread, from admission to its end. */
export interface WorkflowTurn {
  /**
   * Records the run in the durable inbox while it streams (acknowledged: committed before
   * `RUN_STARTED`), so that a crash that cuts it leaves a record recovery settles
   * (`CutWorkflowRuns`). `inputId`: the user message it answers, if any.
   */
  record(inputId?: string): Promise<void>;
  /** Keeps the thread's lease while the run streams (Mastra does not lease a workflow's runs); answers how to stop. */
  keep(): () => void;
  /** Gives the thread back, its record first: a record is never left on a thread no run holds while its run lives. */
  release(): Promise<void>;
}

/**
 * How a workflow `/run` takes its thread, as an agent's does: behind the thread's recovery (what a
 * crash left unanswered comes first), then Mastra's thread lease under the run's id, one run per
 * thread in any process (`multitask: "reject"` answers `409 THREAD_BUSY` at once, `"interrupt"`
 * stops the thread's workflow run wherever it streams, else it waits up to `threadBusyWaitMs`).
 */
@injectable()
export class WorkflowTurns {
  constructor(
    @inject(TOKENS.Config) private readonly config: ResolvedConfig,
    @inject(TOKENS.Mastra) private readonly mastra: Mastra,
    @inject(RecoveryGate) private readonly gate: RecoveryGate,
    @inject(TOKENS.Inbox) private readonly inbox: DurableInbox,
    @inject(TOKENS.ThreadControl) private readonly control: ThreadControl,
  ) {}

  /** Stops the thread's workflow run wherever it streams (here, or in the process that holds the thread); answers whether one did. */
  async stop(scope: ThreadScope, reason: string): Promise<boolean> {
    // Nobody holds the thread: no run streams, and no process need be asked.
    if ((await workflowLeaseOwner(this.mastra, scope)) === undefined) return false;
    return this.control.stopStreamed(scope, reason);
  }

  async take(scope: ThreadScope & { agentId: string }, runId: string, multitask: RunOptions['multitask']): Promise<WorkflowTurn> {
    await this.gate.pass(scope.threadId);
    if (multitask === 'interrupt') await this.stop(scope, 'Interrupted by a new run');
    const leases = workflowLeases(this.mastra);
    const reject = multitask === 'reject';
    const lease = await takeThreadTurn(leases, scope, runId, reject ? 0 : this.config.threadBusyWaitMs, reject ? threadBusy : undefined);
    let recorded = false;
    return {
      record: async (inputId) => {
        await this.inbox.add(inboxEntry('workflow', runId, scope, { inputId }));
        recorded = true;
      },
      keep: () => keepLease(leases, scope, runId),
      release: async () => {
        if (recorded)
          await this.inbox.remove(scope.threadId, [runId]).catch(() => {
            // An outage: recovery finds the run ended in storage and drops the record then.
          });
        await lease.release();
      },
    };
  }
}
