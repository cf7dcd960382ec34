// @ts-check
// What the page's modules share: its settings (the bridge's prefix, whether it needs a token), its
// elements (`ui`), what it holds (`app`, `store`: the tab's sessionStorage), the transcript, and
// the status lines that say what an action did.
import { BridgeClient, BridgeRequestError } from './client.js';
import { writeLine } from './status-lines.js';
import { Transcript } from './transcript.js';

/** @typedef {import('./page-types').Tone} Tone */
/** @typedef {import('./status-lines.js').Lasting} Lasting */

/** @param {string} name */
const meta = (name) => /** @type {HTMLMetaElement | null} */ (document.querySelector(`meta[name="${name}"]`))?.content;
const prefix = meta('agui-prefix') ?? '/agui';
export const baseUrl = prefix.startsWith('%') ? '/agui' : prefix;
/** `bearer:<claim>` when the server requires a token whose `<claim>` names the resource, else `none`. */
const authMeta = meta('agui-auth') ?? 'none';
export const auth = authMeta.startsWith('bearer') ? { claim: authMeta.split(':')[1] || 'sub' } : undefined;
/** Caps of the page's own lists (the log for devtools, the notices of a thread). */
export const MAX_LOG = 5000;
export const MAX_NOTICES = 200;
/**
 * One of the page's own elements, as index.html has it, and of the kind it is (one missing or of
 * another kind is a fault of the page, said at once rather than as a `null` somewhere later).
 *
 * @example
 * const form = $('#composer', HTMLFormElement);
 *
 * @template {HTMLElement} E
 * @param {string} selector
 * @param {{ new (): E, name: string }} kind
 * @returns {E}
 */
export function $(selector, kind) {
  const node = document.querySelector(selector);
  if (!(node instanceof kind)) throw new Error(`The page has no ${kind.name} ${selector}`);
  return node;
}

export const ui = {
  tokenForm: $('#token-form', HTMLFormElement),
  token: $('#token', HTMLInputElement),
  resourceForm: $('#resource-form', HTMLFormElement),
  resource: $('#resource', HTMLInputElement),
  resourceApply: $('#resource-form button', HTMLButtonElement),
  threads: $('#threads', HTMLUListElement),
  newThread: $('#new-thread', HTMLButtonElement),
  title: $('#thread-title', HTMLHeadingElement),
  meta: $('#thread-meta', HTMLParagraphElement),
  connection: $('#connection', HTMLSpanElement),
  transcript: $('#transcript', HTMLDivElement),
  approvals: $('#approvals', HTMLElement),
  composer: $('#composer', HTMLFormElement),
  message: $('#message', HTMLTextAreaElement),
  send: $('#send', HTMLButtonElement),
  queue: $('#queue', HTMLButtonElement),
  stop: $('#stop', HTMLButtonElement),
  working: $('#working', HTMLDivElement),
  notifyForm: $('#notify-form', HTMLFormElement),
  stateForm: $('#state-form', HTMLFormElement),
  agentState: $('#agent-state', HTMLPreElement),
  stateHelp: $('#state-help', HTMLParagraphElement),
  picker: $('#agent', HTMLSelectElement),
  status: $('#action-status', HTMLParagraphElement),
  composerStatus: $('#composer-status', HTMLParagraphElement),
  tokenStatus: $('#token-status', HTMLParagraphElement),
};

export const store = {
  /** @param {string} key */
  get: (key) => {
    try {
      return JSON.parse(sessionStorage.getItem(`bridge-demo:${key}`) ?? 'null');
    } catch {
      return null;
    }
  },
  /**
   * @param {string} key
   * @param {unknown} value
   */
  set: (key, value) => {
    try {
      sessionStorage.setItem(`bridge-demo:${key}`, JSON.stringify(value));
    } catch {
      // storage full or disabled: the page still works, a reload just starts from a snapshot
    }
  },
};

// `?resource=` picks the resource (a link to someone's threads), else the one this tab used last.
/** @type {string} */
const firstResource = new URLSearchParams(location.search).get('resource') || store.get('resource') || 'demo-user';
/** @type {string | undefined} */
const firstToken = auth ? (store.get('token') ?? undefined) : undefined;

