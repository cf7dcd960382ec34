/**
 * Pure translation of stored Mastra messages into AG-UI history (no I/O, no state): the messages a
 * client shows after a reload, which must equal what `@ag-ui/client`'s reducer built from the live
 * stream (same ids, roles, order, content and tool calls). The live translators number a response
 * through the same `MessageNumbering`, so both sides split it the same way. `toAguiMessages` serves
 * `GET …/messages?format=agui` and `MESSAGES_SNAPSHOT`; `appendPosition` says where a run that
 * Mastra appends to a stored message goes on numbering.
 */
import type { ContentPart, Message, PartSource, ToolCall } from '@ag-ui/core';
import type { MastraDBMessage } from '@mastra/core/agent/message-list';
import { delegatedAgent } from './delegations.js';
import { WORKFLOW_ACTIVITY, workflowActivityId, type WorkflowActivityContent } from './workflow-activity.js';
import { placeRunEnds, type StoredRunEnd } from './run-end.js';
import {
  backgroundTaskId,
  MessageNumbering,
  subagentCallsId,
  subagentReasoningId,
  subagentRunId,
  subagentTextId,
  toolResultMessageId,
  type MessagePosition,
} from './ids.js';
import { declinedContent, toolErrorContent, toolResultContent } from './values.js';
import { errorMessage } from '../text.js';
import type { ThreadTarget } from '../mastra/index.js';

type StoredPart = MastraDBMessage['content']['parts'][number];
type ToolInvocation = Extract<StoredPart, { type: 'tool-invocation' }>['toolInvocation'];

/** Signal metadata as Mastra stores it on `role: 'signal'` rows (`content.metadata.signal`). */
type StoredSignal = { id?: string; type?: string; tagName?: string; attributes?: Record<string, unknown> };

/** A background task as the history needs it (Mastra's `BackgroundTask`, narrowed). */
export interface StoredBackgroundTask {
  id: string;
  toolCallId: string;
  toolName: string;
  status: string;
  result?: unknown;
  error?: { message: string };
}

/** Ids clients gave their own tool messages, by tool call id (Mastra keeps none). */
export type ToolMessageIds = Readonly<Record<string, string>>;

/** What the bridge keeps beside Mastra's rows to show them as the live stream did. */
export interface HistoryContext {
  /** Clients' own tool message ids (`return` mode): Mastra folds each into its call, with no id. */
  toolMessageIds?: ToolMessageIds;
  /** The thread's background tasks: the live stream showed each as an `activity` message. */
  backgroundTasks?: readonly StoredBackgroundTask[];
  /** Each sub-agent's own thread rows, by delegation call id: the live stream showed its work. */
  subagents?: ReadonlyMap<string, MastraDBMessage[]>;
  /** The activity each workflow tool call showed last (`WorkflowActivities`), by tool call id. */
  workflowActivities?: Readonly<Record<string, WorkflowActivityContent>>;
  /** How the thread's runs that did not finish as asked ended (`StoredRunEnd`), by run-end message id: the live stream showed each before its end. */
  runEnds?: Readonly<Record<string, StoredRunEnd>>;
}

/**
 * The sub-agent threads the stored rows' delegations name (`{ subAgentThreadId, subAgentResourceId }`
 * in the result), by the delegation's tool call id: what the caller loads for `HistoryContext.subagents`.
 */
export function subagentThreads(stored: MastraDBMessage[]): Map<string, ThreadTarget> {
  const threads = new Map<string, ThreadTarget>();
  for (const row of stored) {
    for (const part of row.role === 'assistant' ? row.content.parts : []) {
      if (part.type !== 'tool-invocation' || delegatedAgent(part.toolInvocation.toolName) === undefined) continue;
      const result = (part.toolInvocation as { result?: { subAgentThreadId?: unknown; subAgentResourceId?: unknown } }).result;
      if (typeof result?.subAgentThreadId === 'string' && typeof result.subAgentResourceId === 'string') {
        threads.set(part.toolInvocation.toolCallId, { threadId: result.subAgentThreadId, resourceId: result.subAgentResourceId });
      }
    }
  }
  return threads;
}

