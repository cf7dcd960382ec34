// @ts-check
// The conversation as DOM. It renders what it is given: the AG-UI messages `@ag-ui/client`'s
// reducer folds the thread stream into (`agent.messages`: user, assistant, reasoning, tool and
// activity messages; a run-end message shows as a notice), the page's own notices, which messages are still
// streaming, and the state of calls that wait for an approval. It reads no events.
//
// One <article> per item (a message's text, each of its tool calls, an activity, a notice), rebuilt only
// when that item changed, so a streamed answer only grows its bubble's text.

/** The prefix of the tool through which Mastra hands work to a sub-agent (`agent-<name>`). */
const DELEGATION = 'agent-';
const isDelegation = (toolName) => toolName.startsWith(DELEGATION);

/** Parses JSON text, or returns it unchanged. */
function parseMaybe(text) {
  if (typeof text !== 'string') return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function pretty(value) {
  const parsed = parseMaybe(value);
  return typeof parsed === 'string' ? parsed : JSON.stringify(parsed, null, 2);
}

function textOf(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p && p.type === 'text' ? p.text : p && p.type ? `[${p.type}]` : '')).join(' ');
  return content == null ? '' : JSON.stringify(content);
}

/** A tool result's status: `{ declined: true }` (a declined approval), `{ error }` (a failing tool), else done. */
function resultStatus(content) {
  const result = parseMaybe(content);
  if (result && typeof result === 'object' && result.declined === true) return 'declined';
  if (result && typeof result === 'object' && 'error' in result) return 'failed';
  return 'done';
}

/** A finished call that was approved here says so (its result went through); any other keeps its result's status. */
function answeredStatus(status, approval) {
  return status === 'done' && approval === 'approved' ? 'approved' : status;
}

/**
 * What one message shows, in order.
 * @param {object} m an AG-UI message
 * @param {Map<string, string>} results tool message content by tool call id
 * @param {Map<string, string>} approvals `waiting`, `approved` or `declined` by tool call id (answered here, or said on the result)
 * @param {boolean} running whether a run is going on the thread
 */
function itemsOf(m, results, approvals, running) {
  switch (m.role) {
    case 'user':
      return [{ id: m.id, kind: 'user', text: textOf(m.content), attributes: m.metadata?.attributes }];
    case 'assistant': {
      const text = textOf(m.content);
      const calls = (m.toolCalls ?? []).map((call) => ({
        id: call.id,
        kind: 'tool',
        name: call.function.name,
        args: call.function.arguments,
        result: results.get(call.id),
        // A call with no result and no approval waiting is running only while a run is: else its run
        // was stopped or failed (live, or read back from the history in a new tab).
        status: results.has(call.id)
          ? answeredStatus(resultStatus(results.get(call.id)), approvals.get(call.id))
          : (approvals.get(call.id) ?? (running ? 'calling' : 'stopped')),
      }));
      return [...(text ? [{ id: m.id, kind: 'assistant', text }] : []), ...calls];
    }
    case 'reasoning':
      return [{ id: m.id, kind: 'reasoning', text: textOf(m.content) }];
    case 'activity':
      // How a run that did not finish ended: the bridge's run-end message, live and in history alike.
      if (m.activityType === 'run-end') return [{ id: m.id, kind: 'notice', ...runEndNotice(m.content ?? {}) }];
      return [{ id: m.id, kind: 'activity', activityType: m.activityType, content: m.content }];
    default:
      // tool results show on their call; system and developer messages are not shown
      return [];
  }
}

/** The notice a run-end message shows: "Run cancelled.", or "Run failed: <message> (<code>)". */
export function runEndNotice({ outcome, code, message }) {
  if (outcome === 'cancelled') return { tone: 'info', text: 'Run cancelled.' };
  return { tone: 'error', text: `Run failed: ${message ?? 'no reason given'}${code ? ` (${code})` : ''}` };
}

/**
 * The items to show: each message's, each notice after the message it follows (at the end when
 * that message is gone, e.g. replaced by a snapshot).
 */
