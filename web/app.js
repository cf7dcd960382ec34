// The demo page: pick an agent or a workflow, pick or create a thread, follow it live, talk to
// the agent or run the workflow, answer approvals and suspended steps, push notifications and
// state signals. Plain ES modules with no build step of their own: the
// client is `mastra-agui-bridge/client` as one browser bundle (`/ui/client.js`, with
// `@ag-ui/client` and `rxjs` inside).
//
// A `BridgeAgent` follows the open thread (`connectAgent()`): `@ag-ui/client`'s reducer folds the
// thread's events into `agent.messages`, which the transcript renders. A `BridgeClient` makes the
// REST and signal calls.
import { BridgeAgent, BridgeClient, BridgeRequestError } from './client.js';
import { schedulesPanel } from './schedules.js';
import { runEnded, runStarted, say as sayIn } from './status-lines.js';
import { NEW_TITLE, threadNames, titleFrom } from './thread-names.js';
import { runEndNotice, Transcript } from './transcript.js';

const prefix = document.querySelector('meta[name="agui-prefix"]')?.content ?? '/agui';
const baseUrl = prefix.startsWith('%') ? '/agui' : prefix;
/** `bearer:<claim>` when the server requires a token whose `<claim>` names the resource, else `none`. */
const authMeta = document.querySelector('meta[name="agui-auth"]')?.content ?? 'none';
const auth = authMeta.startsWith('bearer') ? { claim: authMeta.split(':')[1] || 'sub' } : undefined;
/** Caps of the page's own lists (the log for devtools, the notices of a thread). */
const MAX_LOG = 5000;
const MAX_NOTICES = 200;
const $ = (selector) => document.querySelector(selector);

const ui = {
  tokenForm: $('#token-form'),
  token: $('#token'),
  resourceForm: $('#resource-form'),
  resource: $('#resource'),
  threads: $('#threads'),
  newThread: $('#new-thread'),
  title: $('#thread-title'),
  meta: $('#thread-meta'),
  connection: $('#connection'),
  transcript: $('#transcript'),
  approvals: $('#approvals'),
  composer: $('#composer'),
  message: $('#message'),
  send: $('#send'),
  queue: $('#queue'),
  stop: $('#stop'),
  working: $('#working'),
  notifyForm: $('#notify-form'),
  stateForm: $('#state-form'),
  agentState: $('#agent-state'),
  stateHelp: $('#state-help'),
  picker: $('#agent'),
  status: $('#action-status'),
  composerStatus: $('#composer-status'),
  tokenStatus: $('#token-status'),
};

const store = {
  get: (key) => {
    try {
      return JSON.parse(sessionStorage.getItem(`bridge-demo:${key}`) ?? 'null');
    } catch {
      return null;
    }
  },
  set: (key, value) => {
    try {
      sessionStorage.setItem(`bridge-demo:${key}`, JSON.stringify(value));
    } catch {
      // storage full or disabled: the page still works, a reload just starts from a snapshot
    }
  },
};

const app = {
  // `?resource=` picks the resource (a link to someone's threads), else the one this tab used last.
  resourceId: new URLSearchParams(location.search).get('resource') || store.get('resource') || 'demo-user',
  /** The bearer token this tab uses when the server requires one (sessionStorage: gone with the tab). */
  token: auth ? store.get('token') : undefined,
  /** @type {BridgeClient} the REST and signal calls, as `resourceId` */
  client: undefined,
  /** What the page talks to: `{ id, kind }` of `GET /agents` (`kind`: `agent` or `workflow`). */
  target: undefined,
  threadId: undefined,
  /** The open thread (`ThreadInfo`), to follow it again under another agent or workflow. */
  thread: undefined,
  /** @type {BridgeAgent | undefined} follows the open thread; `agent.messages` is the transcript */
  agent: undefined,
  /**
   * Lines only the page adds (a run that ended without the bridge's run-end message, a workflow's
   * step timeline): `{ id, after, tone, text }`, after message `after`.
   */
  notices: [],
  /** The open run showed its run-end message (cancelled or failed): the page adds no notice of its own. */
  runEndShown: false,
  /** Ids of the messages and tool calls still streaming. */
  streaming: new Set(),
  /** Messages sent into a busy thread or queued, shown at once until the run reads them: `{ id, text, state }`. */
  pending: [],
  /**
   * Calls waiting for an approval, or answered here, by tool call id until their result arrives:
   * `{ toolCallId, toolName, args, message, state }`, `state` being `waiting`, `approved` or `declined`.
   */
  approvals: new Map(),
  /**
   * Workflow steps suspended for a person, by interrupt id: `{ id, message, responseSchema,
   * metadata, error? }`. Any new run on the thread answers or supersedes them (docs/api.md "Pending interrupts do not hold a thread"), so a run's start clears them.
   */
  resumes: new Map(),
  /** The run in progress, as `RUN_STARTED` named it (`RUN_ERROR` does not). */
  runId: undefined,
  /** A card was answered here: when it goes, the focus goes on to the composer. */
  answeredCard: false,
  /** The open run's step timeline (a workflow's): the notice it is shown in. */
  timeline: undefined,
  running: false,
  /** Connection states seen, for tests and devtools. */
  states: [],
  /** Applied `[id, type]` pairs of the open thread, for tests and devtools. */
  log: [],
};

