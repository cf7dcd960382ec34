import { randomUUID } from 'node:crypto';
import { MastraLanguageModelV2Mock } from '@mastra/core/test-utils/llm-mock';
import { textOr } from '../text.js';

/** One part of a V2 model stream, as the AI SDK provider spec defines it. */
type DoStream = Extract<NonNullable<NonNullable<ConstructorParameters<typeof MastraLanguageModelV2Mock>[0]>['doStream']>, (...args: never[]) => unknown>;
/** A part of a model's stream, as Mastra's model interface (AI SDK v2) types it. */
type StreamPart = Awaited<ReturnType<DoStream>>['stream'] extends ReadableStream<infer P> ? P : never;
type DoGenerate = Extract<NonNullable<NonNullable<ConstructorParameters<typeof MastraLanguageModelV2Mock>[0]>['doGenerate']>, (...args: never[]) => unknown>;
/** What a model answers to `generate()`: the whole answer at once. */
type Generated = Awaited<ReturnType<DoGenerate>>;
type PromptMessage = { role: string; content: unknown };
type CallOptions = {
  prompt: PromptMessage[];
  tools?: Array<{ type: string; name: string; inputSchema?: unknown }>;
  responseFormat?: { type: string; schema?: unknown };
  abortSignal?: AbortSignal;
};

export interface ScriptedModelOptions {
  /** Milliseconds between streamed parts. `0` enqueues everything at once, with no timer. */
  delayMs?: number;
  /** Told of every call: the role of the prompt's last message and the latest input text (tests count calls with it). */
  onCall?: (call: { lastRole: string | undefined; input: string }) => void;
  /** Whose script: the demo agent's (default), or its `researcher` sub-agent's (`Findings on <topic>: …` to any input). */
  persona?: 'demo' | 'researcher';
}

const USAGE = { inputTokens: 12, outputTokens: 8, totalTokens: 20 };
const HEAD: StreamPart[] = [{ type: 'stream-start', warnings: [] }];
/** Mastra's working-memory tool, offered to the model when the agent's memory has working memory. */
const WORKING_MEMORY_TOOL = 'updateWorkingMemory';
/** The tool Mastra makes of the demo agent's `researcher` sub-agent. */
const RESEARCHER_TOOL = 'agent-researcher';

/**
 * The demo agent's model: a real `LanguageModelV2` that answers from a fixed script instead of a
 * provider, so the bridge runs and is tested with no API key. The rules (first match wins, on the
 * latest user or signal text, case-insensitive) are documented in `docs/demo-agent.md`.
 *
 * @example
 * const agent = new Agent({ id: 'demo', name: 'Demo', instructions: '…', model: createScriptedModel({ delayMs: 0 }) });
 */
export function createScriptedModel(options: ScriptedModelOptions = {}): MastraLanguageModelV2Mock {
  const delayMs = options.delayMs ?? 20;
  const answer = (call: CallOptions): StreamPart[] => {
    options.onCall?.({ lastRole: call.prompt.at(-1)?.role, input: latestInput(call.prompt) });
    const callId = `call-${randomUUID().slice(0, 8)}`;
    return options.persona === 'researcher' ? researcherScript(call, callId) : script(call, callId);
  };
  const model: MastraLanguageModelV2Mock = new MastraLanguageModelV2Mock({
    provider: 'demo',
    modelId: 'scripted',
    doStream: async (callOptions) => {
      // The mock records every call's options (the whole prompt) for test assertions; a server
      // that runs for days would keep every conversation it ever answered. Keep none.
      model.doStreamCalls.length = 0;
      const call = callOptions as unknown as CallOptions;
      return { stream: toStream(answer(call), delayMs, call.abortSignal), request: { body: '{}' }, response: { headers: {} } };
    },
    // `generate()` (and Mastra's non-streaming calls): the same answer, whole.
    doGenerate: async (callOptions) => {
      model.doGenerateCalls.length = 0;
      return { ...generated(answer(callOptions)), request: { body: '{}' }, response: { headers: {} } };
    },
  });
  return model;
}