export function itemsOfView({ messages, notices, streaming, approvals, running, pending = [] }) {
  const toolMessages = messages.filter((m) => m.role === 'tool');
  const results = new Map(toolMessages.map((m) => [m.toolCallId, m.content]));
  // How an approval was answered: as the bridge says on the result (in every tab, and after a
  // reload), else as answered in this tab.
  const answered = new Map([...approvals, ...toolMessages.filter((m) => m.metadata?.approval).map((m) => [m.toolCallId, m.metadata.approval])]);
  // The bridge names a delegation's sub-agent run after its call (`subagent-<toolCallId>`), made by a tool `agent-<name>`.
  const subagents = new Map(
    messages.flatMap((m) =>
      (m.toolCalls ?? []).filter((c) => isDelegation(c.function.name)).map((c) => [`subagent-${c.id}`, c.function.name.slice(DELEGATION.length)]),
    ),
  );
  const noticesAfter = new Map();
  // A notice is a line (`text`), or a workflow run's step timeline (`steps`).
  for (const { id, after, tone, text, steps } of notices) {
    const item = steps ? { id, kind: 'steps', steps: steps.map((s) => ({ ...s })) } : { id, kind: 'notice', tone, text };
    noticesAfter.set(after, [...(noticesAfter.get(after) ?? []), item]);
  }
  const items = [];
  for (const m of messages) {
    // A sub-agent's work (AG-UI's `subagentRunId`: its reasoning, calls and answer) shows under the call that delegated to it.
    const by = m.subagentRunId === undefined ? undefined : (subagents.get(m.subagentRunId) ?? 'Sub-agent');
    const own = itemsOf(m, results, answered, running);
    items.push(...(by ? own.map((item) => ({ ...item, subagent: by })) : own), ...(noticesAfter.get(m.id) ?? []));
    noticesAfter.delete(m.id);
  }
  for (const rest of noticesAfter.values()) items.push(...rest);
  // Sent or queued, not yet read by a run: last, marked, until the thread holds the message.
  const held = new Set(messages.filter((m) => m.role === 'user').map((m) => m.id));
  for (const p of pending) if (!held.has(p.id)) items.push({ id: `pending-${p.id}`, kind: 'user', text: p.text, pending: p.state });
  for (const item of items) if (streaming.has(item.id)) item.streaming = true;
  return items;
}

export class Transcript {
  /**
   * @param {HTMLElement} root
   * @param {() => { messages: object[], notices: object[], pending?: object[], streaming: Set<string>, running: boolean, approvals: Map<string, string> }} view
   *   what to show, read when it renders
   */
  constructor(root, view) {
    this.root = root;
    this.view = view;
    /** Rendered items by id: their node, and the item it shows (as JSON). */
    this.rendered = new Map();
    this.scheduled = false;
    this.renderEmpty(true);
  }

  /** Renders on the next animation frame (any number of changes in one frame render once). */
  schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => this.flush());
  }

  flush() {
    this.scheduled = false;
    const nearBottom = this.root.scrollHeight - this.root.scrollTop - this.root.clientHeight < 80;
    const items = itemsOfView(this.view());
    const ids = new Set(items.map((item) => item.id));
    for (const [id, { node }] of this.rendered) {
      if (ids.has(id)) continue;
      node.remove();
      this.rendered.delete(id);
    }
    for (const item of items) this.update(item);
    this.renderEmpty(items.length === 0);
    // Keep the DOM in item order (in the usual case, appends only).
    let cursor = this.root.firstChild;
    for (const item of items) {
      const { node } = this.rendered.get(item.id);
      if (node === cursor) cursor = cursor.nextSibling;
      else this.root.insertBefore(node, cursor);
    }
    if (nearBottom) this.root.scrollTop = this.root.scrollHeight;
  }

  /** Renders one item into its node, unless it shows that already. */
  update(item) {
    const key = JSON.stringify(item);
    let entry = this.rendered.get(item.id);
    if (entry?.key === key) return;
    if (!entry) {
      // An entry of the conversation log (role="log" on its container): an article, as a feed's are.
      const node = document.createElement('article');
      node.dataset.id = item.id;
      entry = { node };
      this.rendered.set(item.id, entry);
    }
    entry.key = key;
    const { node } = entry;
    node.className = `item ${item.kind}${item.subagent ? ' subagent' : ''}${item.streaming ? ' streaming' : ''}${item.pending ? ' pending' : ''}`;
    node.dataset.kind = item.kind;
    if (item.activityType) node.dataset.activity = item.activityType;
    if (item.status) node.dataset.status = item.status;
    render(item, node);
  }

  renderEmpty(empty) {
    const shown = this.root.querySelector(':scope > .empty');
    if (empty && !shown) {
      const note = document.createElement('div');
      note.setAttribute('role', 'note');
      note.className = 'empty';
      note.textContent = 'No messages yet. Say hello, or try one of the suggestions below.';
      this.root.prepend(note);
    } else if (!empty && shown) {
      shown.remove();
    }
  }
}

