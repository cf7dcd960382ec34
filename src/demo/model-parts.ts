import type { MastraLanguageModelV2Mock } from '@mastra/core/test-utils/llm-mock';

// How the scripted model's answers are streamed: the parts of an AI SDK v2 model stream for a
// text, a reasoning then a text, or a tool call, and the stream (or the whole answer) they make.

/** One part of a V2 model stream, as the AI SDK provider spec defines it. */
type DoStream = Extract<NonNullable<NonNullable<ConstructorParameters<typeof MastraLanguageModelV2Mock>[0]>['doStream']>, (...args: never[]) => unknown>;
/** A part of a model's stream, as Mastra's model interface (AI SDK v2) types it. */
export type StreamPart = Awaited<ReturnType<DoStream>>['stream'] extends ReadableStream<infer P> ? P : never;
type DoGenerate = Extract<NonNullable<NonNullable<ConstructorParameters<typeof MastraLanguageModelV2Mock>[0]>['doGenerate']>, (...args: never[]) => unknown>;
/** What a model answers to `generate()`: the whole answer at once. */
type Generated = Awaited<ReturnType<DoGenerate>>;

const USAGE = { inputTokens: 12, outputTokens: 8, totalTokens: 20 };
const HEAD: StreamPart[] = [{ type: 'stream-start', warnings: [] }];

/** A script's parts as one answer: each text and reasoning joined, tool calls as they are. */
export function generated(parts: StreamPart[]): Pick<Generated, 'content' | 'finishReason' | 'usage' | 'warnings'> {
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

function words(value: string): string[] {
  return value.match(/\S+\s*/g) ?? [value];
}

export function text(callId: string, value: string, id = 'text'): StreamPart[] {
  const textId = `${callId}-${id}`;
  return [
    ...HEAD,
    { type: 'text-start', id: textId },
    ...words(value).map((delta) => ({ type: 'text-delta' as const, id: textId, delta })),
    { type: 'text-end', id: textId },
    { type: 'finish', finishReason: 'stop', usage: USAGE },
  ];
}

export function reasoningThenText(callId: string, answerText: string): StreamPart[] {
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

export function toolCall(callId: string, toolName: string, args: unknown): StreamPart[] {
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
export function toStream(parts: StreamPart[], delayMs: number, signal?: AbortSignal): ReadableStream<StreamPart> {
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
