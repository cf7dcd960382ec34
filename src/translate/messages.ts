/**
 * Pure translation between AG-UI messages (`@ag-ui/core`) and Mastra messages.
 *
 * - `toMastraMessages`: AG-UI input → AI SDK v5 `ModelMessage`-like objects for `agent.stream()`.
 * - `selectNewMessages`: with memory on, picks the part of a re-sent history that Mastra lacks.
 * - `toAguiMessages`: stored `MastraDBMessage` rows → AG-UI messages for `MESSAGES_SNAPSHOT`.
 * - `toThreadMessage`: stored row → a plain JSON history item.
 *
 * No I/O and no state: every function returns new objects and never mutates its input.
 */
import type { ContentPart, Message, PartSource, ToolCall } from '@ag-ui/core';
import type { MastraDBMessage } from '@mastra/core/agent/message-list';
import { declinedContent, errorMessage, toolErrorContent, toolResultContent } from './values.js';

// ─── Mastra input shape ─────────────────────────────────────────────────────────────────────

/** A JSON value, as tool results and tool-call inputs are on the wire. */
export type JsonValue = null | string | number | boolean | JsonValue[] | { [key: string]: JsonValue };

export type MastraTextPart = { type: 'text'; text: string };
/** `image` is a URL, a data URL or base64 (Mastra and the AI SDK accept all three as strings). */
export type MastraImagePart = { type: 'image'; image: string; mediaType?: string };
export type MastraFilePart = { type: 'file'; data: string; mediaType: string };
export type MastraToolCallPart = { type: 'tool-call'; toolCallId: string; toolName: string; input: Record<string, JsonValue> };
export type MastraToolResultOutput =
  | { type: 'text'; value: string }
  | { type: 'json'; value: JsonValue }
  | { type: 'error-text'; value: string }
  | { type: 'content'; value: Array<{ type: 'text'; text: string } | { type: 'media'; data: string; mediaType: string }> };
export type MastraToolResultPart = { type: 'tool-result'; toolCallId: string; toolName: string; output: MastraToolResultOutput };

/**
 * The subset of AI SDK v5 `ModelMessage` this module produces, plus `id`. Mastra's `MessageList`
 * reads `id` off model messages (`'id' in modelMsg`), so stored rows keep the AG-UI client ids.
 * Assignable to Mastra's `MessageListInput` (checked in the tests).
 */
export type MastraInputMessage =
  | { id: string; role: 'system'; content: string }
  | { id: string; role: 'user'; content: string | Array<MastraTextPart | MastraImagePart | MastraFilePart> }
  | { id: string; role: 'assistant'; content: Array<MastraTextPart | MastraToolCallPart> }
  | { id: string; role: 'tool'; content: MastraToolResultPart[] };

// ─── AG-UI → Mastra ─────────────────────────────────────────────────────────────────────────

/**
 * Converts AG-UI messages into Mastra input messages, keeping each message's `id`.
 *
 * - user: string content stays a string; parts map text→text, image→image, audio/video/document→file.
 * - assistant: optional text part, then one `tool-call` per `toolCalls` entry (arguments parsed as
 *   JSON; `{}` when unparseable or not an object). An assistant message with neither is dropped.
 * - tool: one `tool-result`; `toolName` comes from an earlier assistant tool call with the same id
 *   in this input, else `'unknown'`. `error` → `error-text`; a string that parses as a JSON object
 *   or array → `json`; other strings → `text`; media parts → `content`.
 * - system and developer → system. activity and reasoning are dropped: they are never sent to a model.
 *
 * Output messages map 1:1 (by id) onto the kept input messages, so a caller that sends only part
 * of a history can convert the whole history (for tool names) and filter the result by id.
 *
 * @example
 * toMastraMessages([{ id: 'u1', role: 'user', content: 'hi' }]);
 * // [{ id: 'u1', role: 'user', content: 'hi' }]
 */
export function toMastraMessages(messages: Message[]): MastraInputMessage[] {
  const toolNames = new Map<string, string>();
  const out: MastraInputMessage[] = [];
  for (const message of messages) {
    const converted = toMastraMessage(message, toolNames);
    if (converted) out.push(converted);
  }
  return out;
}

