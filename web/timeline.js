// @ts-check
// A workflow run's steps, as a timeline in the transcript, and the lines the page adds where a run
// ended without the bridge's run-end message.
import { app, MAX_NOTICES, transcript } from './page.js';
import { runEndNotice } from './transcript-items.js';

/**
 * Opens the run's step timeline, after the message it answers (a resumed run's: after the thread's last).
 *
 * @param {import('@ag-ui/core').RunStartedEvent} event
 * @param {import('./client.js').BridgeAgent} agent
 */
export function startTimeline(event, agent) {
  const after = event.input?.messages?.at(-1)?.id ?? agent.messages.at(-1)?.id;
  app.timeline = { id: `steps-${event.runId}`, after, steps: [] };
  app.notices = [...app.notices, app.timeline].slice(-MAX_NOTICES);
  transcript.schedule();
}

/**
 * A step's status on the open timeline (`running`, `done`, `waiting`, `failed`, `cancelled`).
 *
 * @param {string | undefined} name
 * @param {string} status
 */
export function setStep(name, status) {
  const timeline = app.timeline;
  if (!timeline || !name) return;
  const step = timeline.steps.find((s) => s.name === name);
  if (step) step.status = status;
  else timeline.steps.push({ name, status });
  transcript.schedule();
}

/**
 * Steps earlier runs left waiting: answered by this run, or cancelled by its new input.
 *
 * @param {'answered' | 'cancelled'} status
 */
export function settleWaitingSteps(status) {
  for (const notice of app.notices) for (const step of notice.steps ?? []) if (step.status === 'waiting') step.status = status;
  transcript.schedule();
}

/**
 * The run ended: a step still open is cut (`cancelled`, `failed`); one that suspended waits.
 *
 * @param {'cancelled' | 'failed'} [cut]
 */
export function endTimeline(cut) {
  const timeline = app.timeline;
  if (!timeline) return;
  for (const resume of app.resumes.values()) setStep(resume.metadata?.stepId, 'waiting');
  if (cut) for (const step of timeline.steps) if (step.status === 'running') step.status = cut;
  transcript.schedule();
  app.timeline = undefined;
}

/**
 * A run that ended cancelled or failed without the bridge's run-end message (a workflow's run, or
 * one whose process was lost): the page says so itself, in this tab only.
 *
 * @param {import('./page-types').RunEnd} end
 */
export function noticeUnlessShown(end) {
  if (app.runEndShown) return;
  const { tone, text } = runEndNotice(end);
  addNotice(tone, text);
}

/**
 * @param {import('./page-types').Tone} tone
 * @param {string} text
 */
function addNotice(tone, text) {
  app.notices = [...app.notices, { id: `notice-${Date.now()}-${app.notices.length}`, after: app.agent?.messages.at(-1)?.id, tone, text }].slice(-MAX_NOTICES);
  transcript.schedule();
}
