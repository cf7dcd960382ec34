// @ts-check
/**
 * The page's status lines: what an action did, said beside it. A line can describe a moment that
 * passes: "Sent: the agent is answering it." holds while that run lasts and goes when it ends
 * (or is never shown, if the run ended before the answer to the request came back); "New thread
 * created." goes when the next run starts. Other lines stay until the next one.
 */

/** Run ids that ended, the latest first few: a run can end before the request that started it is answered. */
const ended = new Set();
const ENDED_KEPT = 50;

/**
 * @typedef {{ until?: 'run-end' | 'next-run', runId?: string }} Lasting
 * `run-end`: until run `runId` ends (any run, without one); `next-run`: until a run starts.
 */

/**
 * Writes `text` in the line `where` (the page says things through page.js's `say`, which picks the line).
 *
 * @example
 * writeLine(ui.composerStatus, 'Sent: the agent is answering it.', 'info', { until: 'run-end', runId: answer.runId });
 *
 * @param {HTMLElement} where
 * @param {string} text
 * @param {import('./page-types').Tone} [tone]
 * @param {Lasting} [lasting]
 */
export function writeLine(where, text, tone = 'info', lasting = {}) {
  const over = lasting.until === 'run-end' && lasting.runId !== undefined && ended.has(lasting.runId);
  where.textContent = over ? '' : text;
  where.dataset.tone = tone;
  where.dataset.until = over ? '' : (lasting.until ?? '');
  where.dataset.runId = lasting.runId ?? '';
}

/**
 * A run started on the thread: the lines that last until then go.
 *
 * @param {HTMLElement[]} lines
 */
export function runStarted(lines) {
  for (const line of lines) if (line.dataset.until === 'next-run') writeLine(line, '');
}

/**
 * A run ended (`runId`, when the event says which): the lines about it go, and so do the lines
 * about a run whose id they never learned.
 *
 * @param {HTMLElement[]} lines
 * @param {string | undefined} runId
 */
export function runEnded(lines, runId) {
  if (runId !== undefined) {
    ended.add(runId);
    if (ended.size > ENDED_KEPT) ended.delete(ended.values().next().value);
  }
  for (const line of lines) {
    if (line.dataset.until !== 'run-end') continue;
    if (!line.dataset.runId || runId === undefined || line.dataset.runId === runId) writeLine(line, '');
  }
}