const transcript = new Transcript(ui.transcript, () => ({
  messages: app.agent?.messages ?? [],
  notices: app.notices,
  pending: app.pending,
  streaming: app.streaming,
  running: app.running,
  approvals: new Map([
    ...[...app.approvals].map(([id, a]) => [id, a.state]),
    ...[...app.resumes.values()].filter((r) => r.toolCallId).map((r) => [r.toolCallId, 'waiting']),
  ]),
}));

function setResource(resourceId) {
  app.resourceId = resourceId;
  app.client = new BridgeClient({ baseUrl, resourceId, agentId: app.target?.id, headers: authHeaders() });
}

const isWorkflow = () => app.target?.kind === 'workflow';

// ── agents and workflows ─────────────────────────────────────────────────

/** Fills the picker from `GET /agents`: `?agent=` first, else this tab's last pick, else the default agent. */
async function loadAgents() {
  let agents = [];
  try {
    agents = await app.client.agents();
  } catch (error) {
    if (tokenRefused(error)) return false;
    say(`Could not list the agents: ${describeError(error)}`, 'error');
  }
  const wanted = new URLSearchParams(location.search).get('agent') || store.get('agent');
  const pick = agents.find((a) => a.id === wanted) ?? agents.find((a) => a.default) ?? agents[0];
  ui.picker.replaceChildren(
    ...agents.map((a) => {
      const option = document.createElement('option');
      option.value = a.id;
      option.textContent = a.kind === 'workflow' ? `${a.name} (workflow)` : a.name;
      option.dataset.kind = a.kind;
      return option;
    }),
  );
  if (pick) ui.picker.value = pick.id;
  target(pick);
  return true;
}

/** Talks to `agent` from now on: the controls it has, the client that names it. */
function target(agent) {
  app.target = agent && { id: agent.id, kind: agent.kind };
  setResource(app.resourceId);
  const workflow = isWorkflow();
  for (const node of document.querySelectorAll('[data-kind]')) node.hidden = node.dataset.kind !== (workflow ? 'workflow' : 'agent');
  ui.message.placeholder = workflow ? 'A topic for the workflow… (Enter runs it)' : 'Message the agent… (Enter sends, Shift+Enter for a new line)';
  ui.stateHelp.textContent = workflow
    ? "The workflow run's state, as AG-UI state: it changes step by step."
    : "The agent's working memory, as AG-UI state. Try remember tea, no sugar.";
}

ui.picker.addEventListener('change', async () => {
  const option = ui.picker.selectedOptions[0];
  if (!option) return;
  store.set('agent', option.value);
  target({ id: option.value, kind: option.dataset.kind });
  // The same thread, followed as the picked agent's or workflow's.
  if (app.thread) await openThread(app.thread);
});

// ── access token (servers with auth on) ──────────────────────────────────

const authHeaders = () => (app.token ? { Authorization: `Bearer ${app.token}` } : undefined);

