import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MastraChunk } from '../../src/translate/chunks.js';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHUNKS_DIR = join(REPO_ROOT, 'test', 'fixtures', 'chunks');

/** One recorded chunk sequence (`scripts/record-fixtures.ts`): a run's `fullStream` or a thread subscription. */
export interface ChunkFixture {
  scenario: string;
  source: 'stream' | 'subscription';
  chunks: MastraChunk[];
}

export function loadChunkFixtures(): ChunkFixture[] {
  return readdirSync(CHUNKS_DIR)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => JSON.parse(readFileSync(join(CHUNKS_DIR, name), 'utf8')) as ChunkFixture);
}

/**
 * The recorded echo run stretched to `deltas` text deltas by repeating its first recorded
 * `text-delta` chunk (each copy a fresh object, as Mastra hands out): a long answer's shape.
 */
export function longEcho(fixtures: readonly ChunkFixture[], deltas: number): ChunkFixture {
  const echo = fixtures.find((f) => f.scenario === 'echo');
  if (!echo) throw new Error('test/fixtures/chunks/echo.json is missing');
  const first = echo.chunks.findIndex((c) => c.type === 'text-delta');
  const last = echo.chunks.findLastIndex((c) => c.type === 'text-delta');
  const delta = echo.chunks[first];
  const repeated = Array.from({ length: deltas }, () => structuredClone(delta));
  return { scenario: `echo-${deltas}`, source: 'stream', chunks: [...echo.chunks.slice(0, first), ...repeated, ...echo.chunks.slice(last + 1)] };
}

/** Whether the module at `url` is the script node was started with (`node bench/x.ts`). */
export function isMain(url: string): boolean {
  return !!process.argv[1] && fileURLToPath(url) === resolve(process.argv[1]);
}
