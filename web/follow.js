// @ts-check
// Following the open thread: a `BridgeAgent` on its events stream (resumed from what this tab kept,
// else from a snapshot of its history), and what the page does with each event beyond what
// `@ag-ui/client`'s reducer folds into `agent.messages`.
import { BridgeAgent } from './client.js';
import { addApprovals, renderApprovals } from './cards.js';
import { app, baseUrl, describeError, isWorkflow, MAX_LOG, runLines, say, store, transcript, ui, authHeaders } from './page.js';
import { runEnded, runStarted } from './status-lines.js';
import { endTimeline, noticeUnlessShown, settleWaitingSteps, setStep, startTimeline } from './timeline.js';

/** @typedef {import('@ag-ui/client').AgentSubscriber} AgentSubscriber */

/** What this tab keeps of a thread at a run boundary (`checkpoint`), to resume after a reload. */
const savedKey = (/** @type {string} */ threadId) => `state:${app.resourceId}:${app.target?.id ?? ''}:${threadId}`;

/**
 * Follows a thread: from the copy this tab kept (resuming after its last id, so nothing arrives
 * twice), else from a snapshot of its history. `onRunEnd`: told when a run on it ends.
 *
 * @param {string} threadId
 * @param {() => void} onRunEnd
 */
export function follow(threadId, onRunEnd) {
  const agent = new BridgeAgent({
    baseUrl,
    threadId,
    resourceId: app.resourceId,
    headers: authHeaders(),
    // `?lastEventId=` rather than the header: a copy of this page served from another origin
    // resumes without a CORS preflight (docs/client.md, CORS).
    connect: { lastEventIdIn: 'query' },
    ...(app.target && { agentId: app.target.id }),
    onConnectionChange: (status) => agent === app.agent && showConnection(status),
  });
  const saved = store.get(savedKey(threadId));
  if (Array.isArray(saved?.messages)) {
    agent.setMessages(saved.messages);
    agent.setState(saved.state ?? {});
    agent.lastEventId = saved.lastEventId;
  }
  showState(agent.state);
  app.agent = agent;
  app.notices = saved?.notices ?? [];
  app.resumes = new Map((saved?.resumes ?? []).map((/** @type {import('./page-types').Resume} */ r) => [r.id, r]));
  app.timeline = undefined;
  app.log = [];
  app.streaming.clear();
  app.approvals.clear();
  setRunning(false);
  renderApprovals();
  agent.connectAgent({}, follower(agent, onRunEnd)).catch((error) => {
    if (agent === app.agent) say(`The thread stream stopped: ${describeError(error)}`, 'error');
  });
  return agent;
}

/**
 * What the page does with the thread's events beyond what the reducer folds into `agent.messages`.
 *
 * @param {BridgeAgent} agent
 * @param {() => void} onRunEnd
 * @returns {AgentSubscriber}
 */
