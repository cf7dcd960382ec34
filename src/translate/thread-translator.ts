import type { Event } from '@ag-ui/core';
import type { RunAnnouncement } from '../runs/run-announcements.js';
import { isSignalEcho, type MastraChunk } from './chunks.js';
import type { MessagePosition } from './ids.js';
import type { RunTranslator } from './run-translator.js';
import type { StreamTranslator } from './stream-translator.js';

/** The run a chunk says it belongs to. Task-manager chunks carry none at the top level. */
function topLevelRunId(chunk: MastraChunk): string | undefined {
  return 'runId' in chunk && typeof chunk.runId === 'string' && chunk.runId ? chunk.runId : undefined;
}

function payloadRunId(chunk: MastraChunk): string | undefined {
  const payload = 'payload' in chunk ? (chunk.payload as { runId?: unknown } | undefined) : undefined;
  return typeof payload?.runId === 'string' ? payload.runId : undefined;
}

const PAUSES = new Set(['tool-call-approval', 'tool-call-suspended']);
const RESULTS = new Set(['tool-result', 'tool-error', 'tool-output-denied']);

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
  /** The run whose bracket ended last, and the calls it paused on (empty unless it paused). */
  private ended?: { runId: string; paused: Set<string> };
  /** Calls of the open bracket the client already holds with their arguments (shared with its translator). */
  private resumed = new Set<string>();
  /**
   * Where the thread's latest answer stands, until a message follows it: a run that starts with no
   * message of its own (Mastra going on after a background task) is stored as part of it.
   */
  private lastAnswer?: MessagePosition;

  /**
   * @param announced what a `/run` said of itself when it started (its input messages, the stored
   *   message it appends to), by Mastra run id
   */
  constructor(
    private readonly threadId: string,
    private readonly translators: StreamTranslator,
    private readonly announced: (runId: string) => RunAnnouncement | undefined = () => undefined,
  ) {}

  /** Whether a bracket is open. */
  get open(): boolean {
    return this.run !== undefined;
  }

  push(chunk: MastraChunk): Event[] {
    const runId = topLevelRunId(chunk);
    // Task-manager chunks name no run: they belong to the open bracket, or get one of their own.
    if (!runId) return this.open ? this.forward(chunk) : this.alone(chunk, payloadRunId(chunk) ?? 'background-task');
    const out: Event[] = [];
    if (this.run && (runId !== this.runId || chunk.type === 'start')) {
      if (runId === this.runId) return this.forward(chunk); // a `start` inside its own run: nothing new
      out.push(...this.closeRun());
    }
    if (!this.run) {
      // What trails a failed or aborted run (`finish` after `error`) is not a new run.
      if (this.ended?.runId === runId && this.ended.paused.size === 0 && chunk.type !== 'start') return out;
      out.push(...this.openRun(runId));
    }
    out.push(...this.forward(chunk));
    return out;
  }

  /** Ends the open bracket, if any (the subscription is going away). */
  close(): Event[] {
    return this.closeRun();
  }

  private forward(chunk: MastraChunk): Event[] {
    const run = this.run as RunTranslator;
    // A result for a call this bracket never streamed answers a call from before it (the paused
    // bracket, or the client's history after a restart): the client has its arguments already.
    // (Marking a call the bracket did stream changes nothing: only unseen calls are re-opened.)
    if (RESULTS.has(chunk.type)) this.resumed.add((chunk as { payload: { toolCallId: string } }).payload.toolCallId);
    if (isSignalEcho(chunk)) this.lastAnswer = undefined;
    const out = run.push(chunk);
    if (PAUSES.has(chunk.type) || run.finished) this.lastAnswer = run.position() ?? this.lastAnswer;
    if (PAUSES.has(chunk.type)) {
      out.push(...run.end());
      this.ended = { runId: this.runId as string, paused: new Set([(chunk as { payload: { toolCallId: string } }).payload.toolCallId]) };
      this.run = undefined;
    } else if (run.finished) {
      this.ended = { runId: this.runId as string, paused: new Set() };
      this.run = undefined;
    }
    return out;
  }

  /** A bracket around one chunk that arrived while no run was open. */
  private alone(chunk: MastraChunk, runId: string): Event[] {
    return [...this.openRun(runId), ...this.forward(chunk), ...this.closeRun()];
  }

  private openRun(runId: string): Event[] {
    // The same run again: resuming after approval (the client already has the paused call, its
    // arguments and the messages the run answers), or Mastra going on after a background task.
    const again = this.ended?.runId === runId;
    this.resumed = new Set(again ? this.ended?.paused : []);
    const announcement = again ? undefined : this.announced(runId);
    this.runId = runId;
    this.run = this.translators.begin({
      threadId: this.threadId,
      runId,
      resumedToolCalls: this.resumed,
      appendsTo: this.resumed.size > 0 ? undefined : announcement ? announcement.appendsTo : this.lastAnswer,
      inputMessages: announcement?.messages,
    });
    return this.run.start();
  }

  private closeRun(): Event[] {
    this.lastAnswer = this.run?.position() ?? this.lastAnswer;
    const events = this.run?.end() ?? [];
    if (this.run) this.ended = { runId: this.runId as string, paused: new Set() };
    this.run = undefined;
    return events;
  }
}