/** A script's parts as one answer: each text and reasoning joined, tool calls as they are. */
function generated(parts: StreamPart[]): Pick<Generated, 'content' | 'finishReason' | 'usage' | 'warnings'> {
  const result: Pick<Generated, 'content' | 'finishReason' | 'usage' | 'warnings'> = { content: [], finishReason: 'stop', usage: USAGE, warnings: [] };
  const open = new Map<string, { text: string }>();
  for (const part of parts) {
    if (part.type === 'text-start' || part.type === 'reasoning-start') {
      const item = { type: part.type === 'text-start' ? ('text' as const) : ('reasoning' as const), text: '' };
      open.set(part.id, item);
      result.content.push(item);
    } else if (part.type === 'text-delta' || part.type === 'reasoning-delta') {
      open.get(part.id)!.text += part.delta;
    } else if (part.type === 'tool-call') {
      result.content.push(part);
    } else if (part.type === 'finish') {
      result.finishReason = part.finishReason;
    }
  }
  return result;
}

/** Decides the model's answer for one call. Exported for unit tests of the script itself. */
export function script(call: CallOptions, callId: string): StreamPart[] {
  const last = call.prompt.at(-1);
  if (last?.role === 'tool') return answerToolResults(last, callId, latestInput(call.prompt));
  // A turn that ends on the assistant is Mastra waking the agent after a background task finished
  // (the completion note is folded into the system prompt): report it instead of re-reading the input.
  if (last?.role === 'assistant') return text(callId, 'The background task has finished.');
  const input = latestInput(call.prompt);
  // An output processor turned the previous attempt down: Mastra adds its reason to the prompt.
  if (askedToRetry(call.prompt)) return text(callId, `Revised: ${input}`);
  const lower = input.toLowerCase();
  if (lower.includes('fail')) throw new Error('demo model failure');
  const draft = /^\s*draft\s+(\S.*)$/i.exec(input);
  if (draft && call.tools?.some((t) => t.name === DRAFT_TOOL)) return toolCall(callId, DRAFT_TOOL, { inputData: { topic: draft[1].trim() } });
  if (call.responseFormat?.type === 'json' && call.responseFormat.schema) {
    return text(callId, JSON.stringify(sampleFromSchema(call.responseFormat.schema, input)), 'json');
  }
  if (/\bresearch\s+\S/i.test(input) && call.tools?.some((t) => t.name === RESEARCHER_TOOL)) {
    return toolCall(callId, RESEARCHER_TOOL, { prompt: `research ${topicOf(input)}` });
  }
  if (lower.includes('think')) return reasoningThenText(callId, `Here is my answer to: ${input}`);
  if (lower.includes('weather')) return toolCall(callId, 'get_weather', { city: cityIn(input) });
  if (lower.includes('delete')) return toolCall(callId, 'delete_file', { path: pathIn(input) });
  if (lower.includes('slow')) return toolCall(callId, 'slow_task', { label: input.slice(0, 60) });
  const frontend = frontendToolToUse(lower, call.tools);
  if (frontend) return toolCall(callId, frontend.name, sampleFromSchema(frontend.inputSchema, input));
  const fact = factToRemember(input);
  if (fact !== undefined && call.tools?.some((t) => t.name === WORKING_MEMORY_TOOL)) {
    // Schema-based working memory replaces arrays whole: the stored facts, then the new one.
    return toolCall(callId, WORKING_MEMORY_TOOL, { memory: { facts: [...storedFacts(call.prompt), fact] } });
  }
  return text(callId, `Echo: ${input}`);
}

/** The tool Mastra makes of the demo agent's workflow `draft-and-send` (`workflow-<key>`). */
export const DRAFT_TOOL = 'workflow-draft-and-send';

/** Mastra's note to the model when a processor asks for another try (`abort(reason, { retry: true })`). */
const RETRY_FEEDBACK = '[Processor Feedback]';

