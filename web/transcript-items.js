// @ts-check
// What the transcript shows, without the DOM: the items of the AG-UI messages `@ag-ui/client`'s
// reducer folds the thread stream into (user, assistant, reasoning, tool and activity messages; a
// run-end message shows as a notice), the page's own notices, the messages still streaming or not
// yet read by a run, and the state of calls that wait for an approval. transcript.js renders them.

/** @typedef {import('./page-types').Item} Item */
/** @typedef {import('./page-types').Message} Message */
/** @typedef {import('./page-types').RunEnd} RunEnd */
/** @typedef {import('./page-types').Tone} Tone */
/** @typedef {import('./page-types').View} View */

/** The prefix of the tool through which Mastra hands work to a sub-agent (`agent-<name>`). */
const DELEGATION = 'agent-';
/** @param {string} toolName */
export const isDelegation = (toolName) => toolName.startsWith(DELEGATION);

/**
 * Parses JSON text, or returns it unchanged.
 *
 * @param {unknown} text
 * @returns {any}
 */
function parseMaybe(text) {
  if (typeof text !== 'string') return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** @param {unknown} value */
export function pretty(value) {
  const parsed = parseMaybe(value);
  return typeof parsed === 'string' ? parsed : JSON.stringify(parsed, null, 2);
}

/** @param {unknown} content */
export function textOf(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((/** @type {{ type?: string, text?: string } | null} */ p) => (p && p.type === 'text' ? p.text : p && p.type ? `[${p.type}]` : ''))
      .join(' ');
  return content == null ? '' : JSON.stringify(content);
}

/**
 * A tool result's status: `{ declined: true }` (a declined approval), `{ error }` (a failing tool), else done.
 *
 * @param {unknown} content
 */
function resultStatus(content) {
  const result = parseMaybe(content);
  if (result && typeof result === 'object' && result.declined === true) return 'declined';
  if (result && typeof result === 'object' && 'error' in result) return 'failed';
  return 'done';
}

/**
 * A finished call that was approved here says so (its result went through); any other keeps its result's status.
 *
 * @param {string} status
 * @param {string | undefined} approval
 */
function answeredStatus(status, approval) {
  return status === 'done' && approval === 'approved' ? 'approved' : status;
}

/**
 * What one message shows, in order.
 * @param {Message} m an AG-UI message
 * @param {Map<string, unknown>} results tool message content by tool call id
 * @param {Map<string, string>} approvals `waiting`, `approved` or `declined` by tool call id (answered here, or said on the result)
 * @param {boolean} running whether a run is going on the thread
 * @returns {Item[]}
 */
function itemsOf(m, results, approvals, running) {
  switch (m.role) {
    case 'user':
      return [{ id: m.id, kind: 'user', text: textOf(m.content), attributes: m.metadata?.attributes }];
    case 'assistant': {
      const text = textOf(m.content);
      const calls = (m.toolCalls ?? []).map(
        (call) =>
          /** @type {Item} */ ({
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
          }),
      );
      return text ? [{ id: m.id, kind: 'assistant', text }, ...calls] : calls;
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

/**
 * The notice a run-end message shows: "Run cancelled.", or "Run failed: <message> (<code>)".
 *
 * @param {RunEnd} end
 * @returns {{ tone: Tone, text: string }}
 */
export function runEndNotice({ outcome, code, message }) {
  if (outcome === 'cancelled') return { tone: 'info', text: 'Run cancelled.' };
  return { tone: 'error', text: `Run failed: ${message ?? 'no reason given'}${code ? ` (${code})` : ''}` };
}

/**
 * The items to show: each message's, each notice after the message it follows (at the end when
 * that message is gone, e.g. replaced by a snapshot).
 *
 * @param {View} view
 * @returns {Item[]}
 */
export function itemsOfView({ messages, notices, streaming, approvals, running, pending = [] }) {
  const toolMessages = messages.filter((m) => m.role === 'tool');
  const results = new Map(toolMessages.map((m) => [m.toolCallId, m.content]));
  // How an approval was answered: as the bridge says on the result (in every tab, and after a
  // reload), else as answered in this tab.
  const answered = new Map(approvals);
  for (const m of toolMessages) if (typeof m.metadata?.approval === 'string') answered.set(m.toolCallId, m.metadata.approval);
  // The bridge names a delegation's sub-agent run after its call (`subagent-<toolCallId>`), made by a tool `agent-<name>`.
  const subagents = new Map(
    messages.flatMap((m) =>
      m.role === 'assistant'
        ? (m.toolCalls ?? []).filter((c) => isDelegation(c.function.name)).map((c) => [`subagent-${c.id}`, c.function.name.slice(DELEGATION.length)])
        : [],
    ),
  );
  /** @type {Map<string | undefined, Item[]>} */
  const noticesAfter = new Map();
  // A notice is a line (`text`), or a workflow run's step timeline (`steps`).
  for (const { id, after, tone, text, steps } of notices) {
    /** @type {Item} */
    const item = steps ? { id, kind: 'steps', steps: steps.map((s) => ({ ...s })) } : { id, kind: 'notice', tone, text };
    noticesAfter.set(after, [...(noticesAfter.get(after) ?? []), item]);
  }
  /** @type {Item[]} */
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
