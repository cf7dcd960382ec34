// The conversation: a list of items (user and assistant messages, reasoning, tool calls, signal and
// background-task activities, notices) built from AG-UI events, keyed by id, rendered into an <ol>.
//
// Every event of the thread stream carries a sequence id. An event whose id is not above the last
// one applied is a replay and is skipped, so a resumed stream never doubles anything. A
// MESSAGES_SNAPSHOT (first open, or a resume the server could not replay) rebuilds the list.

const MAX_LOG = 5000;

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

/** Applies a JSON Patch (add, replace, remove) to a copy of `doc`. */
function applyPatch(doc, patch) {
  const out = structuredClone(doc ?? {});
  for (const op of patch ?? []) {
    const keys = String(op.path).split('/').slice(1).map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (keys.length === 0) continue;
    let target = out;
    for (const key of keys.slice(0, -1)) {
      if (target[key] == null || typeof target[key] !== 'object') target[key] = {};
      target = target[key];
    }
    const last = keys[keys.length - 1];
    if (op.op === 'remove') {
      if (Array.isArray(target)) target.splice(Number(last), 1);
      else delete target[last];
    } else if (op.op === 'add' || op.op === 'replace') {
      if (Array.isArray(target) && op.op === 'add') target.splice(last === '-' ? target.length : Number(last), 0, op.value);
      else target[last] = op.value;
    }
  }
  return out;
}

export class Transcript {
  /**
   * @param {HTMLOListElement} root
   * @param {object} hooks
   * @param {(running: boolean) => void} hooks.onRunning
   * @param {(interrupts: object[]) => void} hooks.onInterrupts
   * @param {(toolCallId: string) => void} hooks.onToolResult
   */
  constructor(root, hooks) {
    this.root = root;
    this.hooks = hooks;
    this.reset();
  }

  reset() {
    /** @type {Map<string, object>} */
    this.items = new Map();
    this.order = [];
    this.lastSeq = undefined;
    this.running = false;
    this.hooks.onRunning(false);
    /** Applied (id, type) pairs, for tests and devtools. */
    this.log = [];
    this.nodes = new Map();
    this.dirty = new Set();
    this.root.replaceChildren();
    this.renderEmpty();
  }

  /** The state to keep across a reload (with the id it was built up to). */
  toJSON() {
    return { lastSeq: this.lastSeq, running: this.running, order: this.order, items: [...this.items.values()] };
  }

  restore(saved) {
    this.reset();
    this.lastSeq = saved.lastSeq;
    for (const item of saved.items) this.items.set(item.id, item);
    this.order = saved.order.filter((id) => this.items.has(id));
    for (const id of this.order) this.dirty.add(id);
    this.setRunning(Boolean(saved.running));
    this.flush();
  }

  /** Applies one event of the stream; returns false for a replay it skipped. */
  apply(event, seq) {
    if (event.type !== 'MESSAGES_SNAPSHOT' && seq !== undefined && this.lastSeq !== undefined && seq <= this.lastSeq) return false;
    if (seq !== undefined) this.lastSeq = this.lastSeq === undefined ? seq : Math.max(this.lastSeq, seq);
    this.log.push([seq, event.type]);
    if (this.log.length > MAX_LOG) this.log.splice(0, this.log.length - MAX_LOG);
    this.reduce(event);
    this.schedule();
    return true;
  }

