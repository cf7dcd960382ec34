import { randomUUID } from 'node:crypto';
import { MastraLanguageModelV2Mock } from '@mastra/core/test-utils/llm-mock';
import { generated, reasoningThenText, text, toolCall, toStream, type StreamPart } from './model-parts.js';
import { textOr } from '../text.js';

type PromptMessage = { role: string; content: unknown };
type CallOptions = {
  prompt: PromptMessage[];
  tools?: Array<{ type: string; name: string; inputSchema?: unknown }>;
  responseFormat?: { type: string; schema?: unknown };
  abortSignal?: AbortSignal;
};

/** What a tool (or a workflow or sub-agent Mastra offers as one) returned, as a rule's `reply` gets it. */
export interface ToolOutcome {
  toolName: string;
  /** The result (for a workflow: `{ result, … }` as Mastra returns it), or the error. */
  value: unknown;
  failed: boolean;
}

/** A tool call's arguments, as JSON. */
export type ToolArgs = Record<string, unknown> | readonly unknown[] | string | number | boolean | null;

/**
 * One line of a script of your own: when the latest user text matches `when`, the model says
 * `say`, or calls `call.tool` with `call.args`; once the call's result is back, it answers with
 * `reply` (else with the demo's sentence for that result: "The tool <name> returned <result>").
 */
export type ScriptRule =
  | { when: RegExp; say: string | ((match: RegExpExecArray) => string) }
  | {
      when: RegExp;
      /** The tool as the model sees it: a tool's id, `workflow-<key>` for a workflow, `agent-<key>` for a sub-agent. */
      call: { tool: string; args: ToolArgs | ((match: RegExpExecArray) => ToolArgs) };
      reply?: (outcome: ToolOutcome, match: RegExpExecArray) => string;
    };

export interface ScriptedModelOptions {
  /** Milliseconds between streamed parts. `0` enqueues everything at once, with no timer. */
  delayMs?: number;
  /**
   * Rules of your own, tried before the demo's script (first match wins): what lets a test drive
   * an agent, its tools and its workflows with no API key. Input no rule matches gets the demo's
   * script (`Echo: <input>` for most).
   */
  rules?: readonly ScriptRule[];
  /** Told of every call: the role of the prompt's last message and the latest input text (tests count calls with it). */
  onCall?: (call: { lastRole: string | undefined; input: string }) => void;
  /** Whose script: the demo agent's (default), or its `researcher` sub-agent's (`Findings on <topic>: …` to any input). */
  persona?: 'demo' | 'researcher';
}

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
    const ruled = options.rules?.length ? byRules(options.rules, call, callId) : undefined;
    return ruled ?? (options.persona === 'researcher' ? researcherScript(call, callId) : script(call, callId));
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

/**
 * The answer `rules` give, if any: the first rule whose `when` matches the latest input speaks or
 * calls; on the turn that brings tool results back, the rules that made those calls reply.
 */
function byRules(rules: readonly ScriptRule[], call: CallOptions, callId: string): StreamPart[] | undefined {
  const input = latestInput(call.prompt);
  const matched = (rule: ScriptRule) => new RegExp(rule.when.source, rule.when.flags.replace('g', '')).exec(input) ?? undefined;
  const last = call.prompt.at(-1);
  if (last?.role === 'tool') {
    const results = toolResultsOf(last);
    const replyTo = (result: ToolResultPart): string | undefined => {
      for (const rule of rules) {
        if (!('call' in rule) || !rule.reply || rule.call.tool !== result.toolName) continue;
        const match = matched(rule);
        if (match) return rule.reply(outcomeOf(result), match);
      }
      return undefined;
    };
    const replies = results.map(replyTo);
    if (replies.every((reply) => reply === undefined)) return undefined;
    return text(callId, replies.map((reply, i) => reply ?? resultLine(results[i], input)).join(' '));
  }
  for (const rule of rules) {
    const match = matched(rule);
    if (!match) continue;
    if ('say' in rule) return text(callId, typeof rule.say === 'function' ? rule.say(match) : rule.say);
    const { tool, args } = rule.call;
    return toolCall(callId, tool, typeof args === 'function' ? args(match) : args);
  }
  return undefined;
}

/** A tool result as the prompt carries it (AI SDK v2 `tool-result` part). */
type ToolResultPart = { toolName?: string; output?: { type?: string; value?: unknown } };

function toolResultsOf(message: PromptMessage): ToolResultPart[] {
  return Array.isArray(message.content) ? (message.content as ToolResultPart[]) : [];
}

function outcomeOf(result: ToolResultPart): ToolOutcome {
  const failed = result.output?.type === 'error-text' || result.output?.type === 'error-json';
  return { toolName: result.toolName ?? '', value: result.output?.value, failed };
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
  return text(
    callId,
    toolResultsOf(message)
      .map((result) => resultLine(result, input))
      .join(' '),
  );
}

/** The demo's sentence for one tool result. */
function resultLine(r: ToolResultPart, input: string): string {
  const { value, failed } = outcomeOf(r);
  const shown = typeof value === 'string' ? value : JSON.stringify(value);
  if (failed) return `The tool ${r.toolName} failed: ${shown}`;
  if (r.toolName === WORKING_MEMORY_TOOL) return `Noted: ${factToRemember(input) ?? shown}`;
  if (r.toolName === RESEARCHER_TOOL) return `Summary: ${textOr((value as { text?: unknown } | undefined)?.text, shown)}`;
  if (r.toolName === DRAFT_TOOL) return `Done: ${textOr((value as { result?: { text?: unknown } } | undefined)?.result?.text, shown)}`;
  if (r.toolName === 'delete_file') {
    // An approved call returns `{ deleted }`; a declined one reaches the model as the reason alone.
    return shown.includes('"deleted"') ? `Deleted as requested: ${shown}` : `I did not delete the file: ${shown}`;
  }
  return `The tool ${r.toolName} returned ${shown}`;
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
