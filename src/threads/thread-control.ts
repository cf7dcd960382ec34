import type { Agent } from '@mastra/core/agent';
import { setTimeout as delay } from 'node:timers/promises';
import { inject, injectable } from 'inversify';
import { RunEndings } from './run-endings.js';
import { answerCall, type AnsweredCall, type CallAnswer } from './answer-call.js';
import {
  abortThreadRun,
  activeThreadRunId,
  cancelQueuedMessages,
  leasesInProcess,
  outgoingWithId,
  queueMessage,
  queuedMessageCount,
  sendMessage,
  sendNow,
  withId,
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
    await this.endings.ended(thread.threadId, runId, deadline);
    // Messages queued behind the cut run are Mastra's to start next, when it hands them the thread:
    // a new run that took the thread first would leave them parked where nothing drains them.
    while (Date.now() < deadline && queuedMessageCount(agent, thread) > 0) await delay(WIND_DOWN_POLL_MS);
    return { aborted };
  }

  async stopStreamed(thread: ThreadTarget, reason: string): Promise<boolean> {
    return this.endings.stopStreamed(thread, reason);
  }

  /** Mastra's own send, past a run of this process that is finishing (`sendPastFinishingRun`). */
  send(agent: Agent, thread: ThreadTarget, outgoing: Outgoing, routing: Routing, onWake?: OnWake): Promise<SignalDecision> {
    return this.pastFinishingRun(agent, thread, (id) => sendNow(agent, outgoingWithId(outgoing, id), { ...routing, ...thread }, onWake));
  }

  /**
   * Mastra's own queue. Mastra gives a queued message a new id each time it is queued: one that met
   * a finishing run is taken back (if Mastra still holds it) and sent again as a message under the
   * id it got, which Mastra keeps, so that it is stored once whichever copy runs.
   */
  queue(agent: Agent, thread: ThreadTarget, message: AgentMessage, routing: Routing, onWake?: OnWake): Promise<SignalDecision> {
    const target = { ...routing, ...thread };
    return this.pastFinishingRun(agent, thread, (id) =>
      id ? sendMessage(agent, withId(message, id), target, onWake) : queueMessage(agent, message, target, onWake),
    );
  }

  /**
   * Where every run of the thread is this process's (Mastra's in-process leases), a `deliver` to an
   * idle thread met a finishing run: sent again. With leases shared between processes it may be a
   * real hand-off to another process's run: passed on as Mastra gave it.
   */
  private pastFinishingRun(agent: Agent, thread: ThreadTarget, send: SendOnce): Promise<SignalDecision> {
    if (!leasesInProcess(agent)) return send();
    return sendPastFinishingRun(agent, thread, send, (id) => this.cancelQueued(agent, thread, [id]));
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

/** How long to wait before sending a lost signal again: a finishing run lets go of its thread within ~15 ms. */
const LOST_SIGNAL_RETRY_MS = 5;
/** Sends at most (2 s in all): past that the run holding the lease is not finishing, and its `deliver` answer stands. */
const LOST_SIGNAL_SENDS = 400;

/** Sends a signal (again under `id`, when given) and answers Mastra's decision. */
type SendOnce = (id?: string) => Promise<SignalDecision>;
/**
 * Takes back what Mastra may still hold of a send that looked lost (parked where no run drains
 * it), before it is sent again: a copy left there would reach a later run of the thread as well,
 * which then takes a turn with nothing new.
 */
type TakeBack = (signalId: string) => Promise<unknown>;

/**
 * Sends through `send` past a run of this process that is finishing. A thread that was idle just
 * before a synchronous decision of `deliver` means the signal met a run that is finishing, which
 * Mastra queues nowhere ("A run that is finishing" in docs/signals.md): it is sent again, with the
 * same id, until it wakes a run; each time, what Mastra still holds of it is taken back first
 * (`takeBack`). Mastra may hold nothing of it: a send that met a run as it ended is dropped.
 * Only for a thread whose run can only be of this process (Mastra's in-process leases, or a lease
 * this process holds): elsewhere, `deliver` to an idle-looking thread is a real hand-off.
 *
 * Why a loop: Mastra 1.71 gives no way to learn that the signal was parked (its `sendSignal`
 * puts it on the thread's idle queue with no run left to drain it, and answers `deliver`), nor
 * when the finishing run lets go: `subscribeThreadEvents` reports queue counts only. The window
 * is measured at about 15 ms, so a send every 5 ms takes a few tries;
 * `test/signals-finishing-run.test.ts` sweeps it.
 */
export async function sendPastFinishingRun(agent: Agent, thread: ThreadTarget, send: SendOnce, takeBack: TakeBack): Promise<SignalDecision> {
  let id: string | undefined;
  for (let attempt = 1; ; attempt++) {
    const idle = activeThreadRunId(agent, thread) === undefined;
    const answer = await send(id);
    if (!(idle && answer.action === 'deliver') || attempt === LOST_SIGNAL_SENDS) return answer;
    await takeBack(answer.signalId);
    id = answer.signalId;
    await delay(LOST_SIGNAL_RETRY_MS);
  }
}