function askedToRetry(prompt: PromptMessage[]): boolean {
  return prompt.some((m) => m.role === 'system' && contentText(m.content).includes(RETRY_FEEDBACK));
}

function latestInput(prompt: PromptMessage[]): string {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i];
    if (message.role === 'user' || (message.role === 'system' && i > 0)) {
      const value = contentText(message.content);
      if (value) return value;
    }
  }
  return '';
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((p: { type?: unknown; text?: unknown } | null): p is { type: 'text'; text: string } => p?.type === 'text' && typeof p.text === 'string')
    .map((p) => p.text)
    .join(' ')
    .trim();
}

/** `research <topic>`: the rest of the input, as `remember` takes its fact; the whole input without the word. */
function topicOf(input: string): string {
  const match = /\bresearch\s+(.+)$/is.exec(input);
  return (match ? match[1] : input).trim().replace(/[.!?]$/, '');
}

/**
 * The researcher sub-agent's script: it reports on tool results as the demo agent does; on a topic
 * naming `weather` or `delete` it calls that tool first (`delete_file` needs approval), on one naming
 * `think` it reasons first; it finds nothing on Atlantis (a failing sub-agent).
 */
function researcherScript(call: CallOptions, callId: string): StreamPart[] {
  const last = call.prompt.at(-1);
  const topic = topicOf(latestInput(call.prompt));
  if (last?.role === 'tool') return answerToolResults(last, callId, topic);
  if (/atlantis/i.test(topic)) throw new Error(`no sources on ${topic}`);
  const has = (name: string) => call.tools?.some((t) => t.name === name) === true;
  if (/weather/i.test(topic) && has('get_weather')) return toolCall(callId, 'get_weather', { city: cityIn(topic) });
  if (/delete/i.test(topic) && has('delete_file')) return toolCall(callId, 'delete_file', { path: pathIn(topic) });
  const findings = `Findings on ${topic}: three sources agree, and none disagrees.`;
  return /think/i.test(topic) ? reasoningThenText(callId, findings) : text(callId, findings);
}

/** `remember <fact>`: the rest of the input, trimmed, case kept, a final `.` or `!` dropped. */
function factToRemember(input: string): string | undefined {
  const match = /\bremember\s+(.+)$/is.exec(input);
  return match ? match[1].trim().replace(/[.!]$/, '') : undefined;
}

/** The facts in the working memory Mastra shows the model (`<working_memory_data>` in a system message). */
function storedFacts(prompt: PromptMessage[]): string[] {
  for (const message of prompt) {
    if (message.role !== 'system') continue;
    const data = /<working_memory_data>\s*([\s\S]*?)\s*<\/working_memory_data>/.exec(contentText(message.content))?.[1];
    if (!data) continue;
    try {
      const facts = (JSON.parse(data) as { facts?: unknown }).facts;
      return Array.isArray(facts) ? facts.filter((f): f is string => typeof f === 'string') : [];
    } catch {
      return [];
    }
  }
  return [];
}

function answerToolResults(message: PromptMessage, callId: string, input: string): StreamPart[] {
  const results = Array.isArray(message.content) ? message.content : [];
  const lines = results.map((r: { toolName?: string; output?: { type?: string; value?: unknown } }) => {
    const value = r.output?.value;
    const shown = typeof value === 'string' ? value : JSON.stringify(value);
    if (r.output?.type === 'error-text' || r.output?.type === 'error-json') return `The tool ${r.toolName} failed: ${shown}`;
    if (r.toolName === WORKING_MEMORY_TOOL) return `Noted: ${factToRemember(input) ?? shown}`;
    if (r.toolName === RESEARCHER_TOOL) return `Summary: ${textOr((value as { text?: unknown } | undefined)?.text, shown)}`;
    if (r.toolName === DRAFT_TOOL) return `Done: ${textOr((value as { result?: { text?: unknown } } | undefined)?.result?.text, shown)}`;
    if (r.toolName === 'delete_file') {
      // An approved call returns `{ deleted }`; a declined one reaches the model as the reason alone.
      return shown.includes('"deleted"') ? `Deleted as requested: ${shown}` : `I did not delete the file: ${shown}`;
    }
    return `The tool ${r.toolName} returned ${shown}`;
  });
  return text(callId, lines.join(' '));
}