/** The `Authorization` header of a bearer `token`, if there is one. */
const bearer = (/** @type {string | undefined} */ token) => (token ? { Authorization: `Bearer ${token}` } : undefined);

/** @type {import('./page-types').App} */
export const app = {
  resourceId: firstResource,
  /** The bearer token this tab uses when the server requires one (sessionStorage: gone with the tab). */
  token: firstToken,
  /** The REST and signal calls, as `resourceId` to `target` (`setResource` makes a new one). */
  client: new BridgeClient({ baseUrl, resourceId: firstResource, headers: bearer(firstToken) }),
  /** What the page talks to: `{ id, kind }` of `GET /agents` (`kind`: `agent` or `workflow`). */
  target: undefined,
  threadId: undefined,
  /** The open thread (`ThreadInfo`), to follow it again under another agent or workflow. */
  thread: undefined,
  /** @type {import('./client.js').BridgeAgent | undefined} follows the open thread; `agent.messages` is the transcript */
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

export const transcript = new Transcript(ui.transcript, () => ({
  messages: app.agent?.messages ?? [],
  notices: app.notices,
  pending: app.pending,
  streaming: app.streaming,
  running: app.running,
  approvals: new Map(
    /** @type {Array<[string, string]>} */ ([
      ...[...app.approvals].map(([id, a]) => [id, a.state]),
      ...[...app.resumes.values()].filter((r) => r.toolCallId).map((r) => [r.toolCallId, 'waiting']),
    ]),
  ),
}));

/**
 * Acts as `resourceId` from now on: the client that calls the bridge names it.
 *
 * @param {string} resourceId
 */
export function setResource(resourceId) {
  app.resourceId = resourceId;
  app.client = new BridgeClient({ baseUrl, resourceId, agentId: app.target?.id, headers: authHeaders() });
}

/** The open thread's id: what acts on a thread is offered only while one is open. */
export function openThreadId() {
  if (app.threadId === undefined) throw new Error('No thread is open.');
  return app.threadId;
}

export const isWorkflow = () => app.target?.kind === 'workflow';

export const authHeaders = () => bearer(app.token);

/**
 * Says what happened where it happened: `where` is the status line beside the action (the
 * composer's for messages, approvals and steps; the token form's; the side panel's by default).
 * `lasting`: how long the line is true (status-lines.js).
 *
 * @param {string} text
 * @param {Tone} [tone]
 * @param {HTMLElement} [where]
 * @param {Lasting} [lasting]
 */
export function say(text, tone = 'info', where = ui.status, lasting = undefined) {
  writeLine(where, text, tone, lasting);
}

/**
 * Says it beside the composer (messages, runs, approvals and steps: the chat's own actions).
 *
 * @param {string} text
 * @param {Tone} [tone]
 * @param {Lasting} [lasting]
 */
export const sayInChat = (text, tone, lasting) => say(text, tone, ui.composerStatus, lasting);

/** @type {HTMLElement[]} the lines a run's start or end can make untrue */
export const runLines = [ui.status, ui.composerStatus];

/**
 * A failure as a line says it: its message, and the bridge's details of a refused input.
 *
 * @param {unknown} error
 */
export function describeError(error) {
  const details = error instanceof BridgeRequestError ? error.details?.map((d) => `${d.path}: ${d.message}`).join('; ') : undefined;
  const message = error && typeof error === 'object' && 'message' in error ? error.message : error;
  return `${String(message ?? error)}${details ? ` (${details})` : ''}`;
}

/**
 * Runs a page action; a failure is said as `<failure>: <reason>`, in `where` (the side panel's line by default).
 *
 * @template T
 * @param {string} failure
 * @param {() => Promise<T>} action
 * @param {HTMLElement} [where]
 * @returns {Promise<T | undefined>}
 */
export async function attempt(failure, action, where = ui.status) {
  try {
    return await action();
  } catch (error) {
    say(`${failure}: ${describeError(error)}`, 'error', where);
  }
}
