import { MastraLanguageModelV2Mock } from '@mastra/core/test-utils/llm-mock';

const USAGE = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };

/**
 * A model that always answers `text` (one delta per word), whatever it is asked: lets a test tell
 * which agent answered a run without relying on the demo script.
 */
export function fixedTextModel(text: string, ids: { provider?: string; modelId?: string } = {}): MastraLanguageModelV2Mock {
  return new MastraLanguageModelV2Mock({
    provider: ids.provider ?? 'test',
    modelId: ids.modelId ?? 'fixed',
    doStream: async () => {
      const id = 'fixed-text';
      const parts = [
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id },
        ...(text.match(/\S+\s*/g) ?? [text]).map((delta) => ({ type: 'text-delta', id, delta })),
        { type: 'text-end', id },
        { type: 'finish', finishReason: 'stop', usage: USAGE },
      ];
      const stream = new ReadableStream<never>({
        start(controller) {
          for (const part of parts) controller.enqueue(part as never);
          controller.close();
        },
      });
      return { stream, request: { body: '{}' }, response: { headers: {} } };
    },
  });
}
