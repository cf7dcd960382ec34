// @ts-check
// The demo page: pick an agent or a workflow, pick or create a thread, follow it live, talk to
// the agent or run the workflow, answer approvals and suspended steps, push notifications and
// state signals. Plain ES modules with no build step of their own: the
// client is `mastra-agui-bridge/client` as one browser bundle (`/ui/client.js`, with
// `@ag-ui/client` and `rxjs` inside).
//
// A `BridgeAgent` follows the open thread (`connectAgent()`): `@ag-ui/client`'s reducer folds the
// thread's events into `agent.messages`, which the transcript renders. A `BridgeClient` makes the
// REST and signal calls.
import { loadApprovals } from './cards.js';
import { describeDecision, lastingOf } from './decisions.js';
import { follow } from './follow.js';
import { textFields } from './form-fields.js';
import { $, app, attempt, auth, describeError, isWorkflow, openThreadId, say, sayInChat, setResource, store, transcript, ui } from './page.js';
import { schedulesPanel } from './schedules.js';
import { startRun } from './start-run.js';
import { NEW_TITLE, threadNames, titleFrom } from './thread-names.js';
import { askForToken, signedIn, tokenRefused, tokenResource, useToken } from './token.js';

/** @typedef {import('./client.js').ThreadInfo} ThreadInfo */

// ── agents and workflows ─────────────────────────────────────────────────

/** Fills the picker from `GET /agents`: `?agent=` first, else this tab's last pick, else the default agent. */
async function loadAgents() {
  /** @type {import('./client.js').AgentInfo[]} */
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

/**
 * Talks to `agent` from now on: the controls it has, the client that names it.
 *
 * @param {import('./page-types').App['target']} agent
 */
function target(agent) {
  app.target = agent && { id: agent.id, kind: agent.kind };
  setResource(app.resourceId);
  const workflow = isWorkflow();
  for (const node of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('[data-kind]')))
    node.hidden = node.dataset.kind !== (workflow ? 'workflow' : 'agent');
  ui.message.placeholder = workflow ? 'A topic for the workflow… (Enter runs it)' : 'Message the agent… (Enter sends, Shift+Enter for a new line)';
  ui.stateHelp.textContent = workflow
    ? "The workflow run's state, as AG-UI state: it changes step by step."
    : "The agent's working memory, as AG-UI state. Try remember tea, no sugar.";
}

ui.picker.addEventListener('change', () => {
  const option = ui.picker.selectedOptions[0];
  if (!option) return;
  store.set('agent', option.value);
  target({ id: option.value, kind: option.dataset.kind === 'workflow' ? 'workflow' : 'agent' });
  // The same thread, followed as the picked agent's or workflow's.
  if (app.thread) void openThread(app.thread);
});

// ── threads ──────────────────────────────────────────────────────────────

/**
 * Lists the resource's threads and opens one: `selectId`, else the one this tab had open, else the
 * latest; with none, a new one.
 *
 * @param {string} [selectId]
 */
async function loadThreads(selectId) {
  ui.resource.value = app.resourceId;
  /** @type {ThreadInfo[]} */
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

/** @param {ThreadInfo[]} threads */
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

/**
 * Names a new thread after its first message (or a workflow's first input), here and in the other tabs.
 *
 * @param {string} text
 */
async function nameAfter(text) {
  if (app.thread?.title !== NEW_TITLE) return;
  const { id: threadId } = app.thread;
  const title = titleFrom(text);
  try {
    app.thread = await app.client.updateThread(threadId, { title });
    ui.title.textContent = title;
    renderThreads(await app.client.listThreads({ limit: 50 }));
    names.renamed({ resourceId: app.resourceId, threadId, title });
  } catch (error) {
    // A name is a nicety: the thread keeps "New chat", and the conversation goes on.
    console.warn('could not name the thread', error);
  }
}

/**
 * A thread renamed elsewhere (another tab, or while this one was in the background): its new name here.
 *
 * @param {import('./thread-names.js').Renamed} renamed
 */
function showTitle({ resourceId, threadId, title }) {
  if (resourceId !== app.resourceId) return;
  for (const button of /** @type {NodeListOf<HTMLButtonElement>} */ (ui.threads.querySelectorAll('button.thread'))) {
    const shown = button.querySelector('.thread-title');
    if (button.dataset.id === threadId && shown) shown.textContent = title || threadId;
  }
  if (!app.thread || threadId !== app.thread.id) return;
  app.thread = { ...app.thread, title };
  ui.title.textContent = title || threadId;
}

const names = threadNames(showTitle);

/** The list read again when the tab comes back to the front: names given meanwhile, by any client. */
async function refreshNames() {
  if (document.visibilityState !== 'visible' || !app.client || !app.threadId) return;
  try {
    const threads = await app.client.listThreads({ limit: 50 });
    renderThreads(threads);
    const open = threads.find((t) => t.id === app.threadId);
    if (open) showTitle({ resourceId: app.resourceId, threadId: open.id, title: open.title ?? '' });
  } catch {
    // the list stays as it was; the next look tries again
  }
}
document.addEventListener('visibilitychange', () => void refreshNames());

/** @param {ThreadInfo} thread */
async function openThread(thread) {
  app.agent?.disconnect();
  app.pending = [];
  app.thread = thread;
  app.threadId = thread.id;
  store.set('thread', { ...store.get('thread'), [app.resourceId]: thread.id });
  for (const button of /** @type {NodeListOf<HTMLButtonElement>} */ (ui.threads.querySelectorAll('button.thread')))
    button.setAttribute('aria-pressed', String(button.dataset.id === thread.id));
  ui.title.textContent = thread.title || thread.id;
  ui.meta.textContent = `${thread.id} · resource ${app.resourceId}`;
  await Promise.all([loadApprovals(follow(thread.id, () => void schedules.refresh())), schedules.refresh()]);
}

// ── composer and panels ──────────────────────────────────────────────────

/**
 * Sends what the composer holds: a message now (or `queue`d for the next turn), or a workflow's input.
 *
 * @param {boolean} queue
 */
async function submitMessage(queue) {
  const text = ui.message.value.trim();
  if (!text || !app.threadId) return;
  ui.send.disabled = ui.queue.disabled = true;
  try {
    if (isWorkflow()) {
      const runId = await startRun({ messages: [{ id: crypto.randomUUID(), role: 'user', content: text }] });
      ui.message.value = '';
      sayInChat(`Started ${app.target?.id}.`, 'info', { until: 'run-end', runId });
      return void nameAfter(text);
    }
    const answer = queue ? await app.client.queueMessage(app.threadId, text) : await app.client.sendMessage(app.threadId, text);
    ui.message.value = '';
    sayDecision(answer, queue ? 'queued' : 'message', ui.composerStatus);
    // A message the agent has yet to read (it answers something else now) shows at once, marked.
    /** @type {Record<string, string | undefined>} */
    const held = { deliver: queue ? 'queued' : 'sent, read at the next step', persist: 'saved for the next turn' };
    const waiting = held[answer.action];
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
  void submitMessage(false);
});
ui.queue.addEventListener('click', () => void submitMessage(true));
ui.message.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    void submitMessage(false);
  }
});
for (const chip of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('[data-try]'))) {
  chip.addEventListener('click', () => {
    ui.message.value = chip.dataset.try ?? '';
    ui.message.focus();
  });
}

