import { describe, expect, it } from 'vitest';
import { errorMessage, jsonText, redactedUrl, textOr } from './text.js';
import { recordedChunk } from '../test/support/chunks.js';

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

describe('redactedUrl', () => {
  it('masks the password of a connection URL, and only that', () => {
    expect(redactedUrl('postgres://app:s3cret@db:5432/app')).toBe('postgres://app:***@db:5432/app');
    expect(redactedUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
  });

  it('masks it in what URL cannot parse too', () => {
    expect(redactedUrl('not a url:s3cret@host')).toBe('not a url:***@host');
  });
});

describe('textOr', () => {
  it('keeps a string, writes a number or a boolean as text', () => {
    expect(textOr('review', '')).toBe('review');
    expect(textOr(3, '')).toBe('3');
    expect(textOr(false, '')).toBe('false');
  });

  it('falls back for anything else: never [object Object]', () => {
    expect(textOr(undefined, 'success')).toBe('success');
    expect(textOr(null, 'unknown')).toBe('unknown');
    expect(textOr({ id: 'x' }, '')).toBe('');
    expect(textOr(['a'], '-')).toBe('-');
  });
});