/**
 * Converts stored Mastra messages (e.g. `memory.recall({ …, hideSignals: [] }).messages`) into
 * AG-UI messages for a `MESSAGES_SNAPSHOT`.
 *
 * - user → user (string content; `ContentPart[]` when the row has files). system → system.
 * - assistant: one message per text part and one reasoning message per reasoning part, numbered by
 *   `MessageNumbering` (a new segment, `<id>-<n>`, starts where text follows a tool call). Tool
 *   calls sit on their segment's first text message; each finished call's `tool` message
 *   (`tool-result-<toolCallId>`, or the id the client gave it) follows that message, as the
 *   reducer places it; a background task's `activity` message (`background-task-<taskId>`) closes
 *   its segment.
 * - signal rows: type `user` → user message; other types → `activity` message with
 *   `activityType: 'signal.<type>'` and `content: { tagName, contents, attributes }`.
 * - a run that was cancelled or failed: its run-end `activity` message (`runEndActivity`), after the
 *   input it answered and its answer (`HistoryContext.runEnds`, `placeRunEnds`).
 * - rows with nothing to show are dropped; output ids are unique (`-2`, `-3`… on collision).
 *
 * @example
 * toAguiMessages([{ id: 'm1', role: 'user', createdAt: new Date(), content: { format: 2, parts: [{ type: 'text', text: 'hi' }] } }]);
 * // [{ id: 'm1', role: 'user', content: 'hi' }]
 */
export function toAguiMessages(stored: MastraDBMessage[], context: HistoryContext = {}): Message[] {
  const tasks = new Map((context.backgroundTasks ?? []).map((task) => [task.toolCallId, task]));
  const extras: RowContext = {
    toolMessageIds: context.toolMessageIds ?? {},
    tasks,
    subagents: context.subagents ?? new Map(),
    workflows: context.workflowActivities ?? {},
  };
  const ids = new Set<string>();
  const unique = (id: string): string => {
    let candidate = id;
    for (let n = 2; ids.has(candidate); n++) candidate = `${id}-${n}`;
    ids.add(candidate);
    return candidate;
  };
  const rows = stored.map((row) => ({
    id: row.id,
    role: row.role,
    createdAt: row.createdAt,
    messages: rowToAgui(row, extras).map((message) => ({ ...message, id: unique(message.id) })),
  }));
  return placeRunEnds(rows, context.runEnds ?? {});
}

/**
 * Where the numbering of a stored assistant message stands after all its parts: a run whose answer
 * Mastra appends to it (`RunTranslatorOptions.appendsTo`) goes on from there.
 */
export function appendPosition(stored: MastraDBMessage): MessagePosition {
  const numbering = MessageNumbering.start(stored.id);
  for (const part of stored.content.parts) {
    if (part.type === 'text' && part.text) numbering.next('text');
    else if (part.type === 'reasoning' && reasoningText(part)) numbering.next('reasoning');
    else if (part.type === 'tool-invocation') numbering.toolCallParent();
  }
  return numbering.position();
}

type RowContext = {
  toolMessageIds: ToolMessageIds;
  tasks: ReadonlyMap<string, StoredBackgroundTask>;
  subagents: ReadonlyMap<string, MastraDBMessage[]>;
  workflows: Readonly<Record<string, WorkflowActivityContent>>;
};

function rowToAgui(row: MastraDBMessage, context: RowContext): Message[] {
  switch (row.role) {
    case 'user':
      return userMessage(row.id, row.content.parts);
    case 'system': {
      const content = partsText(row.content.parts);
      return content ? [{ id: row.id, role: 'system', content }] : [];
    }
    case 'assistant':
      return assistantMessages(row.id, row.content.parts, context);
    case 'signal':
      return signalMessages(row);
    default:
      return [];
  }
}

