/**
 * What a user of `npm start` gets, beside Mastra's own route on the same storage: the standalone
 * server with its defaults (the demo agent with working memory and a sub-agent, a LibSQL file, the
 * durable inbox, limits on, the request log at `info`) and `@mastra/hono`'s
 * `POST /api/agents/demo/stream` over the same demo agent on a LibSQL file of its own. Each stream
 * is a user of its own (limits are per resource) on a new thread. Rounds interleaved (A B, then
 * B A); events/s is compared per repetition, time to first event per server.
 */
import type { RoundResult, RoundSpec } from '../load.js';
import { BenchProcess, startServer, startStandalone, type BenchServer } from './procs.js';
import { median, percentile } from './stats.js';

export interface AsStartedPlan {
  levels: Array<{ concurrency: number; streams: number; words: number }>;
  reps: number;
  warmupRounds: number;
}

export interface AsStartedTarget {
  eventsPerSec: number;
  samples: number[];
  ttfe: { p50: number; p99: number };
  errors: string[];
}

export interface AsStartedLevel {
  concurrency: number;
  streams: number;
  words: number;
  bridge: AsStartedTarget;
  mastra: AsStartedTarget;
  pairRatios: number[];
  medianPairRatio: number;
}

export interface AsStartedResult {
  plan: AsStartedPlan;
  levels: AsStartedLevel[];
}

type Name = 'bridge' | 'mastra';

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

function summarise(rounds: RoundResult[]): AsStartedTarget {
  const ttfes = rounds.flatMap((r) => r.samples.map((s) => s.ttfe));
  return {
    eventsPerSec: median(rounds.map((r) => r.eventsPerSec)),
    samples: rounds.map((r) => r.eventsPerSec),
    ttfe: { p50: percentile(ttfes, 50), p99: percentile(ttfes, 99) },
    errors: rounds.flatMap((r) => r.errors),
  };
}

export async function runAsStartedPhase(plan: AsStartedPlan): Promise<AsStartedResult> {
  log('as started: the standalone server with its defaults, and Mastra’s route, each on a LibSQL file…');
  const servers: Array<BenchServer & { name: Name }> = await Promise.all([
    startStandalone('bridge', { env: { BENCH_AS_STARTED: '1' } }).then((s) => ({ ...s, name: 'bridge' as const })),
    startServer('mastra', 'bench/servers/mastra-route.ts', { env: { BENCH_STORAGE: 'libsql' } }).then((s) => ({ ...s, name: 'mastra' as const })),
  ]);
  const load = new BenchProcess('bench/load.ts');
  await load.ready();
  const round = (server: BenchServer & { name: Name }, level: Omit<RoundSpec, 'target' | 'origin'>) =>
    load.request<RoundResult>({ cmd: 'round', target: server.name, origin: server.origin, resourcePerStream: true, ...level }, 'round');
  const levels: AsStartedLevel[] = [];
  try {
    for (let i = 0; i < plan.warmupRounds; i++) for (const server of servers) await round(server, { concurrency: 4, streams: 8, words: 20 });
    for (const level of plan.levels) {
      const measured: Record<Name, RoundResult[]> = { bridge: [], mastra: [] };
      for (let rep = 0; rep < plan.reps; rep++) {
        for (const server of rep % 2 === 0 ? servers : [...servers].reverse()) measured[server.name].push(await round(server, level));
        log(`as started: c=${level.concurrency} ${level.words} words rep ${rep + 1}/${plan.reps}: ${servers.map((s) => `${s.name} ${measured[s.name][rep].eventsPerSec.toFixed(0)} events/s`).join(', ')}`);
      }
      const [bridge, mastra] = [summarise(measured.bridge), summarise(measured.mastra)];
      const pairRatios = bridge.samples.map((value, i) => value / mastra.samples[i]);
      levels.push({ ...level, bridge, mastra, pairRatios, medianPairRatio: median(pairRatios) });
    }
  } finally {
    await Promise.all([load.stop(), ...servers.map((s) => s.process.stop())]);
  }
  return { plan, levels };
}
