/**
 * What a user of `npm start` gets, beside Mastra's own route on the same storage: the standalone
 * server with its defaults (the demo agent with working memory and a sub-agent, a LibSQL file, the
 * durable inbox, limits on, the request log at `info`) and `@mastra/hono`'s
 * `POST /api/agents/demo/stream` over the same demo agent on a LibSQL file of its own. Each stream
 * is a user of its own (limits are per resource) on a new thread. Rounds interleaved (A B, then
 * B A); events/s is compared per repetition, time to first event per server.
 */
import type { RoundResult, RoundSpec } from '../load.js';
import { resolve } from 'node:path';
import { REPO_ROOT } from './fixtures.js';
import { BenchProcess, startServer, startStandalone, withCpu, type BenchServer } from './procs.js';
import { median, percentile } from './stats.js';

export interface AsStartedPlan {
  levels: Array<{ concurrency: number; streams: number; words: number }>;
  reps: number;
  warmupRounds: number;
  /** Another checkout's standalone server measured beside this one (`--baseline=<dir>`). */
  baselineDir?: string;
}

export interface AsStartedTarget {
  eventsPerSec: number;
  samples: number[];
  ttfe: { p50: number; p99: number };
  /** The server's CPU (user + system) per stream, median over the repetitions: steadier than events/s on a shared machine. */
  cpuMsPerRun: number;
  errors: string[];
}

export interface AsStartedLevel {
  concurrency: number;
  streams: number;
  words: number;
  bridge: AsStartedTarget;
  mastra: AsStartedTarget;
  /** With `baselineDir`: that checkout's server, in the same rounds. */
  baseline?: AsStartedTarget;
  pairRatios: number[];
  medianPairRatio: number;
}

export interface AsStartedResult {
  plan: AsStartedPlan;
  levels: AsStartedLevel[];
  /** Main-thread CPU profiles written with `--profile`, per server. */
  profileDirs?: Record<string, string>;
}

/** A round's result with the serving process's CPU over it. */
type MeasuredRound = RoundResult & { cpuMs: number; streams: number };

type Name = 'bridge' | 'mastra' | 'baseline';

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

function summarise(rounds: MeasuredRound[]): AsStartedTarget {
  const ttfes = rounds.flatMap((r) => r.samples.map((s) => s.ttfe));
  return {
    eventsPerSec: median(rounds.map((r) => r.eventsPerSec)),
    samples: rounds.map((r) => r.eventsPerSec),
    ttfe: { p50: percentile(ttfes, 50), p99: percentile(ttfes, 99) },
    cpuMsPerRun: median(rounds.map((r) => r.cpuMs / r.streams)),
    errors: rounds.flatMap((r) => r.errors),
  };
}

export async function runAsStartedPhase(plan: AsStartedPlan, profile = false): Promise<AsStartedResult> {
  log('as started: the standalone server with its defaults, and Mastra’s route, each on a LibSQL file…');
  const profileDirs = profile
    ? {
        'asstarted-bridge': resolve(REPO_ROOT, 'bench/results/profiles/asstarted-bridge'),
        'asstarted-mastra': resolve(REPO_ROOT, 'bench/results/profiles/asstarted-mastra'),
      }
    : undefined;
  const flags = (dir: keyof NonNullable<typeof profileDirs>) => (profileDirs ? ['--cpu-prof', `--cpu-prof-dir=${profileDirs[dir]}`] : []);
  const named = (name: Name) => (server: BenchServer) => ({ ...server, name });
  const servers: Array<BenchServer & { name: Name }> = await Promise.all([
    startStandalone('bridge', { env: { BENCH_AS_STARTED: '1' }, flags: flags('asstarted-bridge') }).then(named('bridge')),
    startServer('mastra', 'bench/servers/mastra-route.ts', { env: { BENCH_STORAGE: 'libsql' }, flags: flags('asstarted-mastra') }).then(named('mastra')),
    ...(plan.baselineDir ? [startStandalone('baseline', { baselineDir: plan.baselineDir, env: { BENCH_AS_STARTED: '1' } }).then(named('baseline'))] : []),
  ]);
  const load = new BenchProcess('bench/load.ts');
  await load.ready();
  const round = async (server: BenchServer & { name: Name }, level: Omit<RoundSpec, 'target' | 'origin'>): Promise<MeasuredRound> => {
    // The load's target names the input format: a baseline bridge takes the bridge's.
    const target = server.name === 'mastra' ? 'mastra' : 'bridge';
    const result = await withCpu(server.process.pid, () =>
      load.request<RoundResult>({ cmd: 'round', target, origin: server.origin, resourcePerStream: true, ...level }, 'round'),
    );
    return { ...result, streams: level.streams };
  };
  const levels: AsStartedLevel[] = [];
  try {
    // At the measured concurrency and long enough for the JIT: shorter warm-ups left the first
    // repetitions a third dearer in CPU than the last.
    for (let i = 0; i < plan.warmupRounds; i++) for (const server of servers) await round(server, { concurrency: 16, streams: 64, words: 20 });
    for (const level of plan.levels) {
      const measured: Record<Name, MeasuredRound[]> = { bridge: [], mastra: [], baseline: [] };
      for (let rep = 0; rep < plan.reps; rep++) {
        for (const server of rep % 2 === 0 ? servers : [...servers].reverse()) measured[server.name].push(await round(server, level));
        log(
          `as started: c=${level.concurrency} ${level.words} words rep ${rep + 1}/${plan.reps}: ${servers.map((s) => `${s.name} ${measured[s.name][rep].eventsPerSec.toFixed(0)} events/s, ${(measured[s.name][rep].cpuMs / level.streams).toFixed(1)} ms CPU per run`).join('; ')}`,
        );
      }
      const [bridge, mastra] = [summarise(measured.bridge), summarise(measured.mastra)];
      const pairRatios = bridge.samples.map((value, i) => value / mastra.samples[i]);
      const baseline = plan.baselineDir ? summarise(measured.baseline) : undefined;
      levels.push({ ...level, bridge, mastra, ...(baseline && { baseline }), pairRatios, medianPairRatio: median(pairRatios) });
    }
  } finally {
    await Promise.all([load.stop(), ...servers.map((s) => s.process.stop())]);
  }
  return { plan, levels, profileDirs };
}
