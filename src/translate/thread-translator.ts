import { randomUUID } from 'node:crypto';
import type { Event, Message } from '@ag-ui/core';
import { isPause, isSignalEcho, payloadRunId, topLevelRunId, type MastraChunk } from './chunks.js';
import { clientRunIdOf, type MessagePosition } from './ids.js';
import { RunTranslator } from './run-translator.js';
import type { CutStep } from './retraction.js';
import type { WorkflowActivityContent } from './workflow-activity.js';

/** What a `/run` tells the followers of its thread about itself (Mastra's thread stream carries neither). */
export interface RunAnnouncement {
  /** The run's new input messages, for `RUN_STARTED.input`. */
  messages: Message[];
  /** The stored assistant message the run's answer is appended to, if Mastra appends it to one. */
  appendsTo?: MessagePosition;
}

export interface ThreadTranslatorOptions {
  /** What a `/run` announced of itself when it started, by Mastra run id. */
  announced?: (runId: string) => RunAnnouncement | undefined;
  /** The run id of a bracket for chunks that name no run at all. Default: `background-<uuid>`. */
  newRunId?: () => string;
  /** Whether an abort cut run `runId`: its bracket ends cancelled even when Mastra ends it with a plain `finish`. */
  wasCut?: (runId: string) => boolean;
  /**
   * What the thread's workflow calls' activities showed, by tool call id: a resumed call's activity
   * goes on from there (`WorkflowActivities`). The translator adds what each of its runs showed;
   * the caller adds what was stored before it started.
   */
  workflowActivities?: Record<string, WorkflowActivityContent>;
}

/**
 * Splits a thread's endless chunk stream into AG-UI runs: one `RUN_STARTED … RUN_FINISHED|RUN_ERROR`
 * bracket per Mastra run, each translated by a fresh `RunTranslator`. A run that stops for approval
 * ends its bracket with the interrupt outcome; when it resumes (same run id, no `start`) it gets a
 * fresh bracket. Chunks outside any run (a background task finishing later) get a bracket of their
 * own, so nothing is ever sent outside one. No state is shared with the outside: what a `/run`
 * announced comes in through `options.announced`.
 */
export class ThreadTranslator {
  private run?: RunTranslator;
  private runId?: string;
  /** The run whose bracket ended last, and the calls it paused on (empty unless it paused). */
  private ended?: { runId: string; paused: Set<string> };
  /**
   * Where the thread's latest answer stands, until a message follows it: a run that starts with no
   * message of its own (Mastra going on after a background task) is stored as part of it.
   */
  private lastAnswer?: MessagePosition;
  /** Calls this stream saw ask for an approval: their result, in a later bracket, says how they were answered. */
  private readonly awaitingApproval = new Set<string>();
  private retracting?: string;
  private cut?: { runId: string; step?: CutStep };

  private readonly announced: (runId: string) => RunAnnouncement | undefined;
  private readonly newRunId: () => string;
  private readonly wasCut: (runId: string) => boolean;
  private readonly workflowActivities: Record<string, WorkflowActivityContent>;

  constructor(
    private readonly threadId: string,
    options: ThreadTranslatorOptions = {},
  ) {
    this.announced = options.announced ?? (() => undefined);
    this.newRunId = options.newRunId ?? (() => `background-${randomUUID()}`);
    this.wasCut = options.wasCut ?? (() => false);
    this.workflowActivities = options.workflowActivities ?? {};
  }

  get open(): boolean {
    return this.run !== undefined;
  }

  /** The run the latest `push` ended, if it showed what Mastra did not keep (`beforeTerminal`). */
  get endedRetracting(): string | undefined {
    return this.retracting;
  }

  /**
   * The run the latest `push` ended, if an abort cut it, and its `RunTranslator.cutStep`: once the
   * run winds down, the caller sends the stored thread before its end, as `/run` does.
   */
  get endedCut(): { runId: string; step?: CutStep } | undefined {
    return this.cut;
  }

  isOpen(runId: string): boolean {
    return this.run !== undefined && this.runId === runId;
  }

  push(chunk: MastraChunk): Event[] {
    this.retracting = undefined;
    this.cut = undefined;
    const runId = topLevelRunId(chunk);
    // Task-manager chunks name no run: they belong to the open bracket, or get one of their own.
    if (!runId) return this.open ? this.forward(chunk) : this.alone(chunk, payloadRunId(chunk) ?? this.newRunId());
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

  /**
   * Ends the open bracket, if any, as cancelled: its run was cut (this process is shutting down)
   * and its own end has not come. What trails it later (Mastra's `abort`) opens nothing.
   */
  cancel(): Event[] {
    return this.closeRun(true);
  }

  private forward(chunk: MastraChunk): Event[] {
    const run = this.run as RunTranslator;
    if (isSignalEcho(chunk)) this.lastAnswer = undefined;
    const out = run.push(chunk);
    const paused = isPause(chunk);
    if (chunk.type === 'tool-call-approval') this.awaitingApproval.add(chunk.payload.toolCallId);
    if (paused || run.finished) this.lastAnswer = run.position() ?? this.lastAnswer;
    if (paused || run.finished) Object.assign(this.workflowActivities, run.workflowActivities);
    if (paused) {
      out.push(...run.end());
      this.ended = { runId: this.runId as string, paused: new Set([chunk.payload.toolCallId]) };
      this.run = undefined;
    } else if (run.finished) {
      this.retracting = run.retracts ? this.runId : undefined;
      const cutBetweenSteps = chunk.type !== 'abort' && this.wasCut(this.runId as string) && run.endAsCancelled(out);
      if (chunk.type === 'abort' || cutBetweenSteps) this.cut = { runId: this.runId as string, step: run.cutStep };
      this.ended = { runId: this.runId as string, paused: new Set() };
      this.run = undefined;
    }
    return out;
  }

  private alone(chunk: MastraChunk, runId: string): Event[] {
    return [...this.openRun(runId), ...this.forward(chunk), ...this.closeRun()];
  }

  private openRun(runId: string): Event[] {
    // The same run again: resuming after approval (the client already has the paused call, its
    // arguments and the messages the run answers), or Mastra going on after a background task.
    const again = this.ended?.runId === runId;
    const paused = again ? (this.ended?.paused ?? []) : [];
    const announcement = again ? undefined : this.announced(runId);
    this.runId = runId;
    this.run = new RunTranslator({
      threadId: this.threadId,
      runId: clientRunIdOf(this.threadId, runId),
      mastraRunId: runId,
      resumedToolCalls: paused,
      approvalToolCalls: this.awaitingApproval,
      // A result for a call this bracket never streamed answers a call from before it (the paused
      // bracket, or the client's history after a restart): the client has its arguments already.
      unseenCallsAreResumed: true,
      appendsTo: again && this.ended?.paused.size ? undefined : announcement ? announcement.appendsTo : this.lastAnswer,
      inputMessages: announcement?.messages,
      workflowActivities: this.workflowActivities,
    });
    return this.run.start();
  }

  private closeRun(cancelled = false): Event[] {
    this.lastAnswer = this.run?.position() ?? this.lastAnswer;
    const events = (cancelled ? this.run?.cancel() : this.run?.end()) ?? [];
    if (this.run) Object.assign(this.workflowActivities, this.run.workflowActivities);
    if (this.run) this.ended = { runId: this.runId as string, paused: new Set() };
    this.run = undefined;
    return events;
  }
}
