import type { Agent } from '@mastra/core/agent';
import { setTimeout as delay } from 'node:timers/promises';
import { inject, injectable } from 'inversify';
import { cancelWorkflowRun, suspendedRuns, type StorageThreadType, type ThreadTarget } from '../mastra/index.js';
import { RunTracker } from '../observability/run-tracker.js';
import { TOKENS } from '../tokens.js';
import type { ThreadControl } from './thread-control.js';
import { threadLeaseOwner } from './thread-lease.js';
import { ThreadStore } from './thread-store.js';
import { workflowInterruptId } from '../translate/ids.js';

/** A call a stopped run of the thread waits on: an approval, or a tool that suspended itself. */
export interface WaitingCall {
  runId: string;
  toolCallId: string;
}

/** Why a call was declined without an answer, as its result says. */
export const SUPERSEDED_BY_INPUT = 'A new message came first';
export const SUPERSEDED_BY_ABORT = 'The run was aborted';

/**
 * How often the thread is listed again: a decline that another caller won (`ThreadControl.once`)
 * may still be settling, and a run can stop on a second call once its first is declined.
 */
const ROUNDS = 4;
/** How long to wait, at most, for Mastra to let go of a declined run's thread lease (it does so just after the run ends). */
const LET_GO_MS = 5000;
const LET_GO_POLL_MS = 5;

/** What a caller of `supersede` read of the thread already. */
interface Known {
  waiting?: WaitingCall[];
  row?: StorageThreadType;
}

/**
 * The calls a thread's stopped runs wait on, and what new input does to them. A run that ended
 * with an interrupt is over, but Mastra 1.71 keeps it as the thread's active run and holds the
 * thread's lease for it (30 min), so new input would wait on it, or be delivered into it. New
 * input supersedes it instead (docs/api.md "Pending interrupts do not hold a thread"): each waiting
 * call is declined with a reason, and the run is resumed only to store that decline, stopping
 * after the step (no new answer from the model), so the thread is free at once.
 */
@injectable()
export class PendingInterrupts {
  constructor(
    @inject(TOKENS.ThreadControl) private readonly control: ThreadControl,
    @inject(ThreadStore) private readonly threads: ThreadStore,
    @inject(RunTracker) private readonly tracker: RunTracker,
  ) {}

  /** What the thread's stopped runs wait on, read from storage (so in any process, and after a restart). */
  async waiting(agent: Agent, thread: ThreadTarget): Promise<WaitingCall[]> {
    const runs = await suspendedRuns(agent, thread);
    return runs.flatMap((run) => run.toolCalls.flatMap((call) => (call.toolCallId ? [{ runId: run.runId, toolCallId: call.toolCallId }] : [])));
  }

  /**
   * Where the thread stands: the calls its stopped runs wait on, and whether a run streams on it
   * (Mastra's lease alone does not tell: a stopped run holds it too). A call being answered (taken
   * by `ThreadControl.once`: a resume, an approval) is not waiting: storage lists it until its
   * resumed run has stored the answer, and that run streams.
   */
  async standing(agent: Agent, thread: ThreadTarget): Promise<{ waiting: WaitingCall[]; streaming: boolean }> {
    const [stored, owner] = await Promise.all([this.waiting(agent, thread), threadLeaseOwner(agent, thread)]);
    const taken = await Promise.all(stored.map((call) => this.control.taken(call.toolCallId)));
    const waiting = stored.filter((_, i) => !taken[i]);
    return { waiting, streaming: owner !== undefined && !waiting.some((call) => call.runId === owner) };
  }

  /**
   * Declines every call waiting on the thread with `reason`, each once in any process (an approval
   * that comes at the same moment either wins or finds nothing waiting), and answers once Mastra
   * has let go of those runs. Answers the ids of the calls declined here. `known`: what the caller
   * read of the thread in this request already (the calls waiting, the thread's row).
   */
  async supersede(agent: Agent, thread: ThreadTarget, reason: string, known: Known = {}): Promise<string[]> {
    const declined: string[] = await this.supersedeWorkflow(thread, { row: known.row });
    const runs = new Set<string>();
    let calls = known.waiting ?? (await this.waiting(agent, thread));
    for (let round = 1; calls.length > 0 && round <= ROUNDS; round++) {
      for (const call of calls) {
        runs.add(call.runId);
        const done = await this.control.once(call.toolCallId, () => this.control.answerCall(agent, thread, { supersede: { ...call, reason } }));
        if (done) declined.push(call.toolCallId);
      }
      calls = await this.waiting(agent, thread);
    }
    await letGo(agent, thread, runs);
    return declined;
  }

  /**
   * Cancels the thread's workflow run that waits on a person, as new input (or an abort) does to a
   * waiting call: each of its interrupts is taken once in any process, so a resume that comes at
   * the same moment either wins (the workflow goes on) or finds it no longer waiting. The cancel is
   * the workflow run's end, told through `RunTracker` (`run.cancelled`). Answers the interrupt ids
   * cancelled here.
   *
   * `holdingThread`: the caller holds the thread's lease, so a run still `running` in storage is
   * one whose process died mid-step (a live run holds the lease while it streams). It is cancelled
   * too, so that nothing (Mastra's `restartAllActiveWorkflowRuns`) runs it again unasked.
   */
  async supersedeWorkflow(thread: ThreadTarget, { holdingThread = false, row }: { holdingThread?: boolean; row?: StorageThreadType } = {}): Promise<string[]> {
    const latest = await this.threads.latestWorkflowRun(thread, undefined, row);
    if (!latest) return [];
    const { workflow, runId, stored } = latest;
    if (stored.status === 'running' && holdingThread) await cancelWorkflowRun(workflow, { runId, resourceId: thread.resourceId });
    if (stored.status !== 'suspended') return [];
    const ids = stored.suspended.map((step) => workflowInterruptId(runId, step.path));
    for (const id of ids) if (!(await this.control.once(id, async () => true))) return [];
    await cancelWorkflowRun(workflow, { runId, resourceId: thread.resourceId });
    // Its `/run` ended waiting (`run.interrupted`); this is how the workflow run ended: told once, as every run's end is.
    const { threadId, resourceId } = thread;
    this.tracker.start({ agentId: workflow.id, origin: 'run', threadId, resourceId, runId: latest.lastRunId ?? runId }).endWith({ outcome: 'cancelled' });
    return ids;
  }
}

/** Waits (bounded) until no run of `runs` holds the thread's lease. */
async function letGo(agent: Agent, thread: ThreadTarget, runs: ReadonlySet<string>): Promise<void> {
  if (runs.size === 0) return;
  const deadline = Date.now() + LET_GO_MS;
  while (Date.now() < deadline) {
    const owner = await threadLeaseOwner(agent, thread);
    if (owner === undefined || !runs.has(owner)) return;
    await delay(LET_GO_POLL_MS);
  }
}