function toMastraMessage(message: Message, toolNames: Map<string, string>): MastraInputMessage | undefined {
  switch (message.role) {
    case 'user':
      return { id: message.id, role: 'user', content: typeof message.content === 'string' ? message.content : message.content.map(toMastraUserPart) };
    case 'assistant':
      // Record names first: a later tool message needs them, even if this message is dropped.
      for (const call of message.toolCalls ?? []) toolNames.set(call.id, call.function.name);
      return toMastraAssistant(message.id, message.content, message.toolCalls);
    case 'tool': {
      const toolName = toolNames.get(message.toolCallId) ?? 'unknown';
      const output = toToolOutput(message.content, message.error);
      return { id: message.id, role: 'tool', content: [{ type: 'tool-result', toolCallId: message.toolCallId, toolName, output }] };
    }
    case 'system':
    case 'developer':
      // AI SDK v5 has no developer role; providers that have one map system to it themselves.
      return { id: message.id, role: 'system', content: message.content };
    default:
      // activity (UI-only) and reasoning (the model's own output) never go back to a model.
      return undefined;
  }
}

function toMastraUserPart(part: ContentPart): MastraTextPart | MastraImagePart | MastraFilePart {
  if (part.type === 'text') return { type: 'text', text: part.text };
  // Mastra accepts every source value as a string: URLs and base64 as is, and it keeps `file-…`
  // provider file ids unchanged, so a `file` source passes through too.
  const { value, mimeType } = part.source;
  if (part.type === 'image') return mimeType ? { type: 'image', image: value, mediaType: mimeType } : { type: 'image', image: value };
  // The AI SDK requires a media type on file parts; octet-stream is its own fallback too.
  return { type: 'file', data: value, mediaType: mimeType ?? 'application/octet-stream' };
}

function toMastraAssistant(id: string, content: string | undefined, toolCalls: ToolCall[] | undefined): MastraInputMessage | undefined {
  const parts: Array<MastraTextPart | MastraToolCallPart> = [];
  if (content) parts.push({ type: 'text', text: content });
  for (const call of toolCalls ?? []) {
    parts.push({ type: 'tool-call', toolCallId: call.id, toolName: call.function.name, input: parseArguments(call.function.arguments) });
  }
  // An empty assistant turn would be stored as an empty row and confuse some providers.
  return parts.length > 0 ? { id, role: 'assistant', content: parts } : undefined;
}

/** Tool inputs are objects by contract; anything else (including `""` for no-arg calls) becomes `{}`. */
function parseArguments(json: string): Record<string, JsonValue> {
  const parsed = parseJson(json);
  return isJsonObject(parsed) ? parsed : {};
}

function toToolOutput(content: string | ContentPart[], error: string | undefined): MastraToolResultOutput {
  if (error !== undefined) return { type: 'error-text', value: error || contentText(content) };
  if (typeof content === 'string') return stringOutput(content);
  if (content.every((part) => part.type === 'text')) return stringOutput(contentText(content));
  return { type: 'content', value: content.map(toOutputContentPart) };
}

/** Structured results round-trip as `json` so the model sees them as data, not as a quoted string. */
function stringOutput(value: string): MastraToolResultOutput {
  const parsed = parseJson(value);
  return parsed !== null && typeof parsed === 'object' ? { type: 'json', value: parsed } : { type: 'text', value };
}

function toOutputContentPart(part: ContentPart): { type: 'text'; text: string } | { type: 'media'; data: string; mediaType: string } {
  if (part.type === 'text') return { type: 'text', text: part.text };
  // `media` carries base64 only; URLs and provider file ids can only be mentioned as text.
  if (part.source.type === 'data') return { type: 'media', data: part.source.value, mediaType: part.source.mimeType };
  return { type: 'text', text: `[${part.type}: ${part.source.value}]` };
}

function contentText(content: string | ContentPart[]): string {
  if (typeof content === 'string') return content;
  return content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}

function parseJson(value: string): JsonValue | undefined {
  try {
    return JSON.parse(value) as JsonValue;
  } catch {
    return undefined;
  }
}

function isJsonObject(value: JsonValue | undefined): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ─── Which input messages are new ───────────────────────────────────────────────────────────

const NEW_INPUT_ROLES = new Set<Message['role']>(['user', 'tool', 'system', 'developer']);

