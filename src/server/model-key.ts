import { getProviderConfig } from '@mastra/core/llm';

/**
 * Why `MODEL` cannot answer, found at start rather than at the first run: its provider is one Mastra
 * knows and none of the variables that hold that provider's key is set. `undefined` when it can
 * (or when the provider is not Mastra's own: a gateway of the app's may supply it).
 *
 * @example
 * missingModelKey('openai/gpt-5-mini', {}); // 'MODEL=openai/gpt-5-mini needs OPENAI_API_KEY (the OpenAI API key)'
 */
export function missingModelKey(model: string, env: NodeJS.ProcessEnv): string | undefined {
  const provider = model.split('/')[0];
  const config = getProviderConfig(provider);
  if (!config) return undefined;
  const names = ([] as string[]).concat(config.apiKeyEnvVar);
  if (names.length === 0 || names.some((name) => env[name])) return undefined;
  return `MODEL=${model} needs ${names.join(' or ')} (the ${config.name} API key)`;
}
