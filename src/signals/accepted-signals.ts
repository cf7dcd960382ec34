import type { Agent } from '@mastra/core/agent';
import { inject, injectable } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import { threadTarget, type OnWake, type SignalDecision, type WokenOutput } from '../mastra/index.js';
import type { RunOutcome } from '../observability/metrics.js';
import { RunTracker } from '../observability/run-tracker.js';
import { inboxEntry, type DurableInbox, type InboxEntry } from '../threads/inbox.js';
import { RunEndings } from '../threads/run-endings.js';
import { ThreadStore, type ThreadScope } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';
import { errorMessage } from '../text.js';
import { lastStep } from '../translate/retraction.js';
import { trackWoken } from './woken-end.js';

/** A decision after which a run is to answer the signal (`persist` and `discard` keep it unanswered). */
export const isAnswered = (action: SignalDecision['action']) => action === 'wake' || action === 'deliver';

/**
 * What an acknowledged signal means: kept in the durable inbox until a run answers it, and the run
 * it woke watched (Mastra streams that run itself): its span and metrics, its end, and a failed
 * run's message forgotten, as a failed `/run`'s is.
 */
@injectable()
export class AcceptedSignals {
  constructor(
    @inject(TOKENS.Config) private readonly config: ResolvedConfig,
    @inject(ThreadStore) private readonly threads: ThreadStore,
    @inject(TOKENS.Inbox) private readonly inbox: DurableInbox,
    @inject(RunEndings) private readonly endings: RunEndings,
    @inject(RunTracker) private readonly tracker: RunTracker,
  ) {}

  /** Keeps what a run is to answer in the durable inbox, under the id Mastra gave it, until history answers it. */
  keep(scope: ThreadScope, agent: Agent, kind: InboxEntry['kind'], id: string, message: unknown): Promise<void> {
    return this.inbox.add(inboxEntry(kind, id, { ...scope, agentId: agent.id }, message));
  }

  /**
   * Counts a run a signal woke, and its end: Mastra streams that run itself, so its end is read
   * from the output once it settles (`trackWoken`).
   */
  watch(agent: Agent, scope: ThreadScope): OnWake {
    return (woken) => {
      const { runId, output } = woken;
      const end = trackWoken(this.tracker, { agentId: agent.id, origin: 'signal', ...threadTarget(scope) }, woken);
      this.endings.track(runId, end);
      this.woken.set(
        runId,
        end.then(({ outcome }) => outcome),
      );
      void end.then(() => {
        this.woken.delete(runId);
        // No client may follow the thread: the answer a guardrail blocked leaves storage here too.
        if (output.tripwire) void this.dropBlockedAnswer({ ...scope, agentId: agent.id }, output);
      });
    };
  }

  private async dropBlockedAnswer(scope: ThreadScope, output: WokenOutput): Promise<void> {
    try {
      const step = lastStep(output.messageId, await output.steps);
      if (step) await this.threads.dropBlockedStep(scope, step);
    } catch (error) {
      this.config.logger.warn(`Thread ${scope.threadId}: the answer a guardrail blocked could not be dropped: ${errorMessage(error)}`);
    }
  }

  /**
   * How the runs this process woke end, until they do: a message whose run failed leaves the
   * inbox as a `/run`'s does (its client saw the `RUN_ERROR`), or every recovery would run the
   * failing input again before anything sent after it.
   */
  private readonly woken = new Map<string, Promise<RunOutcome>>();

  /** Forgets the kept message once the run it woke has failed. */
  forgetIfFailed(threadId: string, answer: SignalDecision): void {
    const outcome = answer.action === 'wake' && answer.runId ? this.woken.get(answer.runId) : undefined;
    void outcome?.then(async (ended) => {
      if (ended !== 'error') return;
      await this.inbox.remove(threadId, [answer.signalId]).catch((error: unknown) => {
        // The sweep and recovery see it again; it is answered by nothing, so at most run once more.
        this.config.logger.debug(`inbox: could not forget the failed message ${answer.signalId}: ${(error as Error)?.message ?? error}`);
      });
    });
  }
}
