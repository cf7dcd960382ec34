// The demo page: pick or create a thread, follow it live, talk to the agent, answer approvals,
// push notifications and state signals. Plain ES modules with no build step of their own: the
// client is `mastra-agui-bridge/client` as one browser bundle (`/ui/client.js`, with
// `@ag-ui/client` and `rxjs` inside).
//
// A `BridgeAgent` follows the open thread (`connectAgent()`): `@ag-ui/client`'s reducer folds the
// thread's events into `agent.messages`, which the transcript renders. A `BridgeClient` makes the
// REST and signal calls.
import { BridgeAgent, BridgeClient, BridgeRequestError } from './client.js';
import { Transcript } from './transcript.js';

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
  status: $('#action-status'),
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
  threadId: undefined,
  /** @type {BridgeAgent | undefined} follows the open thread; `agent.messages` is the transcript */
  agent: undefined,
  /** Lines only the page adds (cancelled and failed runs): `{ id, after, tone, text }`, after message `after`. */
  notices: [],
  /** Ids of the messages and tool calls still streaming. */
  streaming: new Set(),
  /**
   * Calls waiting for an approval, or answered here, by tool call id until their result arrives:
   * `{ toolCallId, toolName, args, message, state }`, `state` being `waiting`, `approved` or `declined`.
   */
  approvals: new Map(),
  running: false,
  /** Connection states seen, for tests and devtools. */
  states: [],
  /** Applied `[id, type]` pairs of the open thread, for tests and devtools. */
  log: [],
};

const transcript = new Transcript(ui.transcript, () => ({
  messages: app.agent?.messages ?? [],
  notices: app.notices,
  streaming: app.streaming,
  approvals: new Map([...app.approvals].map(([id, a]) => [id, a.state])),
}));

function setResource(resourceId) {
  app.resourceId = resourceId;
  app.client = new BridgeClient({ baseUrl, resourceId, headers: authHeaders() });
}

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

/** Shows the token form; `why` says why (no token yet, or what happened to the last one). */
function askForToken(why, tone = 'error') {
  app.token = undefined;
  store.set('token', null);
  ui.tokenForm.hidden = false;
  ui.token.value = '';
  ui.token.focus();
  say(why, tone);
}

function useToken(token) {
  app.token = token;
  store.set('token', token);
  ui.tokenForm.hidden = true;
  const resource = tokenResource(token) ?? ui.resource.value.trim();
  setResource(resource);
  store.set('resource', resource);
}

/** Whether `error` is the server refusing the token: then the page asks for another one. */
function tokenRefused(error) {
  if (!(auth && error instanceof BridgeRequestError && error.status === 401)) return false;
  askForToken(`The token was refused: ${error.message.split(': ').slice(1).join(': ') || 'unauthorized'}. Enter another one.`);
  return true;
}

// ── status line ──────────────────────────────────────────────────────────

function say(text, tone = 'info') {
  ui.status.textContent = text;
  ui.status.dataset.tone = tone;
}

function describeError(error) {
  const details = error instanceof BridgeRequestError ? error.details?.map((d) => `${d.path}: ${d.message}`).join('; ') : undefined;
  return `${error?.message ?? error}${details ? ` (${details})` : ''}`;
}

/** Runs a page action; a failure is said in the status line as `<failure>: <reason>`. */
async function attempt(failure, action) {
  try {
    return await action();
  } catch (error) {
    say(`${failure}: ${describeError(error)}`, 'error');
  }
}

function describeDecision(answer) {
  if (!answer) return 'done';
  if (answer.skipped) return `skipped (${answer.reason})`;
  const action = answer.action ?? answer.decision?.action ?? 'accepted';
  const run = answer.runId ? ` · run ${answer.runId.slice(0, 8)}` : '';
  const meaning = { wake: 'started a run', deliver: 'joined the active run', persist: 'stored for later', discard: 'discarded', blocked: 'blocked' }[action] ?? action;
  return `${action}: ${meaning}${run}`;
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
      button.addEventListener('click', () => openThread(thread));
      li.append(button);
      return li;
    }),
  );
}

function createThread() {
  return attempt('Could not create a thread', async () => {
    const thread = await app.client.createThread({ title: `Chat ${new Date().toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' })}` });
    await loadThreads(thread.id);
    say('New thread created.');
  });
}

async function openThread(thread) {
  app.agent?.disconnect();
  app.threadId = thread.id;
  store.set('thread', { ...store.get('thread'), [app.resourceId]: thread.id });
  for (const button of ui.threads.querySelectorAll('button.thread')) button.setAttribute('aria-pressed', String(button.dataset.id === thread.id));
  ui.title.textContent = thread.title || thread.id;
  ui.meta.textContent = `${thread.id} · resource ${app.resourceId}`;
  await loadApprovals(follow(thread.id));
}

// ── following the thread ─────────────────────────────────────────────────

