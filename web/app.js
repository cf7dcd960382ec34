// The demo page: pick or create a thread, follow it live, talk to the agent, answer approvals,
// push notifications and state signals. Vanilla ES modules, no build step.
import { Api, ApiError } from './api.js';
import { ThreadStream } from './stream.js';
import { Transcript } from './transcript.js';

const prefix = document.querySelector('meta[name="agui-prefix"]')?.content ?? '/agui';
const api = new Api(prefix.startsWith('%') ? '/agui' : prefix);
const $ = (selector) => document.querySelector(selector);

const ui = {
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
  threadId: undefined,
  /** @type {ThreadStream | undefined} */
  stream: undefined,
  /** Pending approvals by tool call id. */
  approvals: new Map(),
  /** Connection states seen, for tests and devtools. */
  states: [],
};

const transcript = new Transcript(ui.transcript, {
  onRunning: (running) => {
    ui.working.hidden = !running;
    ui.stop.hidden = !running;
  },
  onInterrupts: (interrupts) => {
    for (const i of interrupts) if (i.toolCallId) app.approvals.set(i.toolCallId, { ...app.approvals.get(i.toolCallId), ...i });
    renderApprovals();
  },
  onToolResult: (toolCallId) => {
    if (app.approvals.delete(toolCallId)) renderApprovals();
  },
});

// ── status line ──────────────────────────────────────────────────────────

function say(text, tone = 'info') {
  ui.status.textContent = text;
  ui.status.dataset.tone = tone;
}

function describeError(error) {
  if (error instanceof ApiError) {
    const details = error.details?.map((d) => `${d.path}: ${d.message}`).join('; ');
    return `${error.code}: ${error.message}${details ? ` (${details})` : ''}`;
  }
  return String(error?.message ?? error);
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
    threads = await api.listThreads(app.resourceId);
  } catch (error) {
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
    const thread = await api.createThread(app.resourceId, `Chat ${new Date().toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' })}`);
    await loadThreads(thread.id);
    say('New thread created.');
  });
}

/** Follows a thread: from the state this tab kept (resuming after its last id), else from a snapshot. */
async function openThread(thread) {
  saveNow();
  app.stream?.close();
  app.threadId = thread.id;
  app.approvals.clear();
  renderApprovals();
  store.set('thread', { ...store.get('thread'), [app.resourceId]: thread.id });
  for (const button of ui.threads.querySelectorAll('button.thread')) button.setAttribute('aria-pressed', String(button.dataset.id === thread.id));
  ui.title.textContent = thread.title || thread.id;
  ui.meta.textContent = `${thread.id} · resource ${app.resourceId}`;

  const saved = store.get(`state:${app.resourceId}:${thread.id}`);
  if (saved && typeof saved.lastSeq === 'number') transcript.restore(saved);
  else transcript.reset();
  const threadId = thread.id;
  app.stream = new ThreadStream({
    url: (query) => api.eventsUrl(threadId, { resourceId: app.resourceId, ...query }),
    lastEventId: transcript.lastSeq,
    onEvent: (event, id) => {
      if (app.threadId !== threadId) return;
      if (transcript.apply(event, id)) scheduleSave();
    },
    onState: (state, detail) => {
      app.states.push(state);
      ui.connection.dataset.state = state;
      ui.connection.textContent = state;
      ui.connection.title = detail ?? '';
    },
  });
  app.stream.open();
  await loadApprovals(threadId);
}

// ── keeping the transcript across a reload ───────────────────────────────

let saveTimer;
function scheduleSave() {
  clearTimeout(saveTimer);
  saveTimer = setTimeout(saveNow, 300);
}

function saveNow() {
  clearTimeout(saveTimer);
  if (!app.threadId || transcript.lastSeq === undefined) return;
  store.set(`state:${app.resourceId}:${app.threadId}`, transcript.toJSON());
}

addEventListener('pagehide', saveNow);

// ── approvals ────────────────────────────────────────────────────────────

function loadApprovals(threadId) {
  return attempt('Could not load pending approvals', async () => {
    const pending = await api.pendingApprovals(threadId, app.resourceId);
    if (app.threadId !== threadId) return;
    for (const p of pending) {
      app.approvals.set(p.toolCallId, { ...app.approvals.get(p.toolCallId), toolCallId: p.toolCallId, toolName: p.toolName, args: p.args });
      if (transcript.items.has(p.toolCallId)) {
        transcript.update(p.toolCallId, { status: 'waiting' });
        transcript.schedule();
      }
    }
    renderApprovals();
  });
}

function renderApprovals() {
  const before = ui.approvals.childElementCount;
  ui.approvals.replaceChildren(
    ...[...app.approvals.values()].map((a) => {
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
    await api.toolApproval(app.threadId, app.resourceId, toolCallId, approved, approved ? undefined : 'Declined in the demo page');
    app.approvals.delete(toolCallId);
    // The resumed run may have streamed the result before this answer came back: keep that.
    if (transcript.items.get(toolCallId)?.status === 'waiting') {
      transcript.update(toolCallId, { status: approved ? 'approved' : 'declined' });
      transcript.schedule();
    }
    say(approved ? 'Approved: the run resumes.' : 'Declined: the agent is told so.');
  } catch (error) {
    // Nothing waits for this answer any more (answered elsewhere: 409; gone: 404): drop the card.
    if (error instanceof ApiError && (error.code === 'CONFLICT' || error.code === 'TOOL_CALL_NOT_FOUND')) app.approvals.delete(toolCallId);
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
    const answer = queue ? await api.queueMessage(app.threadId, app.resourceId, text) : await api.sendMessage(app.threadId, app.resourceId, text);
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
    const { aborted } = await api.abort(app.threadId, app.resourceId);
    say(aborted ? 'Run stopped.' : 'Nothing was running.');
  }),
);

ui.notifyForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = new FormData(ui.notifyForm);
  await attempt('Could not notify', async () => {
    const answer = await api.notify(app.threadId, app.resourceId, {
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
    const answer = await api.state(app.threadId, app.resourceId, { id: form.get('id'), cacheKey: form.get('cacheKey'), contents: form.get('contents') });
    say(`State · ${describeDecision(answer)}`);
  });
});

ui.resourceForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const value = ui.resource.value.trim();
  if (!value) return;
  saveNow();
  app.resourceId = value;
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
    return transcript.log.map(([id, type]) => ({ id, type }));
  },
  get lastSeq() {
    return transcript.lastSeq;
  },
  get running() {
    return transcript.running;
  },
  /** Drops the EventSource by hand (only for trying things out; the tests cut the network instead). */
  dropConnection: () => app.stream?.drop(),
};

loadThreads();