ui.stop.addEventListener(
  'click',
  () =>
    void attempt(
      'Could not stop',
      async () => {
        const { aborted } = await app.client.abort(openThreadId());
        sayInChat(aborted ? 'Run stopped.' : 'Nothing was running.');
      },
      ui.composerStatus,
    ),
);

/**
 * What Mastra decided on a message or a signal, said in `where` for as long as it is true.
 *
 * @param {import('./decisions.js').Answer} answer
 * @param {Parameters<typeof describeDecision>[1]} what
 * @param {HTMLElement} [where]
 */
const sayDecision = (answer, what, where = ui.status) => say(describeDecision(answer, what), 'info', where, lastingOf(answer));

ui.notifyForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const field = textFields(ui.notifyForm);
  void attempt('Could not notify', async () => {
    const answer = await app.client.notify(openThreadId(), {
      source: field('source'),
      kind: field('kind'),
      summary: field('summary'),
      priority: /** @type {'low' | 'medium' | 'high' | 'urgent'} */ (field('priority')),
    });
    sayDecision(answer, 'notification');
  });
});

ui.stateForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const field = textFields(ui.stateForm);
  void attempt('Could not send state', async () => {
    const answer = await app.client.state(openThreadId(), { id: field('id'), cacheKey: field('cacheKey'), contents: field('contents') });
    sayDecision(answer, 'state');
  });
});

const schedules = schedulesPanel(
  {
    form: $('#schedule-form', HTMLFormElement),
    when: $('#schedule-when', HTMLSelectElement),
    cronRow: $('#schedule-cron-row', HTMLDivElement),
    cron: $('#schedule-cron', HTMLInputElement),
    timezone: $('#schedule-timezone', HTMLSelectElement),
    list: $('#schedules', HTMLUListElement),
  },
  { client: () => app.client, threadId: () => app.threadId, attempt, say },
);

ui.resourceForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const value = ui.resource.value.trim();
  if (!value) return;
  setResource(value);
  store.set('resource', value);
  void loadThreads();
});
ui.newThread.addEventListener('click', () => void createThread());

/**
 * Narrow screens: which view shows, the chat or the threads and panels (the tab bar).
 *
 * @param {string | undefined} view
 */
function showView(view) {
  $('.layout', HTMLElement).dataset.view = view;
  for (const tab of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('.tabbar button')))
    tab.setAttribute('aria-pressed', String(tab.dataset.view === view));
}
for (const tab of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('.tabbar button')))
  tab.addEventListener('click', () => showView(tab.dataset.view));

// For devtools and the browser tests: read-only views of what the page holds.
/** @type {any} */ (window).bridgeDemo = {
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

/**
 * Signs in with the token given in the form; refused, the token is gone and the form says why,
 * accepted, the line no longer asks for one.
 *
 * @param {string} token
 */
async function signIn(token) {
  useToken(token);
  if (await loadAgents()) await loadThreads();
  if (app.token) say(`Signed in as ${app.resourceId}.`, 'ok');
}

ui.tokenForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const token = ui.token.value.trim();
  if (token) void signIn(token);
});

if (auth && !app.token) askForToken('This server requires an access token: enter yours to load your threads.', 'info');
else {
  if (app.token) signedIn(true, tokenResource(app.token) !== undefined);
  void loadAgents().then((listed) => (listed ? loadThreads() : undefined));
}