  reduce(e) {
    switch (e.type) {
      case 'RUN_STARTED':
        if (!String(e.runId).startsWith('snapshot-')) this.setRunning(true);
        break;
      case 'RUN_FINISHED':
        if (String(e.runId).startsWith('snapshot-')) break;
        this.setRunning(false);
        if (e.outcome?.type === 'interrupt') {
          const interrupts = (e.outcome.interrupts ?? []).map((i) => {
            const tool = i.toolCallId ? this.items.get(i.toolCallId) : undefined;
            if (tool) this.update(tool.id, { status: 'waiting' });
            return { toolCallId: i.toolCallId, message: i.message, toolName: tool?.name, args: parseMaybe(tool?.args) };
          });
          this.hooks.onInterrupts(interrupts);
        } else if (e.outcome?.type === 'cancelled') {
          this.add({ id: `cancelled-${e.runId}-${this.order.length}`, kind: 'notice', tone: 'info', text: 'Run cancelled.' });
        }
        this.closeStreaming();
        break;
      case 'RUN_ERROR':
        this.setRunning(false);
        this.closeStreaming();
        this.add({ id: `error-${this.order.length}-${Date.now()}`, kind: 'notice', tone: 'error', text: `Run failed: ${e.message}${e.code ? ` (${e.code})` : ''}` });
        break;
      case 'TEXT_MESSAGE_START': {
        const kind = e.role === 'user' ? 'user' : 'assistant';
        // A start for a message already shown (a resumed stream, a run replayed after a snapshot)
        // starts it over: its content follows again.
        this.upsert({ id: e.messageId, kind, text: '', streaming: true, attributes: e.metadata?.attributes });
        break;
      }
      case 'REASONING_MESSAGE_START':
        this.upsert({ id: e.messageId, kind: 'reasoning', text: '', streaming: true });
        break;
      case 'TEXT_MESSAGE_CONTENT':
      case 'REASONING_MESSAGE_CONTENT': {
        const kind = e.type === 'TEXT_MESSAGE_CONTENT' ? 'assistant' : 'reasoning';
        const item = this.items.get(e.messageId) ?? this.add({ id: e.messageId, kind, text: '', streaming: true });
        this.update(item.id, { text: item.text + e.delta });
        break;
      }
      case 'TEXT_MESSAGE_END':
      case 'REASONING_MESSAGE_END':
        if (this.items.has(e.messageId)) this.update(e.messageId, { streaming: false });
        break;
      case 'TOOL_CALL_START': {
        const existing = this.items.get(e.toolCallId);
        // A resumed run starts the paused call again without its arguments: keep them.
        if (existing) this.update(e.toolCallId, { name: e.toolCallName, pendingArgs: '', streaming: true });
        else this.add({ id: e.toolCallId, kind: 'tool', name: e.toolCallName, args: '', pendingArgs: '', status: 'calling', streaming: true });
        break;
      }
      case 'TOOL_CALL_ARGS': {
        const item = this.items.get(e.toolCallId);
        if (item) this.update(item.id, { pendingArgs: (item.pendingArgs ?? '') + e.delta });
        break;
      }
      case 'TOOL_CALL_END': {
        const item = this.items.get(e.toolCallId);
        if (item) this.update(item.id, { args: item.pendingArgs || item.args, pendingArgs: '', streaming: false });
        break;
      }
      case 'TOOL_CALL_RESULT': {
        const item = this.items.get(e.toolCallId) ?? this.add({ id: e.toolCallId, kind: 'tool', name: 'tool', args: '', status: 'calling' });
        const parsed = parseMaybe(e.content);
        this.update(item.id, { result: e.content, status: resultStatus(parsed) });
        this.hooks.onToolResult(item.id);
        break;
      }
      case 'ACTIVITY_SNAPSHOT':
        if (e.replace === false && this.items.has(e.messageId)) break;
        this.upsert({ id: e.messageId, kind: 'activity', activityType: e.activityType, content: e.content });
        break;
      case 'ACTIVITY_DELTA': {
        const item = this.items.get(e.messageId);
        if (item) this.update(item.id, { content: applyPatch(item.content, e.patch) });
        break;
      }
      case 'MESSAGES_SNAPSHOT':
        this.rebuild(e.messages ?? []);
        break;
      default:
      // STEP_*, STATE_*, CUSTOM, RAW: nothing to show
    }
  }

