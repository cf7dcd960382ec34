import type { Agent } from '@mastra/core/agent';
import { setTimeout as delay } from 'node:timers/promises';
import { activeThreadRunId, type SignalDecision, type ThreadTarget } from '../mastra/index.js';

/** How long to wait before sending a lost signal again: a finishing run lets go of its thread within ~15 ms. */
const LOST_SIGNAL_RETRY_MS = 5;
/** Sends at most (2 s in all): past that the run holding the lease is not finishing, and its `deliver` answer stands. */
const LOST_SIGNAL_SENDS = 400;

/** Sends a signal (again under `id`, when given) and answers Mastra's decision. */
export type SendOnce = (id?: string) => Promise<SignalDecision>;
/**
 * Takes back what Mastra may still hold of a send that looked lost (parked where no run drains
 * it), before it is sent again: a copy left there would reach a later run of the thread as well,
 * which then takes a turn with nothing new.
 */
export type TakeBack = (signalId: string) => Promise<unknown>;

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
 *
 * @example
 * const answer = await sendPastFinishingRun(agent, thread, (id) => sendMessage(agent, withId(message, id), thread), takeBack);
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