function el(tag, className, text) {
  const child = document.createElement(tag);
  if (className) child.className = className;
  if (text !== undefined) child.textContent = text;
  return child;
}

function render(item, node) {
  switch (item.kind) {
    case 'user':
    case 'assistant': {
      // Built once, then only the text changes: a screen reader hears additions, not the whole bubble again.
      if (!node.querySelector('.bubble'))
        node.replaceChildren(
          el('span', 'who', item.kind === 'user' ? `You${item.pending ? ` · ${item.pending}` : ''}` : (item.subagent ?? 'Agent')),
          el('div', 'bubble'),
        );
      const bubble = node.querySelector('.bubble');
      if (bubble.textContent !== item.text) bubble.textContent = item.text;
      const attributes =
        item.attributes && Object.keys(item.attributes).length > 0
          ? Object.entries(item.attributes)
              .map(([k, v]) => `${k}=${v}`)
              .join(' · ')
          : '';
      let meta = node.querySelector('.meta');
      if (attributes && !meta) node.append((meta = el('div', 'meta')));
      if (meta) meta.textContent = attributes;
      break;
    }
    case 'reasoning': {
      // Keep the <details> across updates so a reader's open/closed choice sticks.
      let details = node.querySelector('details');
      if (!details) {
        details = el('details', 'reasoning-box');
        details.append(el('summary'), el('p', 'reasoning-text'));
        node.replaceChildren(details);
      }
      details.querySelector('summary').textContent = item.streaming ? 'Thinking…' : 'Reasoning';
      details.querySelector('.reasoning-text').textContent = item.text;
      break;
    }
    case 'tool':
      node.replaceChildren(renderTool(item));
      break;
    case 'activity':
      node.replaceChildren(renderActivity(item));
      break;
    case 'notice':
      node.replaceChildren(el('div', `notice ${item.tone}`, item.text));
      break;
    case 'steps':
      node.replaceChildren(renderSteps(item.steps, 'Workflow steps'));
      break;
    default:
      node.textContent = JSON.stringify(item);
  }
}

/** A signal card's title: how many notifications wait, which notification, or which signal. */
function signalTitle(type, content, summary) {
  const attributes = content.attributes ?? {};
  if (summary) return `${attributes.pending ?? ''} notification${Number(attributes.pending) === 1 ? '' : 's'} waiting`.trim();
  if (type === 'notification') return `Notification · ${attributes.source ?? ''}${attributes.kind ? ` / ${attributes.kind}` : ''}`;
  return `${type[0].toUpperCase()}${type.slice(1)} signal · <${content.tagName ?? type}>`;
}

/** A notification summary's "ci: 2, github: 1" as a reader says it: "2 from ci, 1 from github". */
function fromSources(text) {
  return text.replace(/([^,:]+):\s*(\d+)/g, (_, source, count) => `${count} from ${source.trim()}`);
}

function statusLabel(status) {
  return (
    { calling: 'running', done: 'done', failed: 'failed', waiting: 'needs approval', approved: 'approved', declined: 'declined', stopped: 'stopped' }[status] ??
    status
  );
}