function userMessage(id: string, parts: StoredPart[]): Message[] {
  const media = parts.flatMap(toAguiMediaPart);
  if (media.length === 0) {
    const content = partsText(parts);
    return content ? [{ id, role: 'user', content }] : [];
  }
  // Keep text and files in their stored order, as the user sent them.
  const content = parts.flatMap((part): ContentPart[] => (part.type === 'text' ? [{ type: 'text', text: part.text }] : toAguiMediaPart(part)));
  return [{ id, role: 'user', content }];
}

/** Stored file parts hold a data URL or a plain URL in `data` (or `url`), with `mimeType`. */
function toAguiMediaPart(part: StoredPart): ContentPart[] {
  if (part.type !== 'file') return [];
  const record = part as { data?: unknown; url?: unknown; mimeType?: unknown; mediaType?: unknown };
  const raw = typeof record.data === 'string' ? record.data : typeof record.url === 'string' ? record.url : undefined;
  if (!raw) return [];
  const declared = typeof record.mimeType === 'string' ? record.mimeType : typeof record.mediaType === 'string' ? record.mediaType : undefined;
  const dataUrl = /^data:([^;,]+)?(?:;[^,]*)?;base64,(.*)$/s.exec(raw);
  const mimeType = declared ?? dataUrl?.[1] ?? 'application/octet-stream';
  const source: PartSource = dataUrl ? { type: 'data', value: dataUrl[2], mimeType } : { type: 'url', value: raw, mimeType };
  return [{ type: mediaKind(mimeType), source }];
}

function mediaKind(mimeType: string): 'image' | 'audio' | 'video' | 'document' {
  const top = mimeType.split('/')[0];
  return top === 'image' || top === 'audio' || top === 'video' ? top : 'document';
}

/** The messages of one segment before they are laid out: the tool messages follow the message carrying the calls. */
type Segment = { messages: Message[]; carrierId?: string; results: Message[]; activities: Message[] };

const newSegment = (): Segment => ({ messages: [], results: [], activities: [] });

function assistantMessages(id: string, parts: StoredPart[], context: RowContext): Message[] {
  const numbering = MessageNumbering.start(id);
  const out: Message[] = [];
  let segment = newSegment();
  let segmentIndex = 0;
  // Called after numbering a part: when that part opened a new segment, the previous one is complete.
  const enter = () => {
    if (numbering.segment === segmentIndex) return;
    out.push(...layOut(segment));
    segment = newSegment();
    segmentIndex = numbering.segment;
  };
  for (const part of parts) {
    if (part.type === 'text' && part.text) {
      const messageId = numbering.next('text');
      enter();
      segment.messages.push({ id: messageId, role: 'assistant', content: part.text });
    } else if (part.type === 'reasoning' && reasoningText(part)) {
      const messageId = numbering.next('reasoning');
      enter();
      segment.messages.push({ id: messageId, role: 'reasoning', content: reasoningText(part) });
    } else if (part.type === 'tool-invocation') {
      addToolCall(segment, numbering.toolCallParent(), part.toolInvocation, context);
    }
    // step-start, source, file and data parts have no AG-UI message of their own.
  }
  return [...out, ...layOut(segment)];
}

function addToolCall(segment: Segment, parentId: string, invocation: ToolInvocation, context: RowContext): void {
  let carrier = segment.messages.find((m) => m.id === parentId);
  if (!carrier) {
    carrier = { id: parentId, role: 'assistant' };
    segment.messages.push(carrier);
  }
  const call: ToolCall = { id: invocation.toolCallId, type: 'function', function: { name: invocation.toolName, arguments: stringifyArgs(invocation.args) } };
  const owner = carrier as Message & { toolCalls?: ToolCall[] };
  owner.toolCalls = [...(owner.toolCalls ?? []), call];
  segment.carrierId = parentId;
  const task = context.tasks.get(invocation.toolCallId);
  const result = task ? backgroundResult(invocation, task) : toolResultMessage(invocation, context.toolMessageIds[invocation.toolCallId]);
  if (result) segment.results.push(result);
  // A workflow's activity, after the call's result: a client puts a tool message right after the
  // message carrying its call, ahead of the activity that message's call opened.
  const workflow = context.workflows[invocation.toolCallId];
  if (workflow)
    segment.results.push({ id: workflowActivityId(invocation.toolCallId), role: 'activity', activityType: WORKFLOW_ACTIVITY, content: { ...workflow } });
  if (delegatedAgent(invocation.toolName) !== undefined) segment.results.push(...subagentMessages(invocation, context.subagents.get(invocation.toolCallId)));
  if (task) segment.activities.push(backgroundActivity(task));
}