function cityIn(input: string): string {
  const match = /\bin\s+([A-Za-z][\w-]*)/i.exec(input);
  return match ? match[1] : 'Paris';
}

function pathIn(input: string): string {
  const match = /delete\s+(?:the\s+file\s+|file\s+)?(\S+)/i.exec(input);
  const word = match?.[1];
  return word && /[./]/.test(word) ? word : 'notes.txt';
}

function frontendToolToUse(lower: string, tools: CallOptions['tools']): { name: string; inputSchema?: unknown } | undefined {
  const match = /\buse\s+([\w-]+)/.exec(lower);
  if (!match || !tools) return undefined;
  return tools.find((t) => t.name.toLowerCase() === match[1]);
}

/** A deterministic value that satisfies a (simple) JSON Schema: used for frontend-tool args and structured output. */
export function sampleFromSchema(schema: unknown, input: string): unknown {
  const s = (schema ?? {}) as { type?: string | string[]; properties?: Record<string, unknown>; items?: unknown; enum?: unknown[] };
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'string':
      return input;
    case 'number':
    case 'integer':
      return input.length;
    case 'boolean':
      return true;
    case 'array':
      return [sampleFromSchema(s.items, input)];
    case 'null':
      return null;
    default: {
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(s.properties ?? {})) out[key] = sampleFromSchema(value, input);
      return out;
    }
  }
}

function words(value: string): string[] {
  return value.match(/\S+\s*/g) ?? [value];
}

function text(callId: string, value: string, id = 'text'): StreamPart[] {
  const textId = `${callId}-${id}`;
  return [
    ...HEAD,
    { type: 'text-start', id: textId },
    ...words(value).map((delta) => ({ type: 'text-delta' as const, id: textId, delta })),
    { type: 'text-end', id: textId },
    { type: 'finish', finishReason: 'stop', usage: USAGE },
  ];
}

function reasoningThenText(callId: string, answerText: string): StreamPart[] {
  const reasoningId = `${callId}-reasoning`;
  const [, ...answer] = text(callId, answerText);
  return [
    ...HEAD,
    { type: 'reasoning-start', id: reasoningId },
    ...words('Let me think about that step by step.').map((delta) => ({ type: 'reasoning-delta' as const, id: reasoningId, delta })),
    { type: 'reasoning-end', id: reasoningId },
    ...answer,
  ];
}

function toolCall(callId: string, toolName: string, args: unknown): StreamPart[] {
  const toolCallId = `${callId}-call`;
  const json = JSON.stringify(args);
  const half = Math.ceil(json.length / 2);
  return [
    ...HEAD,
    { type: 'tool-input-start', id: toolCallId, toolName },
    { type: 'tool-input-delta', id: toolCallId, delta: json.slice(0, half) },
    { type: 'tool-input-delta', id: toolCallId, delta: json.slice(half) },
    { type: 'tool-input-end', id: toolCallId },
    { type: 'tool-call', toolCallId, toolName, input: json },
    { type: 'finish', finishReason: 'tool-calls', usage: USAGE },
  ];
}

/**
 * Streams the parts. With no delay every part is enqueued in `start`, so no timer is ever armed
 * (the benchmark relies on that); otherwise a pull stream waits `delayMs` before each part.
 */
function toStream(parts: StreamPart[], delayMs: number, signal?: AbortSignal): ReadableStream<StreamPart> {
  if (delayMs <= 0) {
    return new ReadableStream({
      start(controller) {
        for (const part of parts) controller.enqueue(part);
        controller.close();
      },
    });
  }
  let index = 0;
  return new ReadableStream({
    async pull(controller) {
      if (index >= parts.length) return controller.close();
      await sleep(delayMs, signal);
      controller.enqueue(parts[index++]);
    },
  });
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
