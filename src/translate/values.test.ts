import { readFileSync } from 'node:fs';
import { TokenUsageSchema } from '@ag-ui/core/schemas';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TOOL_DECLINE_REASON } from '@mastra/core/agent';
import { declinedContent, errorMessage, jsonText, signalText, toTokenUsage } from './values.js';

/** A chunk of a fixture recorded from a real demo-agent run (`scripts/record-fixtures.ts`). */
function recordedChunk(scenario: string, type: string): { payload: Record<string, any> } {
  const { chunks } = JSON.parse(readFileSync(new URL(`../../test/fixtures/chunks/${scenario}.json`, import.meta.url), 'utf8')) as {
    chunks: Array<{ type: string; payload: Record<string, any> }>;
  };
  const chunk = chunks.find((c) => c.type === type);
  if (!chunk) throw new Error(`${scenario} has no ${type} chunk`);
  return chunk;
}

describe('jsonText', () => {
  it('keeps strings as they are', () => {
    expect(jsonText('plain')).toBe('plain');
    expect(jsonText('')).toBe('');
    expect(jsonText('{"already":"json"}')).toBe('{"already":"json"}');
  });

  it('writes everything else as JSON', () => {
    expect(jsonText({ city: 'Rome', tempC: 13 })).toBe('{"city":"Rome","tempC":13}');
    expect(jsonText([1, 'a'])).toBe('[1,"a"]');
    expect(jsonText(42)).toBe('42');
    expect(jsonText(false)).toBe('false');
    expect(jsonText(null)).toBe('null');
  });

  it('writes undefined as null (a tool that returned nothing)', () => {
    expect(jsonText(undefined)).toBe('null');
  });

  it('always returns a string, even for what JSON cannot write', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(typeof jsonText(circular)).toBe('string');
    expect(jsonText(10n)).toBe('10');
    // JSON.stringify gives `undefined` (not a string) for these.
    expect(typeof jsonText(() => 1)).toBe('string');
    expect(typeof jsonText(Symbol('s'))).toBe('string');
  });
});

describe('errorMessage', () => {
  it('takes a string as the message', () => {
    expect(errorMessage('boom')).toBe('boom');
  });

  it('takes the message of an Error or an error-like object', () => {
    expect(errorMessage(new Error('demo model failure'))).toBe('demo model failure');
    expect(errorMessage({ name: 'Error', message: 'demo model failure' })).toBe('demo model failure');
  });

  it('takes the tool’s own message from a Mastra-wrapped tool error (recorded tool-error chunk)', () => {
    const { error } = recordedChunk('server-tool-error', 'tool-error').payload;
    expect(error.id).toBe('TOOL_EXECUTION_FAILED');
    expect(errorMessage(error)).toBe(error.cause.message);
    expect(errorMessage(error)).toBe('no weather station in Atlantis');
  });

  it('prefers the cause’s message when the wrapper says something else', () => {
    expect(errorMessage({ message: 'Tool execution failed', cause: { message: 'no weather station in Atlantis' } })).toBe('no weather station in Atlantis');
    expect(errorMessage(new Error('wrapper', { cause: new Error('inner') }))).toBe('inner');
  });

  it('falls back to the outer message when the cause has none', () => {
    expect(errorMessage({ message: 'outer', cause: { message: '' } })).toBe('outer');
    expect(errorMessage({ message: 'outer', cause: 'a string cause' })).toBe('outer');
  });

  it('writes anything without a message as JSON', () => {
    expect(errorMessage({ code: 'E42' })).toBe('{"code":"E42"}');
    expect(errorMessage({ message: '' })).toBe('{"message":""}');
    expect(errorMessage(42)).toBe('42');
    expect(errorMessage(undefined)).toBe('null');
  });

  it('takes the message of the recorded model error chunk', () => {
    expect(errorMessage(recordedChunk('model-error', 'error').payload.error)).toBe('demo model failure');
  });
});

describe('declinedContent', () => {
  it('says the reason the user gave', () => {
    expect(JSON.parse(declinedContent('delete_file', 'keep it'))).toEqual({
      declined: true,
      message: 'The call to delete_file was declined: keep it',
      reason: 'keep it',
    });
  });

  it("has no reason when the user gave none, also when Mastra filled in its own sentence for the model", () => {
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
    const usage = toTokenUsage({ inputTokens: Number.NaN, outputTokens: 2.5, totalTokens: -1, reasoningTokens: Infinity, cachedInputTokens: 7 }, { modelProvider: 42, modelId: 'm' });
    expect(usage).toEqual({ model: 'm', cachedInputTokens: 7 });
    expect(TokenUsageSchema.safeParse(usage).success).toBe(true);
  });
});