/**
 * With memory on, the client re-sends the whole history on every run but Mastra already stores it,
 * so only the new tail must be passed to `agent.stream()`.
 *
 * Rule:
 * - `threadHasHistory` false (new or empty thread): every message except `activity` is new.
 * - otherwise walk back from the end, collecting `user`, `tool`, `system` and `developer` messages
 *   whose id is not in `storedIds`; stop at the first `assistant` message or stored message.
 *   `activity` and `reasoning` messages are skipped (neither collected nor a boundary), since they
 *   are UI-side artefacts that may trail the turn. A `tool` message answering a frontend tool call
 *   is therefore kept although it follows the assistant message that made the call.
 * - The result keeps input order; it is empty when the client sent nothing new (e.g. a retry).
 *
 * @example
 * selectNewMessages(
 *   [{ id: 'u1', role: 'user', content: 'hi' }, { id: 'a1', role: 'assistant', content: 'hello' },
 *    { id: 'u2', role: 'user', content: 'more' }],
 *   new Set(['u1', 'a1']), true,
 * ); // [{ id: 'u2', role: 'user', content: 'more' }]
 * // Keep tool names from earlier calls: convert the whole input, then filter by the new ids.
 * // const ids = new Set(selected.map((m) => m.id)); toMastraMessages(input).filter((m) => ids.has(m.id));
 */
export function selectNewMessages(input: Message[], storedIds: ReadonlySet<string>, threadHasHistory: boolean): Message[] {
  if (!threadHasHistory) return input.filter((message) => message.role !== 'activity');
  const tail: Message[] = [];
  for (let i = input.length - 1; i >= 0; i--) {
    const message = input[i];
    if (message.role === 'activity' || message.role === 'reasoning') continue;
    if (storedIds.has(message.id) || !NEW_INPUT_ROLES.has(message.role)) break;
    tail.push(message);
  }
  return tail.reverse();
}

// ─── Mastra → AG-UI ─────────────────────────────────────────────────────────────────────────

type StoredPart = MastraDBMessage['content']['parts'][number];
type ToolInvocationPart = Extract<StoredPart, { type: 'tool-invocation' }>;
type ToolInvocation = ToolInvocationPart['toolInvocation'];

/** Signal metadata as Mastra stores it on `role: 'signal'` rows (`content.metadata.signal`). */
type StoredSignal = { id?: string; type?: string; tagName?: string; attributes?: Record<string, unknown> };

/** One model step of an assistant row: what AG-UI shows as reasoning → assistant → tool results. */
type Segment = { reasoning: string[]; text: string[]; toolCalls: ToolCall[]; results: Message[] };

/**
 * Converts stored Mastra messages (e.g. `memory.recall({ …, hideSignals: [] }).messages`) into
 * AG-UI messages for a `MESSAGES_SNAPSHOT`.
 *
 * - user → user (string content; `ContentPart[]` when the row has files). system → system.
 * - assistant: split into one AG-UI assistant message per model step, because Mastra stores a whole
 *   response (tool call, then the text written after the result) in one row. A new step starts
 *   where text or reasoning follows a tool invocation. Each step gives: a `reasoning` message
 *   (`<id>-reasoning`), the assistant message (text joined, `toolCalls` from `tool-invocation`
 *   parts), then one `tool` message (`tool-result-<toolCallId>`) per invocation with a result,
 *   an error or a denial. The first step keeps the row id, later ones get `<id>-<n>`.
 * - signal rows: type `user` → user message; other types → `activity` message with
 *   `activityType: 'signal.<type>'` and `content: { tagName, contents, attributes }`.
 * - rows with nothing to show are dropped; output ids are unique (`-2`, `-3`… on collision).
 *
 * @example
 * toAguiMessages([{ id: 'm1', role: 'user', createdAt: new Date(), content: { format: 2, parts: [{ type: 'text', text: 'hi' }] } }]);
 * // [{ id: 'm1', role: 'user', content: 'hi' }]
 */
export function toAguiMessages(stored: MastraDBMessage[]): Message[] {
  const ids = new Set<string>();
  const unique = (id: string): string => {
    let candidate = id;
    for (let n = 2; ids.has(candidate); n++) candidate = `${id}-${n}`;
    ids.add(candidate);
    return candidate;
  };
  return stored.flatMap((row) => rowToAgui(row).map((message) => ({ ...message, id: unique(message.id) })));
}

