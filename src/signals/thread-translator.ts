import type { Event } from '@ag-ui/core';
import type { MastraChunk } from '../translate/chunks.js';
import type { RunTranslator } from '../translate/run-translator.js';
import type { StreamTranslator } from '../translate/stream-translator.js';

/** The run a chunk belongs to: top-level `runId`, or the payload's (task-manager chunks carry it there). */
function runIdOf(chunk: MastraChunk): string | undefined {
  if ('runId' in chunk && typeof chunk.runId === 'string' && chunk.runId) return chunk.runId;
  const payload = 'payload' in chunk ? (chunk.payload as { runId?: unknown } | undefined) : undefined;
  return typeof payload?.runId === 'string' ? payload.runId : undefined;
}

const PAUSES = new Set(['tool-call-approval', 'tool-call-suspended']);

/**
 * Splits a thread's endless chunk stream into AG-UI runs: one `RUN_STARTED … RUN_FINISHED|RUN_ERROR`
 * bracket per Mastra run, each translated by a fresh `RunTranslator`. A run that stops for approval
 * ends its bracket with the interrupt outcome; when it resumes (same run id, no `start`) it gets a
 * fresh bracket. Chunks that arrive outside any run (a background task finishing later) get a
 * bracket of their own, so nothing is ever sent outside one.
 *
 * @example
 * const t = new ThreadTranslator('thread-1', translators);
 * for await (const chunk of subscription.stream) publish(t.push(chunk));
 */
export class ThreadTranslator {
  private run?: RunTranslator;
  private runId?: string;

  constructor(
    private readonly threadId: string,
    private readonly translators: StreamTranslator,
  ) {}

  /** Whether a bracket is open. */
  get open(): boolean {
    return this.run !== undefined;
  }

  push(chunk: MastraChunk): Event[] {
    const runId = runIdOf(chunk) ?? this.runId ?? 'thread-run';
    const out: Event[] = [];
    if (this.run && runId !== this.runId) out.push(...this.closeRun());
    if (!this.run) out.push(...this.openRun(runId));
    const run = this.run as RunTranslator;
    out.push(...run.push(chunk));
    if (PAUSES.has(chunk.type)) out.push(...run.end());
    if (run.finished) this.run = undefined;
    else if (chunk.type.startsWith('background-task-') && !('runId' in chunk && chunk.runId)) {
      // A task-manager chunk opened a bracket of its own: close it again at once.
      out.push(...this.closeRun());
    }
    return out;
  }

  /** Ends the open bracket, if any (the subscription is going away). */
  close(): Event[] {
    return this.closeRun();
  }

  private openRun(runId: string): Event[] {
    this.runId = runId;
    this.run = this.translators.begin({ threadId: this.threadId, runId });
    return this.run.start();
  }

  private closeRun(): Event[] {
    const events = this.run?.end() ?? [];
    this.run = undefined;
    return events;
  }
}
