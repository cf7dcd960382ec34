import type { Agent } from '@mastra/core/agent';
import { setTimeout as delay } from 'node:timers/promises';
import { inject, injectable } from 'inversify';
import { RunEndings } from './run-endings.js';
import { answerCall, type AnsweredCall, type CallAnswer } from './answer-call.js';
import {
  abortThreadRun,
  activeThreadRunId,
  cancelQueuedMessages,
  queueMessage,
  queuedMessageCount,
  sendNow,
  type AgentMessage,
  type Outgoing,
  type OnWake,
  type Routing,
  type SignalDecision,
  type ThreadTarget,
} from '../mastra/index.js';

/**
 * What Mastra 1.71 only does for runs of its own process: abort the thread's run, send a message
 * or signal into it (past its end, if it is finishing), queue a message behind it, cancel what is
 * queued, answer a call a stopped run waits on. One binding in the container: in one process these are
 * Mastra's own methods (`InProcessThreadControl`); with several processes on one Redis, the
 * request goes to the process whose run holds the thread (`RedisThreadControl`).
 *
 * @example
 * const { aborted } = await control.abort(agent, { resourceId, threadId });
 */
export interface ThreadControl {
  /** Starts listening for the other processes' requests, where there are any. */
  start?(): Promise<void>;
  /**
   * Stops the run streaming on the thread, wherever it runs; answers whether there was one. With
   * `untilEnded`, answers once that run has wound down in its process (its partial answer stored),
   * within a bound: Mastra gives the thread's lease up at the abort, before that.
   */
  abort(agent: Agent, thread: ThreadTarget, options?: AbortOptions): Promise<{ aborted: boolean }>;
  /**
   * Stops the run the bridge streams itself on the thread (a workflow's `/run`: Mastra does not run
   * it as the thread's run), in whichever process streams it; answers whether there was one.
   */
  stopStreamed(thread: ThreadTarget, reason: string): Promise<boolean>;
  /**
   * Sends a message or signal now into the thread's run, wherever it runs (past that run's end,
   * if it is finishing: `sendPastFinishingRun`, where the run is), or wakes the idle thread with
   * it; `onWake` hears of a run it woke in this process.
   */
  send(agent: Agent, thread: ThreadTarget, outgoing: Outgoing, routing: Routing, onWake?: OnWake): Promise<SignalDecision>;
  /**
   * Queues a message behind the thread's run (wherever it runs), or wakes the idle thread with it;
   * `onWake` hears of a run it woke in this process (so that its end is known, as a sent message's).
   */
  queue(agent: Agent, thread: ThreadTarget, message: AgentMessage, routing: Routing, onWake?: OnWake): Promise<SignalDecision>;
  /** Cancels queued messages of the thread, wherever they wait; answers the ids cancelled. */
  cancelQueued(agent: Agent, thread: ThreadTarget, signalIds: string[]): Promise<string[]>;
  /**
   * Answers a call a stopped run of the thread waits on, in the process where that run stopped:
   * its Mastra keeps the run as the thread's, and would go on sending the thread's input into it
   * if another process resumed it. Not once-only: callers wrap it in `once`.
   */
  answerCall(agent: Agent, thread: ThreadTarget, answer: CallAnswer): Promise<AnsweredCall>;
  /**
   * Runs `task` (the approval that resumes a tool call) only for the first caller, in any
   * process; later callers get `undefined`. A task that fails gives the call back.
   */
  once<T>(toolCallId: string, task: () => Promise<T>): Promise<T | undefined>;
  /** Whether a call was taken by `once` (it is being answered, or was), in any process. */
  taken(toolCallId: string): Promise<boolean>;
  /**
   * A call taken by `once` asks again: a suspended tool (a workflow run as a tool) that, resumed,
   * suspends at its next step. Its answer is forgotten, so that the new question is answered once
   * in turn, in any process.
   */
  asksAgain(toolCallId: string): Promise<void>;
}

export interface AbortOptions {
  untilEnded?: boolean;
}

/**
 * How long an abort waits, at most, for the aborted run to wind down: a model call stops in
 * milliseconds, saving the partial answer takes a storage write, and a loaded machine stretches both.
 */
export const WIND_DOWN_MS = 5000;
const WIND_DOWN_POLL_MS = 5;

/** How long an answered approval is remembered: far longer than a retry, shorter than forever. */
export const APPROVAL_MEMORY_MS = 60 * 60 * 1000;

/** Mastra's own methods: everything the thread has is in this process. */
@injectable()
export class InProcessThreadControl implements ThreadControl {
  private readonly answered = new Map<string, NodeJS.Timeout>();

  constructor(@inject(RunEndings) private readonly endings: RunEndings) {}

  async abort(agent: Agent, thread: ThreadTarget, options: AbortOptions = {}): Promise<{ aborted: boolean }> {
    const runId = activeThreadRunId(agent, thread);
    const aborted = abortThreadRun(agent, thread);
    if (aborted && runId !== undefined) this.endings.markCut(runId);
    if (!aborted || !options.untilEnded || runId === undefined) return { aborted };
    const deadline = Date.now() + WIND_DOWN_MS;
    // Mastra letting go of the run is all there is to wait for on a run `RunEndings` does not know
    // (one recovery or a queued message started); it comes just before the partial answer is stored.
    while (Date.now() < deadline && activeThreadRunId(agent, thread) === runId) await delay(WIND_DOWN_POLL_MS);
    await this.endings.ended(runId, deadline);
    // Messages queued behind the cut run are Mastra's to start next, when it hands them the thread:
    // a new run that took the thread first would leave them parked where nothing drains them.
    while (Date.now() < deadline && queuedMessageCount(agent, thread) > 0) await delay(WIND_DOWN_POLL_MS);
    return { aborted };
  }

  async stopStreamed(thread: ThreadTarget, reason: string): Promise<boolean> {
    return this.endings.stopStreamed(thread, reason);
  }

  /** Mastra's own send: the caller deals with a run that is finishing (`SignalRouter.route`). */
  send(agent: Agent, thread: ThreadTarget, outgoing: Outgoing, routing: Routing, onWake?: OnWake): Promise<SignalDecision> {
    return sendNow(agent, outgoing, { ...routing, ...thread }, onWake);
  }

  queue(agent: Agent, thread: ThreadTarget, message: AgentMessage, routing: Routing, onWake?: OnWake): Promise<SignalDecision> {
    return queueMessage(agent, message, { ...routing, ...thread }, onWake);
  }

  async cancelQueued(agent: Agent, thread: ThreadTarget, signalIds: string[]): Promise<string[]> {
    return cancelQueuedMessages(agent, thread, signalIds);
  }

  answerCall(agent: Agent, thread: ThreadTarget, answer: CallAnswer): Promise<AnsweredCall> {
    return answerCall(agent, thread, answer);
  }

  async taken(toolCallId: string): Promise<boolean> {
    return this.answered.has(toolCallId);
  }

  async asksAgain(toolCallId: string): Promise<void> {
    clearTimeout(this.answered.get(toolCallId));
    this.answered.delete(toolCallId);
  }

  async once<T>(toolCallId: string, task: () => Promise<T>): Promise<T | undefined> {
    if (this.answered.has(toolCallId)) return undefined;
    const timer = setTimeout(() => this.answered.delete(toolCallId), APPROVAL_MEMORY_MS);
    timer.unref();
    this.answered.set(toolCallId, timer);
    try {
      return await task();
    } catch (error) {
      clearTimeout(timer);
      this.answered.delete(toolCallId);
      throw error;
    }
  }
}
