import { describe, expect, it } from 'vitest';
import { missingModelKey } from './model-key.js';

describe('missingModelKey', () => {
  it('names the key a known provider needs when it is not set', () => {
    expect(missingModelKey('openai/gpt-5-mini', {})).toBe('MODEL=openai/gpt-5-mini needs OPENAI_API_KEY (the OpenAI API key)');
    expect(missingModelKey('openai/gpt-5-mini', { OPENAI_API_KEY: '' })).toMatch(/needs OPENAI_API_KEY/);
    expect(missingModelKey('anthropic/claude-sonnet-4-5', {})).toMatch(/needs ANTHROPIC_API_KEY/);
  });

  it('is nothing once the key is set, or for a provider Mastra does not know (the app may supply it)', () => {
    expect(missingModelKey('openai/gpt-5-mini', { OPENAI_API_KEY: 'sk-test' })).toBeUndefined();
    expect(missingModelKey('my-gateway/model', {})).toBeUndefined();
  });
});
