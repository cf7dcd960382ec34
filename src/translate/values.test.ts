import { TokenUsageSchema } from '@ag-ui/core/schemas';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TOOL_DECLINE_REASON } from '@mastra/core/agent';
import { declinedContent, signalText, toTokenUsage } from './values.js';
import { recordedChunk } from '../../test/support/chunks.js';

describe('declinedContent', () => {
  it('says the reason the user gave', () => {
    expect(JSON.parse(declinedContent('delete_file', 'keep it'))).toEqual({
      declined: true,
      message: 'The call to delete_file was declined: keep it',
      reason: 'keep it',
    });
  });

  it('has no reason when the user gave none, also when Mastra filled in its own sentence for the model', () => {
    for (const reason of [undefined, '', DEFAULT_TOOL_DECLINE_REASON]) {
      expect(declinedContent('delete_file', reason)).toBe('{"declined":true,"message":"The call to delete_file was declined."}');
    }
  });
});

describe('signalText', () => {
  it('keeps string contents', () => {
    expect(signalText('Build #42 finished')).toBe('Build #42 finished');
    expect(signalText('')).toBe('');
  });

  it('joins text parts and shows files as placeholders', () => {
    expect(
      signalText([
        { type: 'text', text: 'look at ' },
        { type: 'file', data: 'AAAA', mediaType: 'image/png', filename: 'chart.png' },
        { type: 'text', text: ' and ' },
        { type: 'file', data: 'BBBB', mediaType: 'application/pdf' },
      ]),
    ).toBe('look at [file chart.png] and [file]');
    expect(signalText([])).toBe('');
    expect(signalText([{ type: 'text' }])).toBe('');
  });

  it('writes other shapes as JSON', () => {
    expect(signalText({ note: 'x' })).toBe('{"note":"x"}');
    expect(signalText(undefined)).toBe('null');
  });
});

describe('toTokenUsage', () => {
  it('is undefined when the model reported no usage', () => {
    expect(toTokenUsage(undefined, { modelProvider: 'demo', modelId: 'scripted' })).toBeUndefined();
    expect(toTokenUsage({}, undefined)).toBeUndefined();
  });

  it('maps the recorded finish chunk: counts from the usage, provider and model from the metadata, raw dropped', () => {
    const { output, metadata } = recordedChunk('server-tool', 'finish').payload;
    const usage = toTokenUsage(output.usage, metadata);
    expect(usage).toEqual({
      provider: metadata.modelProvider,
      model: metadata.modelId,
      inputTokens: output.usage.inputTokens,
      outputTokens: output.usage.outputTokens,
      totalTokens: output.usage.totalTokens,
    });
    expect(TokenUsageSchema.safeParse(usage).success).toBe(true);
  });

  it('keeps zero counts (recorded signal-persist finish, no metadata)', () => {
    const { output, metadata } = recordedChunk('signal-persist', 'finish').payload;
    expect(metadata).toBeUndefined();
    expect(toTokenUsage(output.usage, metadata)).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });
  });

  it('keeps the provider and model of a step that reported empty usage (recorded model-error step)', () => {
    const { output, metadata } = recordedChunk('model-error', 'step-finish').payload;
    expect(output.usage).toEqual({});
    expect(toTokenUsage(output.usage, metadata)).toEqual({ provider: 'demo', model: 'scripted' });
  });

  it('maps reasoning and cached input tokens', () => {
    expect(toTokenUsage({ inputTokens: 10, outputTokens: 5, totalTokens: 15, reasoningTokens: 3, cachedInputTokens: 4 }, {})).toEqual({
      inputTokens: 10,
      outputTokens: 5,
      totalTokens: 15,
      reasoningTokens: 3,
      cachedInputTokens: 4,
    });
  });

  it('drops counts AG-UI cannot carry (not a non-negative integer), so RUN_FINISHED stays valid', () => {
    const usage = toTokenUsage(
      { inputTokens: Number.NaN, outputTokens: 2.5, totalTokens: -1, reasoningTokens: Infinity, cachedInputTokens: 7 },
      { modelProvider: 42, modelId: 'm' },
    );
    expect(usage).toEqual({ model: 'm', cachedInputTokens: 7 });
    expect(TokenUsageSchema.safeParse(usage).success).toBe(true);
  });
});