function rowToAgui(row: MastraDBMessage): Message[] {
  switch (row.role) {
    case 'user':
      return userMessage(row.id, row.content.parts);
    case 'system': {
      const content = partsText(row.content.parts);
      return content ? [{ id: row.id, role: 'system', content }] : [];
    }
    case 'assistant':
      return assistantMessages(row.id, row.content.parts);
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

function assistantMessages(id: string, parts: StoredPart[]): Message[] {
  const segments: Segment[] = [];
  let current = newSegment();
  for (const part of parts) {
    const startsStep = part.type === 'text' || part.type === 'reasoning';
    if (startsStep && current.toolCalls.length > 0) {
      segments.push(current);
      current = newSegment();
    }
    addPart(current, part);
  }
  segments.push(current);
  return segments.flatMap((segment, index) => segmentMessages(index === 0 ? id : `${id}-${index}`, segment));
}

function newSegment(): Segment {
  return { reasoning: [], text: [], toolCalls: [], results: [] };
}

function addPart(segment: Segment, part: StoredPart): void {
  if (part.type === 'text') {
    if (part.text) segment.text.push(part.text);
  } else if (part.type === 'reasoning') {
    const text = part.reasoning || part.details.map((d) => (d.type === 'text' ? d.text : '')).join('');
    if (text) segment.reasoning.push(text);
  } else if (part.type === 'tool-invocation') {
    const invocation = part.toolInvocation;
    segment.toolCalls.push({ id: invocation.toolCallId, type: 'function', function: { name: invocation.toolName, arguments: stringifyArgs(invocation.args) } });
    const result = toolResultMessage(invocation);
    if (result) segment.results.push(result);
  }
  // step-start, source, file and data parts have no AG-UI message of their own.
}

function segmentMessages(id: string, segment: Segment): Message[] {
  const out: Message[] = [];
  if (segment.reasoning.length > 0) out.push({ id: `${id}-reasoning`, role: 'reasoning', content: segment.reasoning.join('\n') });
  const content = segment.text.join('\n');
  if (content || segment.toolCalls.length > 0) {
    out.push({
      id,
      role: 'assistant',
      ...(content ? { content } : {}),
      ...(segment.toolCalls.length > 0 ? { toolCalls: segment.toolCalls } : {}),
    });
  }
  return [...out, ...segment.results];
}

function stringifyArgs(args: unknown): string {
  return JSON.stringify(args ?? {}) ?? '{}';
}

/**
 * The tool message for a finished invocation, with the content the live stream gave it (errors
 * and declines included), so a page reads a reloaded thread as it read the run. Errors also carry
 * AG-UI's `error` field. Calls still waiting (`call`, `partial-call`, `approval-requested`,
 * `approval-responded`) have no result yet, so the client sees them pending.
 */
function toolResultMessage(invocation: ToolInvocation): Message | undefined {
  const base = { id: `tool-result-${invocation.toolCallId}`, role: 'tool' as const, toolCallId: invocation.toolCallId };
  switch (invocation.state) {
    case 'result':
      return invocation.isError ? failed(base, invocation.result) : { ...base, content: toolResultContent(invocation.result, false) };
    case 'output-error':
      return failed(base, invocation.errorText ?? invocation.result);
    case 'output-denied':
      return { ...base, content: declinedContent(invocation.toolName, invocation.approval?.reason) };
    default:
      return undefined;
  }
}

function failed(base: { id: string; role: 'tool'; toolCallId: string }, error: unknown): Message {
  return { ...base, content: toolErrorContent(error), error: errorMessage(error) };
}

function signalMessages(row: MastraDBMessage): Message[] {
  const signal = (row.content.metadata?.signal ?? {}) as StoredSignal;
  const type = signal.type ?? row.type ?? 'signal';
  if (type === 'user') return userMessage(row.id, row.content.parts);
  const content = { tagName: signal.tagName ?? type, contents: partsText(row.content.parts), attributes: signal.attributes ?? {} };
  return [{ id: row.id, role: 'activity', activityType: `signal.${type}`, content }];
}

/** The text parts joined; Mastra's own `content.content` string is absent on signal rows, so parts are the source. */
function partsText(parts: StoredPart[]): string {
  return parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}

// ─── Plain history ──────────────────────────────────────────────────────────────────────────

/** A stored message as a plain JSON history item (e.g. for a `GET …/messages` route). */
export type ThreadMessage = { id: string; role: string; content: unknown; createdAt: string; threadId: string };

/**
 * The plain history shape of one stored message: `content` is the text when every part is a text
 * part, else the stored content object (`{ format: 2, parts, … }`) unchanged. `threadId` is `''`
 * when the row has none.
 *
 * @example
 * toThreadMessage(row); // { id: 'm1', role: 'user', content: 'hi', createdAt: '2026-01-01T00:00:00.000Z', threadId: 't1' }
 */
export function toThreadMessage(stored: MastraDBMessage): ThreadMessage {
  const parts = stored.content.parts;
  const plain = parts.length > 0 && parts.every((part) => part.type === 'text');
  return {
    id: stored.id,
    role: stored.role,
    content: plain ? partsText(parts) : stored.content,
    createdAt: new Date(stored.createdAt).toISOString(),
    threadId: stored.threadId ?? '',
  };
}