function follower(agent, onRunEnd) {
  /**
   * Events still in the pipeline of a thread the page has left are not this page's any more.
   *
   * @template P
   * @param {(params: P) => void} handler
   * @returns {(params: P) => void}
   */
  const mine = (handler) => (params) => void (agent === app.agent && handler(params));
  const streaming = (/** @type {string} */ id, /** @type {boolean} */ on) => {
    if (on) app.streaming.add(id);
    else app.streaming.delete(id);
    transcript.schedule();
  };
  return {
    onEvent: mine(({ event }) => logEvent(agent.lastEventId, event.type)),
    onRunStartedEvent: mine(({ event }) => {
      if (isSnapshotRun(event)) return;
      app.runId = event.runId;
      runStarted(runLines);
      setRunning(true);
      app.runEndShown = false;
      // A new run answers whatever step was waiting (a resume: no new message), or supersedes it.
      if (app.resumes.size > 0) {
        app.resumes.clear();
        renderApprovals();
      }
      settleWaitingSteps(event.input?.messages?.length ? 'cancelled' : 'answered');
      if (isWorkflow()) startTimeline(event, agent);
    }),
    onStepStartedEvent: mine(({ event }) => setStep(event.stepName, 'running')),
    onStepFinishedEvent: mine(({ event }) => setStep(event.stepName, 'done')),
    onActivitySnapshotEvent: mine(({ event }) => {
      if (event.activityType === 'run-end') app.runEndShown = true;
    }),
    onRunFinishedEvent: mine((finished) => {
      const { event, outcome } = finished;
      if (!isSnapshotRun(event)) {
        endRun(event.runId);
        // A schedule's fire ends as a run: its last fire shows in the panel.
        onRunEnd();
      }
      // Read on `finished` itself: only there does the interrupt outcome narrow it to one with `interrupts`.
      if (finished.outcome === 'interrupt') addApprovals(finished.interrupts);
      if (outcome === 'cancelled') noticeUnlessShown({ outcome });
      endTimeline(outcome === 'cancelled' ? 'cancelled' : undefined);
      checkpoint(agent);
    }),
    onRunErrorEvent: mine(({ event }) => {
      endRun(app.runId);
      endTimeline('failed');
      noticeUnlessShown({ outcome: 'failed', code: event.code, message: event.message });
      checkpoint(agent);
    }),
    onTextMessageStartEvent: mine(({ event }) => streaming(event.messageId, true)),
    onTextMessageEndEvent: mine(({ event }) => streaming(event.messageId, false)),
    onReasoningMessageStartEvent: mine(({ event }) => streaming(event.messageId, true)),
    onReasoningMessageEndEvent: mine(({ event }) => streaming(event.messageId, false)),
    onToolCallStartEvent: mine(({ event }) => streaming(event.toolCallId, true)),
    onToolCallEndEvent: mine(({ event }) => streaming(event.toolCallId, false)),
    // The call's result closes its approval card; how it was answered stays on the tool card.
    onToolCallResultEvent: mine(({ event }) => {
      const approval = app.approvals.get(event.toolCallId);
      if (!approval) return;
      approval.resulted = true;
      renderApprovals();
    }),
    onMessagesChanged: mine(() => transcript.schedule()),
    // STATE_SNAPSHOT and STATE_DELTA, applied by the reducer.
    onStateChanged: mine(({ state }) => showState(state)),
  };
}

/**
 * The agent's state (its working memory), as the thread's state events built it.
 *
 * @param {unknown} state
 */
function showState(state) {
  ui.agentState.textContent = JSON.stringify(state ?? {}, null, 2);
}

/** The history run a stream opens with (`snapshot=1`, or an id the server could not replay): no work is running. */
const isSnapshotRun = (/** @type {{ runId: string }} */ event) => String(event.runId).startsWith('snapshot-');

/**
 * @param {string | undefined} id
 * @param {string} type
 */
function logEvent(id, type) {
  app.log.push([id === undefined ? undefined : Number(id), type]);
  if (app.log.length > MAX_LOG) app.log.splice(0, app.log.length - MAX_LOG);
}

/** @param {{ state: string, delayMs?: number, error?: unknown }} status */
export function showConnection({ state, delayMs, error }) {
  if (app.states.at(-1) !== state) app.states.push(state);
  ui.connection.dataset.state = state;
  ui.connection.textContent = state;
  ui.connection.title = error ? describeError(error) : delayMs === undefined ? '' : `retrying in ${Math.round(delayMs / 1000)} s`;
}

/** @param {boolean} running */
function setRunning(running) {
  app.running = running;
  ui.working.hidden = !running;
  ui.stop.hidden = !running;
}

/**
 * The thread's run `runId` ended (finished, failed, or stopped waiting for a person).
 *
 * @param {string | undefined} runId
 */
function endRun(runId) {
  runEnded(runLines, runId);
  setRunning(false);
  app.streaming.clear();
  transcript.schedule();
}

/**
 * Keeps what a reload needs, at a run boundary: `connectAgent()` checks that a stream starts with
 * `RUN_STARTED`, so a reload in the middle of a run resumes from here and gets that run whole.
 *
 * @param {BridgeAgent} agent
 */
function checkpoint(agent) {
  store.set(savedKey(agent.threadId), {
    lastEventId: agent.lastEventId,
    messages: agent.messages,
    state: agent.state,
    notices: app.notices,
    resumes: [...app.resumes.values()],
  });
}
