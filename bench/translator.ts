/**
 * The translator alone, in one process: `RunTranslator` (or `ThreadTranslator` for recorded thread
 * subscriptions) plus `@ag-ui/encoder`'s SSE encoding, fed recorded chunk sequences in a loop.
 *
 *   npx tsx bench/translator.ts [--quick]     # prints the result as JSON
 */
import type { Event } from '@ag-ui/core';
import { EventEncoder } from '@ag-ui/encoder';
import { ThreadTranslator } from '../src/translate/thread-translator.js';
import { RunTranslator } from '../src/translate/run-translator.js';
import { isMain, loadChunkFixtures, longEcho, type ChunkFixture } from './lib/fixtures.js';
import { median } from './lib/stats.js';

/** Deltas in the synthetic long answer: the size of the HTTP bench's echo. */
export const LONG_ECHO_DELTAS = 2000;

export interface TranslatorWorkload {
  name: string;
  /** Chunks per pass over the workload. */
  chunksPerPass: number;
  /** Median over the repetitions. */
  chunksPerSec: number;
  usPerChunk: number;
  eventsPerSec: number;
  /** The same loop without encoding: how much of the cost is the translator itself. */
  translateOnlyChunksPerSec: number;
  samples: number[];
}

export interface TranslatorResult {
  workloads: TranslatorWorkload[];
}

/** One pass over every sequence; returns events produced and bytes encoded (kept so nothing is optimised away). */
function pass(fixtures: readonly ChunkFixture[], encoder: EventEncoder | undefined): { events: number; bytes: number } {
  let events = 0;
  let bytes = 0;
  const sink = (batch: Event[]) => {
    events += batch.length;
    if (encoder) for (const event of batch) bytes += encoder.encodeSSE(event).length;
  };
  for (const fixture of fixtures) {
    if (fixture.source === 'subscription') {
      const t = new ThreadTranslator('bench-thread');
      for (const chunk of fixture.chunks) sink(t.push(chunk));
      sink(t.close());
    } else {
      const t = new RunTranslator({ threadId: 'bench-thread', runId: 'bench-run' });
      sink(t.start());
      for (const chunk of fixture.chunks) sink(t.push(chunk));
      sink(t.end());
    }
  }
  return { events, bytes };
}

/** Runs passes for `ms` and returns chunks/s and events/s. */
function timed(fixtures: readonly ChunkFixture[], chunksPerPass: number, ms: number, encoder?: EventEncoder) {
  let passes = 0;
  let events = 0;
  const start = performance.now();
  let elapsed = 0;
  do {
    events += pass(fixtures, encoder).events;
    passes++;
    elapsed = performance.now() - start;
  } while (elapsed < ms);
  return { chunksPerSec: (passes * chunksPerPass * 1000) / elapsed, eventsPerSec: (events * 1000) / elapsed };
}

function measure(name: string, fixtures: readonly ChunkFixture[], quick: boolean): TranslatorWorkload {
  const chunksPerPass = fixtures.reduce((n, f) => n + f.chunks.length, 0);
  const encoder = new EventEncoder();
  const reps = quick ? 3 : 7;
  const ms = quick ? 250 : 800;
  timed(fixtures, chunksPerPass, quick ? 300 : 1000, encoder); // warm-up: JIT
  const runs = Array.from({ length: reps }, () => timed(fixtures, chunksPerPass, ms, encoder));
  const plain = Array.from({ length: reps }, () => timed(fixtures, chunksPerPass, ms).chunksPerSec);
  const samples = runs.map((r) => r.chunksPerSec);
  const chunksPerSec = median(samples);
  return {
    name,
    chunksPerPass,
    chunksPerSec,
    usPerChunk: 1e6 / chunksPerSec,
    eventsPerSec: median(runs.map((r) => r.eventsPerSec)),
    translateOnlyChunksPerSec: median(plain),
    samples,
  };
}

export function runTranslatorBench(quick: boolean): TranslatorResult {
  const fixtures = loadChunkFixtures();
  return {
    workloads: [
      measure(`recorded sequences (${fixtures.length} files)`, fixtures, quick),
      measure(`long echo (${LONG_ECHO_DELTAS} text deltas)`, [longEcho(fixtures, LONG_ECHO_DELTAS)], quick),
    ],
  };
}

if (isMain(import.meta.url) && process.send) {
  // Under bench/run.ts: one run on request, answered over IPC.
  process.once('message', (message: { quick?: boolean }) => {
    process.send?.({ translator: runTranslatorBench(!!message.quick) }, () => process.exit(0));
  });
  process.send({ ready: true });
} else if (isMain(import.meta.url)) {
  console.log(JSON.stringify(runTranslatorBench(process.argv.includes('--quick')), null, 2));
}
