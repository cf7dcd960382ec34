import type { TokenUsage } from '@ag-ui/core';
import { DECLINE_REASON } from '../mastra/index.js';
import { errorMessage, jsonText } from '../text.js';

/** A finished call's result content: the result as JSON text (a string as it is), or the error. */
export function toolResultContent(result: unknown, isError: boolean | undefined): string {
  return isError ? toolErrorContent(result) : jsonText(result);
}

/** A failed call's result content, `{"error":"<message>"}`: the same on the live stream and in history. */
export function toolErrorContent(error: unknown): string {
  return jsonText({ error: errorMessage(error) });
}

/**
 * A declined approval's result content, the same on the live stream and in history:
 * `{"declined":true,"message":"The call to <tool> was declined: <reason>","reason":"<reason>"}`.
 * Mastra fills a missing reason with its own sentence for the model (`DECLINE_REASON`); a UI shows
 * the user's reason, so that sentence counts as none.
 */
export function declinedContent(toolName: string, reason?: string): string {
  const given = reason && reason !== DECLINE_REASON ? reason : undefined;
  return jsonText({ declined: true, message: `The call to ${toolName} was declined${given ? `: ${given}` : '.'}`, reason: given });
}

/** Plain text of signal contents (a string or text/file parts). */
export function signalText(contents: unknown): string {
  if (typeof contents === 'string') return contents;
  if (!Array.isArray(contents)) return jsonText(contents);
  return contents
    .map((part: { type?: string; text?: string; filename?: string }) =>
      part?.type === 'text' ? (part.text ?? '') : `[file${part?.filename ? ` ${part.filename}` : ''}]`,
    )
    .join('');
}

type UsageLike = { inputTokens?: number; outputTokens?: number; totalTokens?: number; reasoningTokens?: number; cachedInputTokens?: number };
type ModelMetadata = { modelProvider?: unknown; modelId?: unknown };

/** AG-UI `TokenUsage` from Mastra's usage and step metadata; `undefined` when the model reported nothing. */
export function toTokenUsage(usage: UsageLike | undefined, metadata: unknown): TokenUsage | undefined {
  if (!usage) return undefined;
  const meta = (metadata ?? {}) as ModelMetadata;
  const out: TokenUsage = {};
  if (typeof meta.modelProvider === 'string') out.provider = meta.modelProvider;
  if (typeof meta.modelId === 'string') out.model = meta.modelId;
  for (const key of ['inputTokens', 'outputTokens', 'totalTokens', 'reasoningTokens', 'cachedInputTokens'] as const) {
    const value = usage[key];
    // AG-UI counts are non-negative integers; one bad count must not make RUN_FINISHED invalid.
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) out[key] = value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
