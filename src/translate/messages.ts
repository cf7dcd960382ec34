/**
 * Pure translation of AG-UI input messages for Mastra (the other direction is `history.ts`):
 * `toMastraMessages` makes AI SDK v5 `ModelMessage`-like objects for `agent.stream()`, and
 * `selectNewMessages` picks, with memory on, the part of a re-sent history Mastra lacks. No I/O and
 * no state: every function returns new objects and never mutates its input.
 */
import type { ContentPart, Message, ToolCall } from '@ag-ui/core';

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
 * The ids `selectNewMessages` (and a retry's check) may look up in what is stored: the input's
 * trailing `user`, `tool`, `system` and `developer` messages, and the message before them. However
 * long the conversation, a run only needs to know of these whether they are stored.
 *
 * @example
 * tailIds([{ id: 'u1', role: 'user', content: 'hi' }, { id: 'a1', role: 'assistant', content: 'hello' },
 *          { id: 'u2', role: 'user', content: 'more' }]); // ['u2', 'a1']
 */
export function tailIds(input: readonly Message[]): string[] {
  const ids: string[] = [];
  for (let i = input.length - 1; i >= 0; i--) {
    const message = input[i];
    if (message.role === 'activity' || message.role === 'reasoning') continue;
    ids.push(message.id);
    if (!NEW_INPUT_ROLES.has(message.role)) break;
  }
  return ids;
}

/**
 * With memory on, the client re-sends the whole history on every run but Mastra already stores it,
 * so only the new tail must be passed to `agent.stream()`:
 * - `threadHasHistory` false (new or empty thread): every message except `activity` is new.
 * - otherwise walk back from the end, collecting `user`, `tool`, `system` and `developer` messages
 *   whose id is not in `storedIds`, up to the first `assistant` or stored message. `activity` and
 *   `reasoning` messages (UI-side artefacts that may trail the turn) are skipped, neither collected
 *   nor a boundary, so a `tool` message answering a frontend tool call is kept although it follows
 *   the assistant message that made the call.
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