/** The resource a JWT names (its payload is readable; the server verifies it), or undefined (an API key). */
function tokenResource(token) {
  try {
    const payload = JSON.parse(atob(token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')));
    const resource = payload?.[auth.claim];
    return typeof resource === 'string' && resource ? resource : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Shows the token form; `why` says why (no token yet, or what happened to the last one). Until a
 * token is taken the page is signed out: nothing to connect to, nothing to send.
 */
function askForToken(why, tone = 'error') {
  app.token = undefined;
  store.set('token', null);
  ui.tokenForm.hidden = false;
  ui.token.value = '';
  ui.token.focus();
  signedIn(false);
  say(why, tone, ui.tokenStatus);
}

function useToken(token) {
  app.token = token;
  store.set('token', token);
  ui.tokenForm.hidden = true;
  const fromToken = tokenResource(token);
  const resource = fromToken ?? ui.resource.value.trim();
  setResource(resource);
  store.set('resource', resource);
  signedIn(true, fromToken !== undefined);
}

/**
 * Signed in or out (servers with auth on). Signed out, the composer and the resource wait for a
 * token. Signed in with a token that names its resource, the resource is that one: another would be
 * refused (`403`), so the box is read-only.
 */
function signedIn(yes, resourceFromToken = false) {
  ui.message.disabled = ui.send.disabled = ui.queue.disabled = !yes;
  ui.message.placeholder = yes ? 'Message the agent… (Enter sends, Shift+Enter for a new line)' : 'Sign in with your access token first (above)';
  const locked = !yes || resourceFromToken;
  ui.resource.readOnly = locked;
  ui.resourceForm.querySelector('button').disabled = locked;
  ui.resource.title = resourceFromToken ? 'The resource your token names' : '';
  if (!yes) {
    app.agent?.disconnect();
    showConnection({ state: 'signed out' });
  }
}

/** Whether `error` is the server refusing the token: then the page asks for another one. */
function tokenRefused(error) {
  if (!(auth && error instanceof BridgeRequestError && error.status === 401)) return false;
  askForToken(`The token was refused: ${error.message.split(': ').slice(1).join(': ') || 'unauthorized'}. Enter another one.`);
  return true;
}

// ── status line ──────────────────────────────────────────────────────────

/**
 * Says what happened where it happened: `where` is the status line beside the action (the
 * composer's for messages, approvals and steps; the token form's; the side panel's by default).
 * `lasting`: how long the line is true (status-lines.js).
 */
function say(text, tone = 'info', where = ui.status, lasting = undefined) {
  sayIn(where, text, tone, lasting);
}

/** Says it beside the composer (messages, runs, approvals and steps: the chat's own actions). */
const sayInChat = (text, tone, lasting) => say(text, tone, ui.composerStatus, lasting);

/** The lines a run's start or end can make untrue. */
const runLines = [ui.status, ui.composerStatus];

/** A decision that started or joined a run is said until that run ends. */
function lastingOf(answer) {
  const action = answer?.action ?? answer?.decision?.action;
  return action === 'wake' || action === 'deliver' ? { until: 'run-end', runId: answer.runId } : undefined;
}

function describeError(error) {
  const details = error instanceof BridgeRequestError ? error.details?.map((d) => `${d.path}: ${d.message}`).join('; ') : undefined;
  return `${error?.message ?? error}${details ? ` (${details})` : ''}`;
}

/** Runs a page action; a failure is said as `<failure>: <reason>`, in `where` (the side panel's line by default). */
async function attempt(failure, action, where = ui.status) {
  try {
    return await action();
  } catch (error) {
    say(`${failure}: ${describeError(error)}`, 'error', where);
  }
}

/**
 * What happened to a message, a signal or a notification, in words a person reads (Mastra's
 * decision: `wake`, `deliver`, `persist`, …), for the line under the composer or the panel.
 */
function describeDecision(answer, what = 'message') {
  if (!answer) return 'Done.';
  if (answer.skipped) return 'Unchanged since the last time: not sent again.';
  const action = answer.action ?? answer.decision?.action;
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
  }[what];
  return sentences[action] ?? { discard: 'Dropped by the agent’s rules: not delivered.', blocked: 'Not sent: blocked.' }[action] ?? 'Done.';
}

// ── threads ──────────────────────────────────────────────────────────────

async function loadThreads(selectId) {
  ui.resource.value = app.resourceId;
  let threads = [];
  try {
    threads = await app.client.listThreads({ limit: 50 });
  } catch (error) {
    if (tokenRefused(error)) return;
    say(`Could not list threads: ${describeError(error)}`, 'error');
  }
  renderThreads(threads);
  const wanted = selectId ?? store.get('thread')?.[app.resourceId];
  const pick = threads.find((t) => t.id === wanted) ?? threads[0];
  if (pick) await openThread(pick);
  else await createThread();
}

function renderThreads(threads) {
  ui.threads.replaceChildren(
    ...threads.map((thread) => {
      const li = document.createElement('li');
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'thread';
      button.dataset.id = thread.id;
      button.setAttribute('aria-pressed', String(thread.id === app.threadId));
      const title = document.createElement('span');
      title.className = 'thread-title';
      title.textContent = thread.title || thread.id;
      const when = document.createElement('span');
      when.className = 'thread-when';
      when.textContent = new Date(thread.updatedAt).toLocaleString([], { dateStyle: 'short', timeStyle: 'short' });
      button.append(title, when);
      button.addEventListener('click', () => {
        showView('chat');
        void openThread(thread);
      });
      li.append(button);
      return li;
    }),
  );
}

function createThread() {
  return attempt('Could not create a thread', async () => {
    const thread = await app.client.createThread({ title: NEW_TITLE });
    await loadThreads(thread.id);
    say('New thread created.', 'info', ui.status, { until: 'next-run' });
  });
}

/** Names a new thread after its first message (or a workflow's first input), here and in the other tabs. */
async function nameAfter(text) {
  if (app.thread?.title !== NEW_TITLE) return;
  const title = titleFrom(text);
  try {
    app.thread = await app.client.updateThread(app.threadId, { title });
    ui.title.textContent = title;
    renderThreads(await app.client.listThreads({ limit: 50 }));
    names.renamed({ resourceId: app.resourceId, threadId: app.threadId, title });
  } catch (error) {
    // A name is a nicety: the thread keeps "New chat", and the conversation goes on.
    console.warn('could not name the thread', error);
  }
}

/** A thread renamed elsewhere (another tab, or while this one was in the background): its new name here. */
function showTitle({ resourceId, threadId, title }) {
  if (resourceId !== app.resourceId) return;
  for (const button of ui.threads.querySelectorAll('button.thread'))
    if (button.dataset.id === threadId) button.querySelector('.thread-title').textContent = title || threadId;
  if (threadId !== app.threadId) return;
  app.thread = { ...app.thread, title };
  ui.title.textContent = title || threadId;
}

const names = threadNames(showTitle);

/** The list read again when the tab comes back to the front: names given meanwhile, by any client. */
document.addEventListener('visibilitychange', async () => {
  if (document.visibilityState !== 'visible' || !app.client || !app.threadId) return;
  try {
    const threads = await app.client.listThreads({ limit: 50 });
    renderThreads(threads);
    const open = threads.find((t) => t.id === app.threadId);
    if (open) showTitle({ resourceId: app.resourceId, threadId: open.id, title: open.title });
  } catch {
    // the list stays as it was; the next look tries again
  }
});

async function openThread(thread) {
  app.agent?.disconnect();
  app.pending = [];
  app.thread = thread;
  app.threadId = thread.id;
  store.set('thread', { ...store.get('thread'), [app.resourceId]: thread.id });
  for (const button of ui.threads.querySelectorAll('button.thread')) button.setAttribute('aria-pressed', String(button.dataset.id === thread.id));
  ui.title.textContent = thread.title || thread.id;
  ui.meta.textContent = `${thread.id} · resource ${app.resourceId}`;
  await Promise.all([loadApprovals(follow(thread.id)), schedules.refresh()]);
}

// ── following the thread ─────────────────────────────────────────────────

const savedKey = (threadId) => `state:${app.resourceId}:${app.target?.id ?? ''}:${threadId}`;

/**
 * Follows a thread: from the copy this tab kept (resuming after its last id, so nothing arrives
 * twice), else from a snapshot of its history.
 */
function follow(threadId) {
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
  app.resumes = new Map((saved?.resumes ?? []).map((r) => [r.id, r]));
  app.timeline = undefined;
  app.log = [];
  app.streaming.clear();
  app.approvals.clear();
  setRunning(false);
  renderApprovals();
  agent.connectAgent({}, follower(agent)).catch((error) => {
    if (agent === app.agent) say(`The thread stream stopped: ${describeError(error)}`, 'error');
  });
  return agent;
}

/** What the page does with the thread's events beyond what the reducer folds into `agent.messages`. */
function follower(agent) {
  // Events still in the pipeline of a thread the page has left are not this page's any more.
  const mine = (handler) => (params) => void (agent === app.agent && handler(params));
  const streaming = (id, on) => {
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
    onRunFinishedEvent: mine(({ event, outcome, interrupts }) => {
      if (!isSnapshotRun(event)) endRun(event.runId);
      // A schedule's fire ends as a run: its last fire shows in the panel.
      if (!isSnapshotRun(event)) void schedules.refresh();
      if (outcome === 'interrupt') addApprovals(interrupts);
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

/** The agent's state (its working memory), as the thread's state events built it. */
function showState(state) {
  ui.agentState.textContent = JSON.stringify(state ?? {}, null, 2);
}

/** The history run a stream opens with (`snapshot=1`, or an id the server could not replay): no work is running. */
const isSnapshotRun = (event) => String(event.runId).startsWith('snapshot-');

function logEvent(id, type) {
  app.log.push([id === undefined ? undefined : Number(id), type]);
  if (app.log.length > MAX_LOG) app.log.splice(0, app.log.length - MAX_LOG);
}

function showConnection({ state, delayMs, error }) {
  if (app.states.at(-1) !== state) app.states.push(state);
  ui.connection.dataset.state = state;
  ui.connection.textContent = state;
  ui.connection.title = error ? describeError(error) : delayMs === undefined ? '' : `retrying in ${Math.round(delayMs / 1000)} s`;
}

function setRunning(running) {
  app.running = running;
  ui.working.hidden = !running;
  ui.stop.hidden = !running;
}

/** The thread's run `runId` ended (finished, failed, or stopped waiting for a person). */
function endRun(runId) {
  runEnded(runLines, runId);
  setRunning(false);
  app.streaming.clear();
  transcript.schedule();
}

// ── a workflow run's steps ───────────────────────────────────────────────

/** Opens the run's step timeline, after the message it answers (a resumed run's: after the thread's last). */
function startTimeline(event, agent) {
  const after = event.input?.messages?.at(-1)?.id ?? agent.messages.at(-1)?.id;
  app.timeline = { id: `steps-${event.runId}`, after, steps: [] };
  app.notices = [...app.notices, app.timeline].slice(-MAX_NOTICES);
  transcript.schedule();
}

/** A step's status on the open timeline (`running`, `done`, `waiting`, `failed`, `cancelled`). */
function setStep(name, status) {
  const timeline = app.timeline;
  if (!timeline || !name) return;
  const step = timeline.steps.find((s) => s.name === name);
  if (step) step.status = status;
  else timeline.steps.push({ name, status });
  transcript.schedule();
}

/** Steps earlier runs left waiting: answered by this run, or cancelled by its new input. */
function settleWaitingSteps(status) {
  for (const notice of app.notices) for (const step of notice.steps ?? []) if (step.status === 'waiting') step.status = status;
  transcript.schedule();
}

/** The run ended: a step still open is cut (`cancelled`, `failed`); one that suspended waits. */
function endTimeline(cut) {
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
 */
function noticeUnlessShown(end) {
  if (app.runEndShown) return;
  const { tone, text } = runEndNotice(end);
  addNotice(tone, text);
}

function addNotice(tone, text) {
  app.notices = [...app.notices, { id: `notice-${Date.now()}-${app.notices.length}`, after: app.agent.messages.at(-1)?.id, tone, text }].slice(-MAX_NOTICES);
  transcript.schedule();
}

/**
 * Keeps what a reload needs, at a run boundary: `connectAgent()` checks that a stream starts with
 * `RUN_STARTED`, so a reload in the middle of a run resumes from here and gets that run whole.
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

// ── approvals ────────────────────────────────────────────────────────────

/** Interrupts of a suspended step: answered with the step's resume data, by the next `/run`. */
const SUSPENDED = new Set(['workflow_suspended', 'tool_suspended']);

/** Adds or completes a waiting call (from a run's interrupt, or the pending-approvals route). */
function setApproval(toolCallId, fields) {
  const known = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
  app.approvals.set(toolCallId, { state: 'waiting', ...app.approvals.get(toolCallId), toolCallId, ...known });
}

function addApprovals(interrupts) {
  for (const i of interrupts) {
    // A suspended step (a workflow's, or one inside a workflow the agent runs as a tool) is answered with a form.
    if (SUSPENDED.has(i.reason))
      app.resumes.set(i.id, { id: i.id, toolCallId: i.toolCallId, message: i.message, responseSchema: i.responseSchema, metadata: i.metadata });
    else if (i.toolCallId) setApproval(i.toolCallId, { message: i.message, toolName: i.metadata?.toolName, args: i.metadata?.args });
  }
  renderApprovals();
}

/** The calls waiting for an approval, also those from before this page opened (a reload, another tab). */
function loadApprovals(agent) {
  return attempt('Could not load pending approvals', async () => {
    const pending = await app.client.pendingApprovals(agent.threadId);
    if (agent !== app.agent) return;
    for (const p of pending) setApproval(p.toolCallId, { toolName: p.toolName, args: p.args });
    renderApprovals();
  });
}

/** Shows a card per waiting call (and their state on the tool cards of the transcript). */
function renderApprovals() {
  transcript.schedule();
  const before = ui.approvals.childElementCount;
  const waiting = [...app.approvals.values()].filter((a) => a.state === 'waiting' && !a.resulted);
  const focused = document.activeElement === document.body || ui.approvals.contains(document.activeElement);
  ui.approvals.replaceChildren(...[...app.resumes.values()].map(resumeCard), ...waiting.map(approvalCard));
  // The card this page answered went (its buttons, disabled, had let go of the focus): the composer is next.
  if (app.answeredCard && ui.approvals.childElementCount < before) {
    app.answeredCard = false;
    if (focused) ui.message.focus();
  }
  // The card takes room under the transcript: keep its last lines in view.
  if (ui.approvals.childElementCount > before) ui.transcript.scrollTop = ui.transcript.scrollHeight;
  // A card's text that scrolls (a long draft) takes the keyboard's focus, so it can be read without a pointer.
  for (const text of ui.approvals.querySelectorAll('.approval-text')) {
    if (text.scrollHeight > text.clientHeight) text.tabIndex = 0;
    else text.removeAttribute('tabindex');
  }
}

/** An element with a class and a text, for the cards. */
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A button that calls `onClick`; `type` `submit` for a form's own buttons. */
function button(label, className, onClick, type = 'button') {
  const node = el('button', className, label);
  node.type = type;
  node.addEventListener('click', onClick);
  return node;
}

/** A waiting tool call's card: what it would do, Approve and Decline. */
function approvalCard(a) {
  const card = el('div', 'approval');
  card.dataset.toolCallId = a.toolCallId;
  const text = el('div', 'approval-text');
  text.append(
    el('strong', '', a.message ?? `Approve the call to ${a.toolName ?? 'this tool'}?`),
    el('code', '', `${a.toolName ?? 'tool'}(${a.args === undefined ? '' : JSON.stringify(a.args)})`),
  );
  const actions = el('div', 'approval-actions');
  actions.append(
    button('Approve', 'primary', () => answerApproval(a.toolCallId, true, card)),
    button('Decline', 'secondary', () => answerApproval(a.toolCallId, false, card)),
  );
  card.append(text, actions);
  return card;
}

async function answerApproval(toolCallId, approved, card) {
  app.answeredCard = true;
  for (const button of card.querySelectorAll('button')) button.disabled = true;
  try {
    const { runId } = approved
      ? await app.client.approve(app.threadId, toolCallId)
      : await app.client.decline(app.threadId, toolCallId, { reason: 'Declined in the demo page' });
    // The resumed run may have streamed the result before this answer came back: it is kept all the same.
    const answered = app.approvals.get(toolCallId);
    if (answered) answered.state = approved ? 'approved' : 'declined';
    sayInChat(approved ? 'Approved: the run resumes.' : 'Declined: the agent is told so.', 'info', { until: 'run-end', runId });
  } catch (error) {
    // Nothing waits for this answer any more (answered elsewhere: 409; gone: 404): drop the card.
    if (error instanceof BridgeRequestError && (error.code === 'CONFLICT' || error.code === 'TOOL_CALL_NOT_FOUND')) app.approvals.delete(toolCallId);
    sayInChat(`Approval failed: ${describeError(error)}`, 'error');
  }
  renderApprovals();
}

// ── a suspended workflow step ────────────────────────────────────────────

/**
 * A form for a suspended step, generated from its interrupt's `responseSchema`: a text, number or
 * choice field per property, a checkbox per optional yes/no; a required yes/no (`approved`)
 * becomes the Approve and Decline buttons. What the step showed (`suspendPayload`) comes first.
 */
function resumeCard(resume) {
  const card = el('form', 'approval resume');
  card.dataset.interruptId = resume.id;
  const text = el('div', 'approval-text');
  text.append(el('strong', '', resume.message ?? `Step ${resume.metadata?.stepId ?? ''} waits for you.`));
  for (const [key, value] of Object.entries(resume.metadata?.suspendPayload ?? {})) {
    text.append(el('p', 'resume-payload', `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`));
  }
  const schema = resume.responseSchema ?? {};
  const required = new Set(schema.required ?? []);
  const properties = Object.entries(schema.properties ?? {});
  const decision = properties.find(([key, p]) => p.type === 'boolean' && required.has(key))?.[0];
  for (const [key, property] of properties) if (key !== decision) text.append(fieldFor(resume.id, key, property, required.has(key)));
  const actions = el('div', 'approval-actions');
  // Each button says what it adds to the answer; the form's submit sends it.
  const choice = (label, className, payload) => button(label, className, () => (card.dataset.decision = JSON.stringify(payload)), 'submit');
  if (decision) actions.append(choice('Approve', 'primary', { [decision]: true }), choice('Decline', 'secondary', { [decision]: false }));
  else actions.append(choice('Submit', 'primary', {}));
  const error = el('p', 'card-error', resume.error ?? '');
  error.setAttribute('role', 'alert');
  card.append(text, actions, error);
  card.addEventListener('submit', (event) => {
    event.preventDefault();
    answerResume(resume, { ...formValues(card, properties), ...JSON.parse(card.dataset.decision ?? '{}') }, card);
  });
  return card;
}

function fieldFor(interruptId, key, property, required) {
  const row = el('div', 'row');
  const label = el('label');
  const id = `resume-${interruptId.replace(/[^\w-]/g, '_')}-${key}`;
  label.htmlFor = id;
  label.textContent = `${property.title ?? key}${required ? '' : ' (optional)'}`;
  let input;
  if (Array.isArray(property.enum)) {
    input = document.createElement('select');
    for (const value of property.enum) input.append(new Option(String(value), String(value)));
  } else {
    input = document.createElement('input');
    input.type = property.type === 'boolean' ? 'checkbox' : property.type === 'number' || property.type === 'integer' ? 'number' : 'text';
  }
  input.id = id;
  input.name = key;
  input.required = required && property.type !== 'boolean';
  row.append(label, input);
  return row;
}

/** The form's values, typed as the schema says; an empty optional field is left out. */
function formValues(card, properties) {
  const values = {};
  for (const [key, property] of properties) {
    const input = card.elements.namedItem(key);
    if (!input) continue;
    if (property.type === 'boolean') values[key] = input.checked;
    else if (input.value === '') continue;
    else values[key] = property.type === 'number' || property.type === 'integer' ? Number(input.value) : input.value;
  }
  return values;
}

/** Answers a suspended step: the next `/run` of the workflow resumes it. A refusal is said on the card. */
async function answerResume(resume, payload, card) {
  app.answeredCard = true;
  for (const control of card.querySelectorAll('button, input, select')) control.disabled = true;
  try {
    const runId = await startRun({ messages: [], resume: [{ interruptId: resume.id, status: 'resolved', payload }] });
    sayInChat(payload.approved === false ? 'Declined: the workflow goes on without it.' : 'Answered: the workflow goes on.', 'info', {
      until: 'run-end',
      runId,
    });
  } catch (error) {
    // Not waiting any more (answered elsewhere, superseded): the card goes; else it stays, with why.
    if (error instanceof BridgeRequestError && error.code === 'RUN_NOT_FOUND') app.resumes.delete(resume.id);
    else if (app.resumes.has(resume.id)) app.resumes.set(resume.id, { ...resume, error: `Not accepted: ${describeError(error)}` });
    sayInChat(`Could not answer the step: ${describeError(error)}`, 'error');
    renderApprovals();
  }
}

/**
 * Starts a run of the picked workflow (`POST /run`). Resolves to its run id once the bridge
 * accepted it; the run itself reaches the page on the thread's stream, as every run does. Its own stream is read to the
 * end, not dropped: a client that leaves cancels its run.
 */
async function startRun({ messages, resume }) {
  const input = {
    threadId: app.threadId,
    runId: crypto.randomUUID(),
    messages,
    tools: [],
    context: [],
    state: {},
    forwardedProps: { agentId: app.target.id, resourceId: app.resourceId },
    ...(resume && { resume }),
  };
  const response = await fetch(`${baseUrl}/run`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', ...authHeaders() },
    body: JSON.stringify(input),
  });
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    throw new BridgeRequestError({
      status: response.status,
      code: body.code ?? `HTTP_${response.status}`,
      message: body.error ?? response.statusText,
      details: body.details,
      request: 'POST /run',
    });
  }
  void response.text().catch(() => {
    // The page left, or the connection dropped: the thread's stream says how the run ended.
  });
  return input.runId;
}

// ── composer and panels ──────────────────────────────────────────────────

async function submitMessage(queue) {
  const text = ui.message.value.trim();
  if (!text || !app.threadId) return;
  ui.send.disabled = ui.queue.disabled = true;
  try {
    if (isWorkflow()) {
      const runId = await startRun({ messages: [{ id: crypto.randomUUID(), role: 'user', content: text }] });
      ui.message.value = '';
      sayInChat(`Started ${app.target.id}.`, 'info', { until: 'run-end', runId });
      return void nameAfter(text);
    }
    const answer = queue ? await app.client.queueMessage(app.threadId, text) : await app.client.sendMessage(app.threadId, text);
    ui.message.value = '';
    sayInChat(describeDecision(answer, queue ? 'queued' : 'message'), 'info', lastingOf(answer));
    // A message the agent has yet to read (it answers something else now) shows at once, marked.
    const waiting = { deliver: queue ? 'queued' : 'sent, read at the next step', persist: 'saved for the next turn' }[answer.action];
    if (waiting) {
      app.pending.push({ id: answer.signalId, text, state: waiting });
      transcript.schedule();
    }
    void nameAfter(text);
  } catch (error) {
    sayInChat(`Could not send: ${describeError(error)}`, 'error');
  } finally {
    ui.send.disabled = ui.queue.disabled = false;
    ui.message.focus();
  }
}

ui.composer.addEventListener('submit', (event) => {
  event.preventDefault();
  submitMessage(false);
});
ui.queue.addEventListener('click', () => submitMessage(true));
ui.message.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    submitMessage(false);
  }
});
for (const chip of document.querySelectorAll('[data-try]')) {
  chip.addEventListener('click', () => {
    ui.message.value = chip.dataset.try;
    ui.message.focus();
  });
}

ui.stop.addEventListener('click', () =>
  attempt(
    'Could not stop',
    async () => {
      const { aborted } = await app.client.abort(app.threadId);
      sayInChat(aborted ? 'Run stopped.' : 'Nothing was running.');
    },
    ui.composerStatus,
  ),
);

ui.notifyForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = new FormData(ui.notifyForm);
  await attempt('Could not notify', async () => {
    const answer = await app.client.notify(app.threadId, {
      source: form.get('source'),
      kind: form.get('kind'),
      summary: form.get('summary'),
      priority: form.get('priority'),
    });
    say(describeDecision(answer, 'notification'), 'info', ui.status, lastingOf(answer));
  });
});

ui.stateForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = new FormData(ui.stateForm);
  await attempt('Could not send state', async () => {
    const answer = await app.client.state(app.threadId, { id: form.get('id'), cacheKey: form.get('cacheKey'), contents: form.get('contents') });
    say(describeDecision(answer, 'state'), 'info', ui.status, lastingOf(answer));
  });
});

