import { injectable } from 'inversify';
import type { CapturedResult } from '../translate/run-translator.js';

/** The parts of a finished step that carry tool outcomes (AI SDK step result, as Mastra passes it). */
interface StepLike {
  toolResults?: Array<{ toolCallId?: string; output?: unknown; result?: unknown }>;
  content?: Array<{ type?: string; toolCallId?: string; error?: unknown }>;
}

/** Captured outcomes of one run's server tools, keyed by tool call id. */
export class RunCapture {
  private readonly results = new Map<string, CapturedResult>();

  /** Pass as the run's `onStepFinish`: records every tool result and error of the step. */
  readonly onStepFinish = (step: unknown): void => {
    const s = (step ?? {}) as StepLike;
    for (const r of s.toolResults ?? []) {
      if (r.toolCallId) this.results.set(r.toolCallId, { result: r.output ?? r.result, isError: false });
    }
    for (const part of s.content ?? []) {
      if (part.type === 'tool-error' && part.toolCallId) this.results.set(part.toolCallId, { result: part.error, isError: true });
    }
  };

  /** Pass as the translator's `capturedResult`. */
  readonly lookup = (toolCallId: string): CapturedResult | undefined => this.results.get(toolCallId);
}

/**
 * Captures server-tool results as the tools finish, so that a run whose stream omits a
 * `tool-result` chunk still tells the client what each server tool returned.
 *
 * @example
 * const capture = captures.begin();
 * agent.stream(messages, { onStepFinish: capture.onStepFinish });
 * new RunTranslator({ …, capturedResult: capture.lookup });
 */
@injectable()
export class ResultCapture {
  begin(): RunCapture {
    return new RunCapture();
  }
}
