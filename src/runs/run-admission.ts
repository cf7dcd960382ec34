import type { Agent } from '@mastra/core/agent';
import { inject, injectable } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import { interruptNotWaiting, threadBusy } from '../errors.js';
import { leasesOf, type RunOutput, type StorageThreadType, type ThreadTarget } from '../mastra/index.js';
import type { InboxCuts } from '../threads/inbox.js';
import { SUPERSEDED_BY_INPUT, PendingInterrupts } from '../threads/pending-interrupts.js';
import type { ThreadControl } from '../threads/thread-control.js';
import { takeThreadTurn, threadLeaseOwner, type ThreadTurn } from '../threads/thread-lease.js';
import type { ThreadScope } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';
import type { ResumeRequest, Resumer, ResumeTarget } from './resume.js';
import type { RunLive } from './stream-options.js';

/** What a thread that is running already does with a new run (`RunOptions.multitask`). */
export type Multitask = 'enqueue' | 'reject' | 'interrupt';

/**
 * Whether and when a `/run` may go on its thread: the thread's turn (one run at a time, in every
 * process on the same leases), and each call a client answers answered once.
 */
@injectable()
export class RunAdmission {
  constructor(
    @inject(TOKENS.Config) private readonly config: ResolvedConfig,
    @inject(PendingInterrupts) private readonly interrupts: PendingInterrupts,
    @inject(TOKENS.ThreadControl) private readonly control: ThreadControl,
    @inject(TOKENS.InboxCuts) private readonly cuts: InboxCuts,
    @inject(TOKENS.Resumer) private readonly resumer: Resumer,
  ) {}

  /**
   * The thread's turn for a new run, as `multitask` says: wait for it, refuse at once, or cut the
   * running run short. A run stopped on an interrupt is not running: the new input supersedes
   * what it waits on (declined) and takes the thread at once, whatever `multitask` says. A thread
   * not stored yet has no stopped run to look for (a first message skips those reads). `row`: the
   * thread's row as the request read it (`undefined`: the thread does not exist yet).
   */
  async takeTurn(agent: Agent, scope: ThreadScope, runId: string, multitask: Multitask, row: StorageThreadType | undefined): Promise<ThreadTurn> {
    const { waiting, streaming } = row
      ? await this.interrupts.standing(agent, scope)
      : { waiting: [], streaming: (await threadLeaseOwner(agent, scope)) !== undefined };
    if (multitask === 'reject' && streaming) return takeThreadTurn(leasesOf(agent), scope, runId, 0, threadBusy);
    if (row) await this.interrupts.supersede(agent, scope, SUPERSEDED_BY_INPUT, { waiting, row });
    if (multitask === 'reject') return takeThreadTurn(leasesOf(agent), scope, runId, 0, threadBusy);
    // Only a running thread is aborted: asking the other processes about an idle one would wait out their silence.
    // The aborted run's partial answer is stored before this run's input, as a Stop then a message would have it.
    if (multitask === 'interrupt' && streaming)
      await this.cuts.around({ ...scope, agentId: agent.id }, () => this.control.abort(agent, scope, { untilEnded: true }));
    return takeThreadTurn(leasesOf(agent), scope, runId, this.config.threadBusyWaitMs);
  }

  /** A call another `resume` or an approval is answering (or answered) no longer waits: refused before the stream opens. */
  async assertUnanswered(resume: readonly ResumeTarget[]): Promise<void> {
    for (const { toolCallId, entry } of resume) if (await this.control.taken(toolCallId)) throw interruptNotWaiting(entry.interruptId);
  }

  /** A resumed call that asks again (it suspended at its next step) is a new question, answered once in turn. */
  async asksAgain(toolCallId: string): Promise<void> {
    await this.control.asksAgain(toolCallId);
  }

  /**
   * Resumes a call, once, in any process, as an approval is (`ThreadControl.once`): new input
   * that comes while it is resumed finds it taken and does not decline it (the run streams), and a
   * second answer is refused. A resume that Mastra refuses gives the call back.
   */
  async resume(agent: Agent, thread: ThreadTarget, request: ResumeRequest, live: RunLive): Promise<RunOutput> {
    const output = await this.control.once(request.target.toolCallId, () => this.resumer.resume(agent, thread, request, live));
    if (!output) throw interruptNotWaiting(request.target.entry.interruptId);
    return output;
  }
}