/**
 * A delegation's sub-agent, right after the delegation's tool message (the live stream's reducer
 * put its messages there: they opened before the result came), with the live ids: its reasoning,
 * its calls (their tool messages after them) and its answer, in the order they first appeared. Read
 * from the sub-agent's own stored thread (`rows`), else from what the delegation's result keeps.
 */
function subagentMessages(invocation: ToolInvocation, rows: MastraDBMessage[] | undefined): Message[] {
  const { toolCallId } = invocation;
  const subagent = subagentRunId(toolCallId);
  const messages: Message[] = [];
  // By call id: a sub-agent that paused for an approval stores its call again when it resumes.
  const results = new Map<string, Message>();
  let answer: (Message & { role: 'assistant' }) | undefined;
  let calls: (Message & { role: 'assistant'; toolCalls: ToolCall[] }) | undefined;
  let reasonings = 0;
  for (const part of rows ? rows.flatMap((row) => (row.role === 'assistant' ? row.content.parts : [])) : delegationParts(invocation)) {
    if (part.type === 'text' && part.text) {
      if (!answer) messages.push((answer = { id: subagentTextId(toolCallId), role: 'assistant', content: '', subagentRunId: subagent }));
      answer.content += part.text;
    } else if (part.type === 'reasoning' && reasoningText(part)) {
      messages.push({ id: subagentReasoningId(toolCallId, ++reasonings), role: 'reasoning', content: reasoningText(part), subagentRunId: subagent });
    } else if (part.type === 'tool-invocation') {
      if (!calls) messages.push((calls = { id: subagentCallsId(toolCallId), role: 'assistant', toolCalls: [], subagentRunId: subagent }));
      const inner = part.toolInvocation;
      if (!calls.toolCalls.some((call) => call.id === inner.toolCallId)) {
        calls.toolCalls.push({ id: inner.toolCallId, type: 'function', function: { name: inner.toolName, arguments: stringifyArgs(inner.args) } });
      }
      // A sub-agent's approvals are not marked: the live stream cannot tell which of its calls asked.
      const result = toolResultMessage(inner, undefined, false);
      if (result) results.set(inner.toolCallId, { ...result, subagentRunId: subagent });
    }
  }
  const at = calls ? messages.indexOf(calls) + 1 : messages.length;
  return [...messages.slice(0, at), ...results.values(), ...messages.slice(at)];
}

/** What a finished delegation's result keeps of its sub-agent's work, as stored parts: its calls with their results, then its answer. */
function delegationParts(invocation: ToolInvocation): StoredPart[] {
  if (invocation.state !== 'result' || invocation.isError) return [];
  const result = (invocation.result ?? {}) as {
    text?: unknown;
    subAgentToolResults?: Array<{ toolCallId: string; toolName: string; args?: unknown; result?: unknown }>;
  };
  const calls = (result.subAgentToolResults ?? []).map(({ toolCallId, toolName, args, result: value }): StoredPart => ({
    type: 'tool-invocation',
    toolInvocation: { state: 'result', toolCallId, toolName, args, result: value },
  }));
  return typeof result.text === 'string' && result.text ? [...calls, { type: 'text', text: result.text }] : calls;
}