const schedules = schedulesPanel(
  {
    form: $('#schedule-form'),
    when: $('#schedule-when'),
    cronRow: $('#schedule-cron-row'),
    cron: $('#schedule-cron'),
    timezone: $('#schedule-timezone'),
    list: $('#schedules'),
  },
  { client: () => app.client, threadId: () => app.threadId, attempt, say },
);

ui.resourceForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const value = ui.resource.value.trim();
  if (!value) return;
  setResource(value);
  store.set('resource', value);
  await loadThreads();
});
ui.newThread.addEventListener('click', () => createThread());

/** Narrow screens: which view shows, the chat or the threads and panels (the tab bar). */
function showView(view) {
  document.querySelector('.layout').dataset.view = view;
  for (const tab of document.querySelectorAll('.tabbar button')) tab.setAttribute('aria-pressed', String(tab.dataset.view === view));
}
for (const tab of document.querySelectorAll('.tabbar button')) tab.addEventListener('click', () => showView(tab.dataset.view));

// For devtools and the browser tests: read-only views of what the page holds.
window.bridgeDemo = {
  get threadId() {
    return app.threadId;
  },
  get states() {
    return [...app.states];
  },
  get log() {
    return app.log.map(([id, type]) => ({ id, type }));
  },
  /** The id of the last event applied (where a reload resumes once the run is over). */
  get lastSeq() {
    return app.agent?.lastEventId === undefined ? undefined : Number(app.agent.lastEventId);
  },
  get running() {
    return app.running;
  },
  /** The `BridgeAgent` following the open thread (`messages`, `lastEventId`, `connection`). */
  get agent() {
    return app.agent;
  },
};

ui.tokenForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const token = ui.token.value.trim();
  if (!token) return;
  useToken(token);
  if (await loadAgents()) await loadThreads();
  // Refused, the token is gone and the form says why; accepted, the line no longer asks for one.
  if (app.token) say(`Signed in as ${app.resourceId}.`, 'ok');
});

setResource(app.resourceId);
if (auth && !app.token) askForToken('This server requires an access token: enter yours to load your threads.', 'info');
else {
  if (app.token) signedIn(true, tokenResource(app.token) !== undefined);
  loadAgents().then((listed) => listed && loadThreads());
}
