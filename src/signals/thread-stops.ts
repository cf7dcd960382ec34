import { inject, injectable } from 'inversify';
import type { DurableInbox, InboxCuts } from '../threads/inbox.js';
import { SUPERSEDED_BY_ABORT, PendingInterrupts } from '../threads/pending-interrupts.js';
import type { ThreadControl } from '../threads/thread-control.js';
import { ThreadStore, type ThreadScope } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';
import { threadTarget } from '../mastra/index.js';

/**
 * Stops what would run on a thread: its run (and what its stopped runs wait on), or a message
 * queued behind it. Either holds after a restart: nothing stopped here runs later.
 */
@injectable()
export class ThreadStops {
  constructor(
    @inject(TOKENS.Inbox) private readonly inbox: DurableInbox,
    @inject(TOKENS.ThreadControl) private readonly control: ThreadControl,
    @inject(PendingInterrupts) private readonly interrupts: PendingInterrupts,
    @inject(TOKENS.InboxCuts) private readonly cuts: InboxCuts,
    @inject(ThreadStore) private readonly threads: ThreadStore,
  ) {}

  /**
   * Stops the thread's run, and declines what its stopped runs wait on: nothing runs later. Answers
   * once the cut run has wound down, its messages answered by the cut (`InboxCuts`).
   */
  async abort(scope: ThreadScope): Promise<{ aborted: boolean }> {
    const { agent } = await this.threads.own(scope, 'read');
    const thread = threadTarget(scope);
    return this.cuts.around({ ...thread, agentId: agent.id }, async () => {
      // Mastra keeps a run stopped on an interrupt as the thread's run, and "aborts" it to no effect.
      const { waiting, streaming } = await this.interrupts.standing(agent, thread);
      const { aborted } = streaming || waiting.length === 0 ? await this.control.abort(agent, thread, { untilEnded: true }) : { aborted: false };
      const declined = await this.interrupts.supersede(agent, thread, SUPERSEDED_BY_ABORT, { waiting });
      return { aborted: aborted || declined.length > 0 };
    });
  }

  async cancelQueued(scope: ThreadScope, signalId: string): Promise<{ cancelled: string[] }> {
    const { agent } = await this.threads.own(scope, 'read');
    const cancelledSignalIds = await this.control.cancelQueued(agent, threadTarget(scope), [signalId]);
    // A cancelled message stays cancelled: a restart must not send it again.
    await this.inbox.remove(scope.threadId, cancelledSignalIds);
    return { cancelled: cancelledSignalIds };
  }
}