function layOut(segment: Segment): Message[] {
  const at = segment.messages.findIndex((m) => m.id === segment.carrierId) + 1;
  const messages = at > 0 ? [...segment.messages.slice(0, at), ...segment.results, ...segment.messages.slice(at)] : segment.messages;
  return [...messages, ...segment.activities];
}

function reasoningText(part: Extract<StoredPart, { type: 'reasoning' }>): string {
  return part.reasoning || part.details.map((d) => (d.type === 'text' ? d.text : '')).join('');
}

function stringifyArgs(args: unknown): string {
  return JSON.stringify(args ?? {}) ?? '{}';
}

/**
 * The tool message for a finished invocation, exactly as the live stream's `TOOL_CALL_RESULT` made
 * it, so a reloaded thread reads as the run did: errors and declines in `content` (the event has no
 * `error` field), an answered approval in `metadata.approval`. Its id is the client's own tool
 * message's, else `tool-result-<toolCallId>`. A call still waiting has none: it shows pending.
 */
function toolResultMessage(invocation: ToolInvocation, clientId: string | undefined, marksApproval = true): Message | undefined {
  const approval = marksApproval ? approvalOf(invocation) : undefined;
  const base = {
    id: clientId ?? toolResultMessageId(invocation.toolCallId),
    role: 'tool' as const,
    toolCallId: invocation.toolCallId,
    ...(approval && { metadata: { approval } }),
  };
  switch (invocation.state) {
    case 'result':
      return { ...base, content: invocation.isError ? toolErrorContent(invocation.result) : toolResultContent(invocation.result, false) };
    case 'output-error':
      return { ...base, content: toolErrorContent(invocation.errorText ?? invocation.result) };
    case 'output-denied':
      return { ...base, content: declinedContent(invocation.toolName, invocation.approval?.reason) };
    default:
      return undefined;
  }
}

/** How a call that asked for approval was answered: Mastra keeps the answer on the call. */
function approvalOf(invocation: ToolInvocation): 'approved' | 'declined' | undefined {
  if (invocation.state === 'output-denied') return 'declined';
  if (!invocation.approval) return undefined;
  return invocation.approval.approved === false ? 'declined' : 'approved';
}

/**
 * A call that ran in the background shows its task's outcome, as the live stream did, and nothing
 * while it runs: Mastra's immediate "started in the background" answer is for the model.
 */
function backgroundResult(invocation: ToolInvocation, task: StoredBackgroundTask): Message | undefined {
  const base = { id: toolResultMessageId(invocation.toolCallId), role: 'tool' as const, toolCallId: invocation.toolCallId };
  if (task.status === 'completed') return { ...base, content: toolResultContent(task.result, false) };
  if (task.status === 'failed') return { ...base, content: toolErrorContent(task.error?.message ?? 'The background task failed') };
  return undefined;
}

/** The activity message the live stream kept up to date for a background task, in its last state. */
function backgroundActivity(task: StoredBackgroundTask): Message {
  const content = {
    taskId: task.id,
    toolName: task.toolName,
    toolCallId: task.toolCallId,
    status: task.status,
    ...(task.result !== undefined && { result: task.result }),
    ...(task.error !== undefined && { error: errorMessage(task.error) }),
  };
  return { id: backgroundTaskId(task.id), role: 'activity', activityType: 'background-task', content };
}

function signalMessages(row: MastraDBMessage): Message[] {
  const signal = (row.content.metadata?.signal ?? {}) as StoredSignal;
  const type = signal.type ?? row.type ?? 'signal';
  if (type === 'user') return userMessage(row.id, row.content.parts);
  const content = { tagName: signal.tagName ?? type, contents: partsText(row.content.parts), attributes: signal.attributes ?? {} };
  return [{ id: row.id, role: 'activity', activityType: `signal.${type}`, content }];
}

/** A message's text parts, one per line: signal rows lack Mastra's own `content.content` string. */
export function partsText(parts: StoredPart[]): string {
  return parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}
