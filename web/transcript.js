// @ts-check
// The conversation as DOM. It renders the items transcript-items.js makes of what it is given (the
// thread's AG-UI messages, the page's own notices, what is streaming or waiting). It reads no events.
//
// One <article> per item (a message's text, each of its tool calls, an activity, a notice), rebuilt only
// when that item changed, so a streamed answer only grows its bubble's text.

import { el } from './dom.js';
import { isDelegation, itemsOfView, pretty, textOf } from './transcript-items.js';

/** @typedef {import('./page-types').Item} Item */
/** @typedef {import('./page-types').View} View */

export class Transcript {
  /**
   * @param {HTMLElement} root
   * @param {() => View} view what to show, read when it renders
   */
  constructor(root, view) {
    this.root = root;
    this.view = view;
    /** @type {Map<string, { node: HTMLElement, key?: string }>} rendered items by id: their node, and the item it shows (as JSON) */
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
      const node = /** @type {HTMLElement} */ (this.rendered.get(item.id)?.node);
      if (node === cursor) cursor = node.nextSibling;
      else this.root.insertBefore(node, cursor);
    }
    if (nearBottom) this.root.scrollTop = this.root.scrollHeight;
  }

  /**
   * Renders one item into its node, unless it shows that already.
   *
   * @param {Item} item
   */
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

  /** @param {boolean} empty */
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

/**
 * @param {Item} item
 * @param {HTMLElement} node
 */
function render(item, node) {
  switch (item.kind) {
    case 'user':
    case 'assistant': {
      // Built once, then only the text changes: a screen reader hears additions, not the whole bubble again.
      let bubble = node.querySelector('.bubble');
      if (!bubble) {
        bubble = el('div', 'bubble');
        node.replaceChildren(el('span', 'who', item.kind === 'user' ? `You${item.pending ? ` · ${item.pending}` : ''}` : (item.subagent ?? 'Agent')), bubble);
      }
      const text = item.text ?? '';
      if (bubble.textContent !== text) bubble.textContent = text;
      const attributes =
        item.attributes && Object.keys(item.attributes).length > 0
          ? Object.entries(item.attributes)
              .map(([k, v]) => `${k}=${String(v)}`)
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
      const [summary, text] = details.children;
      summary.textContent = item.streaming ? 'Thinking…' : 'Reasoning';
      text.textContent = item.text ?? '';
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

/**
 * A signal card's title: how many notifications wait, which notification, or which signal.
 *
 * @param {string} type
 * @param {Record<string, any>} content
 * @param {boolean} summary
 */
function signalTitle(type, content, summary) {
  const attributes = content.attributes ?? {};
  if (summary) return `${attributes.pending ?? ''} notification${Number(attributes.pending) === 1 ? '' : 's'} waiting`.trim();
  if (type === 'notification') return `Notification · ${attributes.source ?? ''}${attributes.kind ? ` / ${attributes.kind}` : ''}`;
  return `${type[0].toUpperCase()}${type.slice(1)} signal · <${content.tagName ?? type}>`;
}

/**
 * A notification summary's "ci: 2, github: 1" as a reader says it: "2 from ci, 1 from github".
 *
 * @param {string} text
 */
function fromSources(text) {
  return text.replace(/([^,:]+):\s*(\d+)/g, (_, /** @type {string} */ source, /** @type {string} */ count) => `${count} from ${source.trim()}`);
}

/** @param {string} status */
function statusLabel(status) {
  return (
    /** @type {Record<string, string | undefined>} */ ({
      calling: 'running',
      done: 'done',
      failed: 'failed',
      waiting: 'needs approval',
      approved: 'approved',
      declined: 'declined',
      stopped: 'stopped',
    })[status] ?? status
  );
}

/** @param {Extract<Item, { kind: 'tool' }>} item */
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

/** @type {Record<string, string | undefined>} a step's status, as a reader hears it */
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

/**
 * A workflow's steps in order, each with its status: a compact timeline.
 *
 * @param {import('./page-types').Step[]} steps
 * @param {string} label
 */
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

/** @param {Extract<Item, { kind: 'activity' }>} item */
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
        (content.steps ?? []).map((/** @type {{ id: string, status: string }} */ s) => ({ name: s.id, status: s.status })),
        `Steps of ${content.workflowId ?? 'the workflow'}`,
      ),
    );
    return card;
  }
  if (item.activityType.startsWith('signal.')) {
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
