import { readFileSync } from 'node:fs';

/** The chunks of a sequence recorded from a real demo-agent run (`scripts/record-fixtures.ts`, `test/fixtures/chunks/`). */
export function recordedChunks(scenario: string): Array<{ type: string; payload: Record<string, any> }> {
  return (
    JSON.parse(readFileSync(new URL(`../fixtures/chunks/${scenario}.json`, import.meta.url), 'utf8')) as {
      chunks: Array<{ type: string; payload: Record<string, any> }>;
    }
  ).chunks;
}

/** The first chunk of `type` in a recorded run. */
export function recordedChunk(scenario: string, type: string): { payload: Record<string, any> } {
  const chunk = recordedChunks(scenario).find((c) => c.type === type);
  if (!chunk) throw new Error(`${scenario} has no ${type} chunk`);
  return chunk;
}