  /** Replaces the list with the thread's history; live-only items (background tasks) stay. */
  rebuild(messages) {
    const keep = this.order.map((id) => this.items.get(id)).filter((item) => item.kind === 'activity' && item.activityType === 'background-task');
    this.items = new Map();
    this.order = [];
    this.nodes = new Map();
    this.root.replaceChildren();
    for (const m of messages) {
      switch (m.role) {
        case 'user':
          this.add({ id: m.id, kind: 'user', text: textOf(m.content) });
          break;
        case 'assistant':
          if (textOf(m.content)) this.add({ id: m.id, kind: 'assistant', text: textOf(m.content) });
          for (const call of m.toolCalls ?? []) this.add({ id: call.id, kind: 'tool', name: call.function.name, args: call.function.arguments, status: 'calling' });
          break;
        case 'tool': {
          const tool = this.items.get(m.toolCallId);
          if (tool) this.update(tool.id, { result: m.content, status: m.error ? 'failed' : resultStatus(parseMaybe(m.content)) });
          break;
        }
        case 'reasoning':
          this.add({ id: m.id, kind: 'reasoning', text: textOf(m.content) });
          break;
        case 'activity':
          this.add({ id: m.id, kind: 'activity', activityType: m.activityType, content: m.content });
          break;
        default:
      }
    }
    for (const item of keep) if (!this.items.has(item.id)) this.add(item);
    this.renderEmpty();
  }

  // ── model helpers ───────────────────────────────────────────────────

  add(item) {
    this.items.set(item.id, item);
    this.order.push(item.id);
    this.dirty.add(item.id);
    return item;
  }

  upsert(item) {
    if (!this.items.has(item.id)) return this.add(item);
    return this.update(item.id, item);
  }

  update(id, changes) {
    const item = { ...this.items.get(id), ...changes };
    this.items.set(id, item);
    this.dirty.add(id);
    return item;
  }

  closeStreaming() {
    for (const item of this.items.values()) if (item.streaming) this.update(item.id, { streaming: false });
  }

  setRunning(running) {
    if (this.running === running) return;
    this.running = running;
    this.hooks.onRunning(running);
  }

  // ── rendering ───────────────────────────────────────────────────────

  schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => this.flush());
  }

  flush() {
    this.scheduled = false;
    const nearBottom = this.root.scrollHeight - this.root.scrollTop - this.root.clientHeight < 80;
    for (const id of this.dirty) {
      const item = this.items.get(id);
      if (!item) continue;
      let node = this.nodes.get(id);
      if (!node) {
        node = document.createElement('li');
        node.dataset.id = id;
        this.nodes.set(id, node);
      }
      node.className = `item ${item.kind}${item.streaming ? ' streaming' : ''}`;
      node.dataset.kind = item.kind;
      if (item.activityType) node.dataset.activity = item.activityType;
      if (item.status) node.dataset.status = item.status;
      this.render(item, node);
    }
    this.dirty.clear();
    this.renderEmpty();
    // Keep the DOM in model order (in the usual case, appends only).
    let cursor = this.root.firstChild;
    for (const id of this.order) {
      const node = this.nodes.get(id);
      if (!node) continue;
      if (node === cursor) cursor = cursor.nextSibling;
      else this.root.insertBefore(node, cursor);
    }
    if (nearBottom) this.root.scrollTop = this.root.scrollHeight;
  }

  renderEmpty() {
    const empty = this.root.querySelector(':scope > .empty');
    if (this.order.length === 0 && !empty) {
      const li = document.createElement('li');
      li.className = 'empty';
      li.textContent = 'No messages yet. Say hello, or try one of the suggestions below.';
      this.root.prepend(li);
    } else if (this.order.length > 0 && empty) {
      empty.remove();
    }
  }

  render(item, node) {
    const el = (tag, className, text) => {
      const child = document.createElement(tag);
      if (className) child.className = className;
      if (text !== undefined) child.textContent = text;
      return child;
    };
    switch (item.kind) {
      case 'user':
      case 'assistant': {
        // Built once, then only the text changes: a screen reader hears additions, not the whole bubble again.
        if (!node.querySelector('.bubble')) node.replaceChildren(el('span', 'who', item.kind === 'user' ? 'You' : 'Agent'), el('div', 'bubble'));
        const bubble = node.querySelector('.bubble');
        if (bubble.textContent !== item.text) bubble.textContent = item.text;
        const attributes = item.attributes && Object.keys(item.attributes).length > 0 ? Object.entries(item.attributes).map(([k, v]) => `${k}=${v}`).join(' · ') : '';
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
      case 'tool': {
        const head = el('div', 'card-head');
        head.append(el('span', 'icon', '⚙'), el('span', 'title', item.name), el('span', `chip status-${item.status}`, statusLabel(item.status)));
        const parts = [head];
        const args = item.pendingArgs || item.args;
        if (args) parts.push(el('div', 'label', 'Arguments'), el('pre', 'args', pretty(args)));
        if (item.result !== undefined) parts.push(el('div', 'label', 'Result'), el('pre', 'result', pretty(item.result)));
        node.replaceChildren(el('div', 'card', undefined));
        node.firstChild.append(...parts);
        break;
      }
      case 'activity':
        node.replaceChildren(renderActivity(item, el));
        break;
      case 'notice':
        node.replaceChildren(el('div', `notice ${item.tone}`, item.text));
        break;
      default:
        node.textContent = JSON.stringify(item);
    }
  }
}

