import { CAPTURED_TOOL_RESULTS, type CapturedToolResult, type CapturedToolResultsChunk } from '../translate/chunks.js';

/** The parts of a finished step that carry tool outcomes (AI SDK step result, as Mastra passes it). */
interface StepLike {
  toolResults?: Array<{ toolCallId?: string; output?: unknown; result?: unknown }>;
  content?: Array<{ type?: string; toolCallId?: string; error?: unknown }>;
}

/**
 * Captures one run's server-tool outcomes as the tools finish (Mastra's `onStepFinish`), so that a
 * run whose stream omits a `tool-result` chunk still tells the client what each server tool
 * returned. The run hands what it captured to its translator as a chunk, just before a step ends.
 *
 * @example
 * const capture = new ResultCapture();
 * const output = await agent.stream(messages, { onStepFinish: capture.onStepFinish });
 * for await (const chunk of output.fullStream) {
 *   if (chunk.type === 'step-finish') emit(translator.push(capture.take() ?? chunk)); // then the chunk itself
 * }
 */
export class ResultCapture {
  private captured: CapturedToolResult[] = [];

  /** Pass as the run's `onStepFinish`: records every tool result and error of the step. */
  readonly onStepFinish = (step: unknown): void => {
    const s = (step ?? {}) as StepLike;
    for (const r of s.toolResults ?? []) {
      if (r.toolCallId) this.captured.push({ toolCallId: r.toolCallId, result: r.output ?? r.result, isError: false });
    }
    for (const part of s.content ?? []) {
      if (part.type === 'tool-error' && part.toolCallId) this.captured.push({ toolCallId: part.toolCallId, result: part.error, isError: true });
    }
  };

  /** What was captured since the last call, as a chunk for the translator; `undefined` if nothing. */
  take(): CapturedToolResultsChunk | undefined {
    if (this.captured.length === 0) return undefined;
    const results = this.captured;
    this.captured = [];
    return { type: CAPTURED_TOOL_RESULTS, results };
  }
}
