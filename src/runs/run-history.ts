import type { Event } from '@ag-ui/core';
import { inject, injectable } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import { errorMessage } from '../text.js';
import { RunEndings } from '../threads/run-endings.js';
import { WIND_DOWN_MS } from '../threads/thread-control.js';
import { type ThreadScope, ThreadStore } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';
import type { MastraChunk } from '../translate/chunks.js';
import { beforeTerminal, blockedStep } from '../translate/retraction.js';
import { runEndIn } from '../translate/run-end.js';
import type { EventSink } from './prepared-run.js';
import { RunEndRecords } from './run-end-records.js';
import type { RunContext } from './run-plan.js';

/**
 * What the thread keeps of a `/run` as it ends, and the history its client then holds: what a
 * processor discarded (retracted), what a cut run kept, what its workflow calls showed, and how it
 * ended when it did not finish as asked (its run-end message). A run that stores nothing
 * (`stored` absent) keeps nothing.
 */
@injectable()
export class RunHistory {
  constructor(
    @inject(TOKENS.Config) private readonly config: ResolvedConfig,
    @inject(ThreadStore) private readonly threads: ThreadStore,
    @inject(RunEndings) private readonly endings: RunEndings,
    @inject(RunEndRecords) private readonly runEnds: RunEndRecords,
  ) {}

  /**
   * `write`, with the run's end (the batch with its run-end message: cancelled or failed) kept in
   * the thread, after its input `inputId`, before the batch goes out, so that a client that loads
   * the thread on seeing it finds it.
   */
  keepingRunEnd(write: EventSink, stored: ThreadScope | undefined, inputId: string | undefined): EventSink {
    if (!stored) return write;
    return (events) => {
      const end = runEndIn(events);
      return end ? this.runEnds.keep(stored, end, inputId).then(() => write(events)) : write(events);
    };
  }

  /** What the run's workflow calls showed, kept for history and for their resume, before the run's end is written. */
  async keepWorkflowActivities({ translator, stored }: RunContext): Promise<void> {
    const activities = translator.workflowActivities;
    if (stored && Object.keys(activities).length > 0) await this.threads.rememberWorkflowActivities(stored, activities);
  }

  /**
   * The run showed an attempt Mastra did not keep (a processor turned it down or blocked it): the
   * blocked answer leaves storage too, and the thread as stored goes before the terminal event. A
   * history that fails to load is left out (the client keeps the attempt on screen until its next
   * snapshot).
   */
  async retract(chunk: MastraChunk, events: Event[], { stored, runId }: RunContext): Promise<Event[]> {
    if (!stored) return events;
    try {
      const step = blockedStep(chunk);
      if (step) await this.threads.dropBlockedStep(stored, step);
      return beforeTerminal(events, await this.threads.messages(stored, {}, 'agui'));
    } catch (error) {
      this.config.logger.warn(`Run ${runId}: what a processor discarded could not be retracted: ${errorMessage(error)}`);
      return events;
    }
  }

  /**
   * The end of a run cut short (an abort, an interrupting run, a shutdown). Mastra keeps what the
   * run had its own way (a step cut in its reasoning is dropped, a tool result the client never saw
   * is kept, the answer stored under another id), so once the run has wound down here (its partial
   * answer stored, within a bound), the thread as stored goes before the terminal event and the
   * client ends holding the history. A client that left reads nothing: no wait for it.
   */
  async cut(context: RunContext, clientSignal: AbortSignal): Promise<Event[]> {
    const events = context.cutEnd ?? context.translator.cancel();
    const { stored, mastraRunId, runId, translator, startedAt } = context;
    if (!stored || !mastraRunId || clientSignal.aborted) return events;
    await this.endings.ended(stored.threadId, mastraRunId, Date.now() + WIND_DOWN_MS);
    try {
      const step = translator.cutStep;
      if (step) await this.threads.keepCutStep(stored, step, startedAt);
      return beforeTerminal(events, await this.threads.messages(stored, {}, 'agui'));
    } catch (error) {
      this.config.logger.warn(`Run ${runId}: what the cut run kept could not be read: ${errorMessage(error)}`);
      return events;
    }
  }
}