/** A tool result's status: `{ declined: true }` (a declined approval), `{ error }` (a failing tool), else done. */
function resultStatus(result) {
  if (result && typeof result === 'object' && result.declined === true) return 'declined';
  if (result && typeof result === 'object' && 'error' in result) return 'failed';
  return 'done';
}

function statusLabel(status) {
  return { calling: 'running', done: 'done', failed: 'failed', waiting: 'needs approval', approved: 'approved', declined: 'declined' }[status] ?? status;
}

function renderActivity(item, el) {
  const card = el('div', 'card activity-card');
  const head = el('div', 'card-head');
  const content = item.content ?? {};
  if (item.activityType === 'background-task') {
    head.append(el('span', 'icon', '↻'), el('span', 'title', `Background task · ${content.toolName ?? 'task'}`), el('span', `chip task-${content.status}`, content.status ?? 'started'));
    card.append(head);
    if (content.result !== undefined) card.append(el('div', 'label', 'Result'), el('pre', 'result', pretty(content.result)));
    if (content.error !== undefined) card.append(el('div', 'label', 'Error'), el('pre', 'result', pretty(content.error)));
    return card;
  }
  if (String(item.activityType).startsWith('signal.')) {
    const type = item.activityType.slice('signal.'.length);
    const attributes = content.attributes ?? {};
    const icon = { notification: '✉', state: '◧', reactive: '↯' }[type] ?? '•';
    const title = type === 'notification' ? `Notification · ${attributes.source ?? ''}${attributes.kind ? ` / ${attributes.kind}` : ''}` : `${type[0].toUpperCase()}${type.slice(1)} signal · <${content.tagName ?? type}>`;
    head.append(el('span', 'icon', icon), el('span', 'title', title));
    if (attributes.priority) head.append(el('span', `chip priority-${attributes.priority}`, attributes.priority));
    card.append(head, el('div', 'signal-text', textOf(content.contents)));
    const extra = Object.entries(attributes).filter(([k]) => !['source', 'kind', 'type', 'priority', 'id', 'status'].includes(k));
    if (extra.length > 0) card.append(el('div', 'meta', extra.map(([k, v]) => `${k}=${v}`).join(' · ')));
    return card;
  }
  head.append(el('span', 'icon', '•'), el('span', 'title', item.activityType));
  card.append(head, el('pre', 'result', pretty(content)));
  return card;
}
