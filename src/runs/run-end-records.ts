import type { ActivitySnapshotEvent } from '@ag-ui/core';
import { inject, injectable } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import { failureOf, type RunEnd, type RunEndListener } from '../observability/run-tracker.js';
import { TOKENS } from '../tokens.js';
import { runEndActivity, type RunEndContent } from '../translate/run-end.js';
import { errorMessage } from '../text.js';
import { withinMs } from '../within.js';
import { ThreadStore, type ThreadScope } from '../threads/thread-store.js';

/**
 * How long a run's end waits, at most, for its record to be written: a storage that hangs must
 * not hold the terminal event back (the record is missing from history then, and the end goes out).
 */
const KEEP_WITHIN_MS = 2000;

/**
 * Keeps, in the thread, how each agent run that was cancelled or failed ended (its run-end
 * message, `runEndActivity`), so that a client that loads the thread later shows what a live one
 * showed. A `/run` keeps its end before its terminal batch goes out (`keep`): a client that reloads
 * on `RUN_ERROR` finds it. A run Mastra streams itself (one a signal woke, or a recovery's) is kept
 * when the tracker reports its end (`runEnded`), a moment after its followers saw it.
 *
 * @example
 * const end = runEndIn(batch);
 * if (end) await records.keep(scope, end); // then write the batch
 */
@injectable()
export class RunEndRecords implements RunEndListener {
  constructor(
    @inject(ThreadStore) private readonly threads: ThreadStore,
    @inject(TOKENS.Config) private readonly config: ResolvedConfig,
  ) {}

  /**
   * Writes the run end `end` into the thread, after the stored message `after` (the input the run
   * answered) when there is one; a failure (or a wait past `KEEP_WITHIN_MS`) is logged, never thrown.
   */
  async keep(scope: ThreadScope, end: ActivitySnapshotEvent, after?: string): Promise<void> {
    try {
      await withinMs(this.threads.rememberRunEnd(scope, end.messageId, end.content as RunEndContent, after), KEEP_WITHIN_MS);
    } catch (error) {
      this.config.logger.warn(`Thread ${scope.threadId}: how ${end.messageId} ended could not be kept for its history: ${errorMessage(error)}`);
    }
  }

  /** A run this process did not stream (a `/run` keeps its own end first) that was cancelled or failed. */
  runEnded(end: RunEnd): void {
    if (end.origin === 'run' || (end.outcome !== 'cancelled' && end.outcome !== 'error')) return;
    const content: RunEndContent = end.outcome === 'cancelled' ? { outcome: 'cancelled' } : { outcome: 'failed', ...failureOf(end) };
    void this.keep({ threadId: end.threadId, resourceId: end.resourceId, agentId: end.agentId }, runEndActivity(end.runId, content), end.inputId);
  }
}
