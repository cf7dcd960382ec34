import type { Message } from '@ag-ui/core';
import { injectable } from 'inversify';
import type { MessagePosition } from '../translate/ids.js';

/** What a `/run` tells the followers of its thread about itself. */
export interface RunAnnouncement {
  /** The run's new input messages: Mastra's thread stream never carries them. */
  messages: Message[];
  /** The stored assistant message the run's answer is appended to, if Mastra appends it to one. */
  appendsTo?: MessagePosition;
}

/** How long an announcement outlives its run: a follower's subscription may read the run's chunks later than the run itself. */
const KEEP_AFTER_RUN_MS = 30_000;

/**
 * The announcements of the runs in progress, by Mastra run id: `RunService` announces a run before
 * it starts it; a thread feed reads the announcement when the run's first chunk reaches it, so that
 * its followers see the user message the run answers (as `RUN_STARTED.input`) and the same message
 * ids as the run's own client.
 *
 * @example
 * const done = announcements.announce(runId, { messages: [userMessage] });
 * try { await streamTheRun(); } finally { done(); }
 * announcements.get(runId); // { messages: [userMessage] } until 30 s after done()
 */
@injectable()
export class RunAnnouncements {
  private readonly runs = new Map<string, RunAnnouncement>();

  /** Announces a run; call the returned function when it ends. */
  announce(runId: string, announcement: RunAnnouncement): () => void {
    this.runs.set(runId, announcement);
    return () => {
      const timer = setTimeout(() => {
        if (this.runs.get(runId) === announcement) this.runs.delete(runId);
      }, KEEP_AFTER_RUN_MS);
      timer.unref();
    };
  }

  get(runId: string): RunAnnouncement | undefined {
    return this.runs.get(runId);
  }
}