function renderTool(item) {
  const card = el('div', 'card');
  const head = el('div', 'card-head');
  head.append(el('span', 'icon', '⚙'), el('span', 'title', item.name), el('span', `chip status-${item.status}`, statusLabel(item.status)));
  card.append(head);
  if (item.args) card.append(el('div', 'label', 'Arguments'), el('pre', 'args', pretty(item.args)));
  // A delegation's result is the sub-agent's answer, shown under the card as the sub-agent's own
  // bubble (and summed up by the agent after it): not a third time here, unless it failed.
  const delegated = isDelegation(item.name) && item.status === 'done';
  if (item.result !== undefined && !delegated) card.append(el('div', 'label', 'Result'), el('pre', 'result', pretty(item.result)));
  return card;
}

/** A step's status, as a reader hears it. */
const STEP_LABELS = {
  running: 'running',
  done: 'done',
  success: 'done',
  waiting: 'waiting for you',
  suspended: 'waiting for you',
  answered: 'answered',
  failed: 'failed',
  cancelled: 'cancelled',
  canceled: 'cancelled',
};

/** A workflow's steps in order, each with its status: a compact timeline. */
function renderSteps(steps, label) {
  const list = el('ol', 'steps');
  list.setAttribute('aria-label', label);
  for (const step of steps) {
    const li = el('li', 'step');
    li.dataset.status = STEP_LABELS[step.status] === 'done' ? 'done' : STEP_LABELS[step.status] === 'waiting for you' ? 'waiting' : step.status;
    li.append(el('span', 'step-name', step.name), el('span', 'step-status', STEP_LABELS[step.status] ?? step.status));
    list.append(li);
  }
  return list;
}

function renderActivity(item) {
  const card = el('div', 'card activity-card');
  const head = el('div', 'card-head');
  const content = item.content ?? {};
  if (item.activityType === 'background-task') {
    head.append(
      el('span', 'icon', '↻'),
      el('span', 'title', `Background task · ${content.toolName ?? 'task'}`),
      el('span', `chip task-${content.status}`, content.status ?? 'started'),
    );
    card.append(head);
    if (content.result !== undefined) card.append(el('div', 'label', 'Result'), el('pre', 'result', pretty(content.result)));
    if (content.error !== undefined) card.append(el('div', 'label', 'Error'), el('pre', 'result', pretty(content.error)));
    return card;
  }
  if (item.activityType === 'workflow') {
    // A workflow the agent runs as a tool (`draft tea`): its steps as the run goes.
    head.append(
      el('span', 'icon', '⇉'),
      el('span', 'title', `Workflow · ${content.workflowId ?? ''}`),
      el('span', `chip workflow-${content.status}`, STEP_LABELS[content.status] ?? content.status ?? 'running'),
    );
    card.append(
      head,
      renderSteps(
        (content.steps ?? []).map((s) => ({ name: s.id, status: s.status })),
        `Steps of ${content.workflowId ?? 'the workflow'}`,
      ),
    );
    return card;
  }
  if (String(item.activityType).startsWith('signal.')) {
    const type = item.activityType.slice('signal.'.length);
    const attributes = content.attributes ?? {};
    const icon = { notification: '✉', state: '◧', reactive: '↯' }[type] ?? '•';
    // Mastra sums up notifications it held back as one signal (`notification-summary`): how many
    // wait, from which source ("ci: 2, github: 1").
    const summary = content.tagName === 'notification-summary';
    head.append(el('span', 'icon', icon), el('span', 'title', signalTitle(type, content, summary)));
    if (attributes.priority) head.append(el('span', `chip priority-${attributes.priority}`, attributes.priority));
    card.append(head, el('div', 'signal-text', summary ? fromSources(textOf(content.contents)) : textOf(content.contents)));
    const extra = Object.entries(attributes).filter(([k]) => !['source', 'kind', 'type', 'priority', 'id', 'status', 'pending'].includes(k));
    if (extra.length > 0) card.append(el('div', 'meta', extra.map(([k, v]) => `${k}=${v}`).join(' · ')));
    return card;
  }
  head.append(el('span', 'icon', '•'), el('span', 'title', item.activityType));
  card.append(head, el('pre', 'result', pretty(content)));
  return card;
}
