import { injectable } from 'inversify';
import type { RunAnnouncement } from '../translate/thread-translator.js';

export type { RunAnnouncement };

/**
 * What each `/run` tells the followers of its thread about itself, by Mastra run id: `RunService`
 * announces a run before it starts it; a thread feed reads the announcement when the run's first
 * chunk reaches it, so that its followers see the messages the run answers (`RUN_STARTED.input`)
 * and the same message ids as the run's own client. One binding in the container; the in-process
 * one is `InProcessRunAnnouncements`.
 *
 * @example
 * await announcements.announce(runId, { messages: [userMessage] });
 * try { await streamTheRun(); } finally { announcements.ended(runId); }
 * await announcements.get(runId); // { messages: [userMessage] }, for a while after the run too
 */
export interface RunAnnouncements {
  announce(runId: string, announcement: RunAnnouncement): Promise<void>;
  /** The run is over: its announcement is kept a while longer, for followers that read late. */
  ended(runId: string): void;
  get(runId: string): Promise<RunAnnouncement | undefined>;
}

/** How long an announcement outlives its run: a follower's subscription may read the run's chunks later than the run itself. */
const KEEP_AFTER_RUN_MS = 30_000;

/** Announcements held in this process. */
@injectable()
export class InProcessRunAnnouncements implements RunAnnouncements {
  private readonly runs = new Map<string, RunAnnouncement>();

  async announce(runId: string, announcement: RunAnnouncement): Promise<void> {
    this.runs.set(runId, announcement);
  }

  ended(runId: string): void {
    const announcement = this.runs.get(runId);
    const timer = setTimeout(() => {
      if (this.runs.get(runId) === announcement) this.runs.delete(runId);
    }, KEEP_AFTER_RUN_MS);
    timer.unref();
  }

  async get(runId: string): Promise<RunAnnouncement | undefined> {
    return this.runs.get(runId);
  }
}