const savedKey = (threadId) => `state:${app.resourceId}:${threadId}`;

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
    onRunStartedEvent: mine(({ event }) => !isSnapshotRun(event) && setRunning(true)),
    onRunFinishedEvent: mine(({ event, outcome, interrupts }) => {
      if (!isSnapshotRun(event)) endRun();
      if (outcome === 'interrupt') addApprovals(interrupts);
      if (outcome === 'cancelled') addNotice('info', 'Run cancelled.');
      checkpoint(agent);
    }),
    onRunErrorEvent: mine(({ event }) => {
      endRun();
      addNotice('error', `Run failed: ${event.message}${event.code ? ` (${event.code})` : ''}`);
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

function endRun() {
  setRunning(false);
  app.streaming.clear();
  transcript.schedule();
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
  store.set(savedKey(agent.threadId), { lastEventId: agent.lastEventId, messages: agent.messages, state: agent.state, notices: app.notices });
}

// ── approvals ────────────────────────────────────────────────────────────

/** Adds or completes a waiting call (from a run's interrupt, or the pending-approvals route). */
function setApproval(toolCallId, fields) {
  const known = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
  app.approvals.set(toolCallId, { state: 'waiting', ...app.approvals.get(toolCallId), toolCallId, ...known });
}

function addApprovals(interrupts) {
  for (const i of interrupts) if (i.toolCallId) setApproval(i.toolCallId, { message: i.message, toolName: i.metadata?.toolName, args: i.metadata?.args });
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
  ui.approvals.replaceChildren(
    ...waiting.map((a) => {
      const card = document.createElement('div');
      card.className = 'approval';
      card.dataset.toolCallId = a.toolCallId;
      const text = document.createElement('div');
      text.className = 'approval-text';
      const strong = document.createElement('strong');
      strong.textContent = a.message ?? `Approve the call to ${a.toolName ?? 'this tool'}?`;
      const args = document.createElement('code');
      args.textContent = `${a.toolName ?? 'tool'}(${a.args === undefined ? '' : JSON.stringify(a.args)})`;
      text.append(strong, args);
      const actions = document.createElement('div');
      actions.className = 'approval-actions';
      const approve = document.createElement('button');
      approve.type = 'button';
      approve.className = 'primary';
      approve.textContent = 'Approve';
      approve.addEventListener('click', () => answerApproval(a.toolCallId, true, card));
      const decline = document.createElement('button');
      decline.type = 'button';
      decline.className = 'secondary';
      decline.textContent = 'Decline';
      decline.addEventListener('click', () => answerApproval(a.toolCallId, false, card));
      actions.append(approve, decline);
      card.append(text, actions);
      return card;
    }),
  );
  // The card takes room under the transcript: keep its last lines in view.
  if (ui.approvals.childElementCount > before) ui.transcript.scrollTop = ui.transcript.scrollHeight;
}

async function answerApproval(toolCallId, approved, card) {
  for (const button of card.querySelectorAll('button')) button.disabled = true;
  try {
    if (approved) await app.client.approve(app.threadId, toolCallId);
    else await app.client.decline(app.threadId, toolCallId, { reason: 'Declined in the demo page' });
    // The resumed run may have streamed the result before this answer came back: it is kept all the same.
    const answered = app.approvals.get(toolCallId);
    if (answered) answered.state = approved ? 'approved' : 'declined';
    say(approved ? 'Approved: the run resumes.' : 'Declined: the agent is told so.');
  } catch (error) {
    // Nothing waits for this answer any more (answered elsewhere: 409; gone: 404): drop the card.
    if (error instanceof BridgeRequestError && (error.code === 'CONFLICT' || error.code === 'TOOL_CALL_NOT_FOUND')) app.approvals.delete(toolCallId);
    say(`Approval failed: ${describeError(error)}`, 'error');
  }
  renderApprovals();
}

// ── composer and panels ──────────────────────────────────────────────────

async function submitMessage(queue) {
  const text = ui.message.value.trim();
  if (!text || !app.threadId) return;
  ui.send.disabled = ui.queue.disabled = true;
  try {
    const answer = queue ? await app.client.queueMessage(app.threadId, text) : await app.client.sendMessage(app.threadId, text);
    ui.message.value = '';
    say(`${queue ? 'Queued' : 'Sent'} · ${describeDecision(answer)}`);
  } catch (error) {
    say(`Could not send: ${describeError(error)}`, 'error');
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
  attempt('Could not stop', async () => {
    const { aborted } = await app.client.abort(app.threadId);
    say(aborted ? 'Run stopped.' : 'Nothing was running.');
  }),
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
    say(`Notification ${answer.record?.status ?? 'sent'} · ${describeDecision(answer)}`);
  });
});

ui.stateForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = new FormData(ui.stateForm);
  await attempt('Could not send state', async () => {
    const answer = await app.client.state(app.threadId, { id: form.get('id'), cacheKey: form.get('cacheKey'), contents: form.get('contents') });
    say(`State · ${describeDecision(answer)}`);
  });
});

ui.resourceForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const value = ui.resource.value.trim();
  if (!value) return;
  setResource(value);
  store.set('resource', value);
  await loadThreads();
});
ui.newThread.addEventListener('click', () => createThread());

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
  await loadThreads();
  // Refused, the token is gone and the form says why; accepted, the line no longer asks for one.
  if (app.token) say(`Signed in as ${app.resourceId}.`, 'ok');
});

setResource(app.resourceId);
if (auth && !app.token) askForToken('This server requires an access token: enter yours to load your threads.', 'info');
else loadThreads();
