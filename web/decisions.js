// @ts-check
// What a message, a signal or a notification did, in words a person reads, and how long that stays true.

/**
 * What the bridge answered to a message, a signal, a state (`skipped` when unchanged) or a
 * notification (its decision under `decision`).
 *
 * @typedef {{ action?: string, runId?: string, skipped?: boolean, decision?: { action?: string } } | undefined} Answer
 */

/** Mastra's decision on a message or a signal (`action`), or on a notification (`decision.action`). */
const actionOf = (/** @type {Answer} */ answer) => answer?.action ?? answer?.decision?.action;

/**
 * A decision that started or joined a run is said until that run ends.
 *
 * @param {Answer} answer
 * @returns {import('./status-lines.js').Lasting | undefined}
 */
export function lastingOf(answer) {
  const action = actionOf(answer);
  return action === 'wake' || action === 'deliver' ? { until: 'run-end', runId: answer?.runId } : undefined;
}

/**
 * What happened to a message, a signal or a notification, in words a person reads (Mastra's
 * decision: `wake`, `deliver`, `persist`, …), for the line under the composer or the panel.
 *
 * @param {Answer} answer
 * @param {'message' | 'queued' | 'state' | 'notification'} [what]
 */
export function describeDecision(answer, what = 'message') {
  if (!answer) return 'Done.';
  if (answer.skipped) return 'Unchanged since the last time: not sent again.';
  const action = actionOf(answer) ?? '';
  /** @type {Record<string, Record<string, string | undefined>>} */
  const sentences = {
    message: { wake: 'Sent: the agent is answering it.', deliver: 'Sent into the answer in progress.', persist: 'Saved: the agent reads it on its next turn.' },
    queued: {
      wake: 'Sent: nothing was running, so the agent is answering it now.',
      deliver: 'Queued: the agent answers it after the current answer.',
      persist: 'Queued: the agent reads it on its next turn.',
    },
    state: {
      wake: 'State sent: the agent is looking at it.',
      deliver: 'State sent into the answer in progress.',
      persist: 'State saved for the agent’s next turn.',
    },
    notification: {
      deliver: 'Notification delivered to the agent.',
      wake: 'Notification delivered: the agent is looking at it.',
      queue: 'Notification queued: the agent gets it after the current answer.',
      defer: 'Notification held: it is delivered later.',
      summarize: 'Notification held: the agent will get a summary of what waits.',
      persist: 'Notification stored, not sent to the agent.',
    },
  };
  /** @type {Record<string, string | undefined>} */
  const refused = { discard: 'Dropped by the agent’s rules: not delivered.', blocked: 'Not sent: blocked.' };
  return sentences[what][action] ?? refused[action] ?? 'Done.';
}
