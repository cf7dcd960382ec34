// @ts-check
// The cards of what waits for the person: a tool call's approval (Approve, Decline), and a suspended
// step's form, built from its interrupt's `responseSchema`, with what the step showed first.
import { BridgeRequestError } from './client.js';
import { app, attempt, describeError, openThreadId, sayInChat, transcript, ui } from './page.js';
import { el } from './dom.js';
import { startRun } from './start-run.js';

/** @typedef {import('./page-types').Approval} Approval */
/** @typedef {import('./page-types').JsonSchema} JsonSchema */
/** @typedef {import('./page-types').Resume} Resume */

/** Interrupts of a suspended step: answered with the step's resume data, by the next `/run`. */
const SUSPENDED = new Set(['workflow_suspended', 'tool_suspended']);

/**
 * Adds or completes a waiting call (from a run's interrupt, or the pending-approvals route).
 *
 * @param {string} toolCallId
 * @param {Partial<Approval>} fields
 */
function setApproval(toolCallId, fields) {
  const known = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
  app.approvals.set(toolCallId, { state: 'waiting', ...app.approvals.get(toolCallId), toolCallId, ...known });
}

/**
 * The cards of a run that ended waiting: an approval per tool call, a form per suspended step.
 *
 * @param {import('./page-types').Interrupt[]} interrupts
 */
export function addApprovals(interrupts) {
  for (const i of interrupts) {
    // A suspended step (a workflow's, or one inside a workflow the agent runs as a tool) is answered with a form.
    if (SUSPENDED.has(i.reason))
      app.resumes.set(i.id, { id: i.id, toolCallId: i.toolCallId, message: i.message, responseSchema: i.responseSchema, metadata: i.metadata });
    else if (i.toolCallId) setApproval(i.toolCallId, { message: i.message, toolName: i.metadata?.toolName, args: i.metadata?.args });
  }
  renderApprovals();
}

/**
 * The calls waiting for an approval, also those from before this page opened (a reload, another tab).
 *
 * @param {import('./client.js').BridgeAgent} agent
 */
export function loadApprovals(agent) {
  return attempt('Could not load pending approvals', async () => {
    const pending = await app.client.pendingApprovals(agent.threadId);
    if (agent !== app.agent) return;
    for (const p of pending) setApproval(p.toolCallId, { toolName: p.toolName, args: p.args });
    renderApprovals();
  });
}

/** Shows a card per waiting call (and their state on the tool cards of the transcript). */
export function renderApprovals() {
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
  for (const text of /** @type {NodeListOf<HTMLElement>} */ (ui.approvals.querySelectorAll('.approval-text'))) {
    if (text.scrollHeight > text.clientHeight) text.tabIndex = 0;
    else text.removeAttribute('tabindex');
  }
}

/**
 * A button that calls `onClick`; `type` `submit` for a form's own buttons.
 *
 * @param {string} label
 * @param {string} className
 * @param {() => void} onClick
 * @param {'button' | 'submit'} [type]
 */
function button(label, className, onClick, type = 'button') {
  const node = el('button', className, label);
  node.type = type;
  node.addEventListener('click', onClick);
  return node;
}

/**
 * A waiting tool call's card: what it would do, Approve and Decline.
 *
 * @param {Approval} a
 */
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
    button('Approve', 'primary', () => void answerApproval(a.toolCallId, true, card)),
    button('Decline', 'secondary', () => void answerApproval(a.toolCallId, false, card)),
  );
  card.append(text, actions);
  return card;
}

/**
 * @param {string} toolCallId
 * @param {boolean} approved
 * @param {HTMLElement} card
 */
async function answerApproval(toolCallId, approved, card) {
  app.answeredCard = true;
  for (const button of card.querySelectorAll('button')) button.disabled = true;
  try {
    const { runId } = approved
      ? await app.client.approve(openThreadId(), toolCallId)
      : await app.client.decline(openThreadId(), toolCallId, { reason: 'Declined in the demo page' });
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

/**
 * A form for a suspended step, generated from its interrupt's `responseSchema`: a text, number or
 * choice field per property, a checkbox per optional yes/no; a required yes/no (`approved`)
 * becomes the Approve and Decline buttons. What the step showed (`suspendPayload`) comes first.
 *
 * @param {Resume} resume
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
  const choice = (/** @type {string} */ label, /** @type {string} */ className, /** @type {Record<string, boolean>} */ payload) =>
    button(label, className, () => (card.dataset.decision = JSON.stringify(payload)), 'submit');
  if (decision) actions.append(choice('Approve', 'primary', { [decision]: true }), choice('Decline', 'secondary', { [decision]: false }));
  else actions.append(choice('Submit', 'primary', {}));
  const error = el('p', 'card-error', resume.error ?? '');
  error.setAttribute('role', 'alert');
  card.append(text, actions, error);
  card.addEventListener('submit', (event) => {
    event.preventDefault();
    void answerResume(resume, { ...formValues(card, properties), ...JSON.parse(card.dataset.decision ?? '{}') }, card);
  });
  return card;
}

/**
 * A labelled field for one property of the answer: a choice, a checkbox, a number or a text.
 *
 * @param {string} interruptId
 * @param {string} key
 * @param {JsonSchema} property
 * @param {boolean} required
 */
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

/**
 * The form's values, typed as the schema says; an empty optional field is left out.
 *
 * @param {HTMLFormElement} card
 * @param {Array<[string, JsonSchema]>} properties
 */
function formValues(card, properties) {
  /** @type {Record<string, unknown>} */
  const values = {};
  for (const [key, property] of properties) {
    // An <input>, or a <select> (read by its `value` alike).
    const input = /** @type {HTMLInputElement | null} */ (card.elements.namedItem(key));
    if (!input) continue;
    if (property.type === 'boolean') values[key] = input.checked;
    else if (input.value === '') continue;
    else values[key] = property.type === 'number' || property.type === 'integer' ? Number(input.value) : input.value;
  }
  return values;
}

/**
 * Answers a suspended step: the next `/run` of the workflow resumes it. A refusal is said on the card.
 *
 * @param {Resume} resume
 * @param {Record<string, unknown>} payload
 * @param {HTMLFormElement} card
 */
async function answerResume(resume, payload, card) {
  app.answeredCard = true;
  for (const control of /** @type {NodeListOf<HTMLButtonElement | HTMLInputElement | HTMLSelectElement>} */ (card.querySelectorAll('button, input, select')))
    control.disabled = true;
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
