/**
 * End to end over loopback HTTP: this bridge's `POST /agui/run`, Mastra's own stream route and
 * `MastraAgent` behind Hono, each server in its own process, the load generator in another.
 * Rounds interleave the servers (A B C, then C B A, …) so that drift on a shared machine hits
 * them alike; every ratio is taken between rounds of the same repetition. In a full run each
 * concurrency level gets fresh server processes: every run leaves its messages in the in-memory
 * store, so a process that served the earlier levels would carry a heap that makes its major GCs
 * land on some rounds and not others.
 *
 * With a baseline checkout (`--baseline=<dir>`), that checkout's bridge runs as a fourth server
 * in the same interleave: before/after ratios of an optimisation, measured in one run.
 */
import { resolve } from 'node:path';
import type { RoundResult, Target } from '../load.js';
import { REPO_ROOT } from './fixtures.js';
import { BenchProcess, rssOf, startServer, withCpu, type BenchServer, type Measured } from './procs.js';
import { median, percentile } from './stats.js';

export const TARGETS: readonly Target[] = ['bridge', 'mastra', 'agui'];

/** A benchmarked server: the three targets, and optionally the bridge of a baseline checkout. */
export type ServerName = Target | 'baseline';

export const SERVER_LABEL: Record<ServerName | 'floor', string> = {
  bridge: 'this bridge `POST /agui/run`',
  mastra: 'Mastra route `@mastra/hono` `/api/agents/demo/stream`',
  agui: '`@ag-ui/mastra` `MastraAgent` + Hono',
  baseline: 'baseline checkout of the bridge',
  floor: 'floor: Mastra loop alone, in-process, no HTTP',
};

const SERVER_FILE: Record<Target, string> = {
  bridge: 'bench/servers/bridge.ts',
  mastra: 'bench/servers/mastra-route.ts',
  agui: 'bench/servers/agui-mastra.ts',
};

export interface HttpPlan {
  words: number;
  concurrency: number[];
  /** Streams per round at a concurrency. */
  streams: (concurrency: number) => number;
  reps: number;
  warmupRounds: number;
  /** New server processes for each concurrency level (else one set serves every level: quicker). */
  freshServersPerLevel: boolean;
  /** A checkout (with its own `bench/servers/bridge.ts`) whose bridge runs as `baseline`. */
  baselineDir?: string;
}

export interface TargetSummary {
  eventsPerSec: number;
  samples: number[];
  eventsPerStream: number;
  ttfe: { p50: number; p99: number };
  firstDelta: { p50: number; p99: number };
  ttlb: { p50: number; p99: number };
  errors: string[];
  /** The server process's CPU time (user + system) per event, µs: median over the rounds. */
  cpuUsPerEvent: number;
  /** The server's resident memory when its level ended (MB): the heap every round of the level grew. */
  rssMb?: number;
}

export interface Comparison {
  /** Median of the bridge's events/s over the median of the other's. */
  ratioOfMedians: number;
  /** Median of the per-repetition ratios (bridge / other, same repetition). */
  medianPairRatio: number;
  pairRatios: number[];
}

export interface ConcurrencyResult {
  concurrency: number;
  streamsPerRound: number;
  targets: Partial<Record<ServerName, TargetSummary>> & Record<Target, TargetSummary>;
  floor: { eventsPerSec: number; samples: number[]; cpuUsPerEvent: number };
  vsMastra: Comparison;
  vsAgui: Comparison;
  vsBaseline?: Comparison;
}

export interface HttpResult {
  plan: Omit<HttpPlan, 'streams'> & { streamsPerRound: Record<number, number> };
  /** Timers the scripted model arms for one answer: with DEMO_DELAY_MS=0 (must be 0), and with 1 ms for 20 words (the check works). */
  modelTimers: { zero: number; oneMs: number };
  results: ConcurrencyResult[];
  /** Main-thread CPU profiles written with `--profile`, per server. */
  profileDirs?: Record<string, string>;
}

type FloorRound = { eventsPerSec: number; events: number };
const cpuUsPerEvent = (rounds: Array<Measured<{ events: number }>>) => median(rounds.map((r) => (r.cpuMs * 1000) / r.events));
type Server = BenchServer & { name: ServerName; kind: Target };

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

async function started(file: string): Promise<BenchProcess> {
  const proc = new BenchProcess(file);
  await proc.ready();
  return proc;
}

function summarise(rounds: Array<Measured<RoundResult>>): TargetSummary {
  const samples = rounds.flatMap((r) => r.samples);
  const pick = (key: 'ttfe' | 'firstDelta' | 'ttlb') => {
    const values = samples.map((s) => s[key]);
    return { p50: percentile(values, 50), p99: percentile(values, 99) };
  };
  return {
    eventsPerSec: median(rounds.map((r) => r.eventsPerSec)),
    samples: rounds.map((r) => r.eventsPerSec),
    eventsPerStream: median(samples.map((s) => s.events)),
    ttfe: pick('ttfe'),
    firstDelta: pick('firstDelta'),
    ttlb: pick('ttlb'),
    errors: rounds.flatMap((r) => r.errors),
    cpuUsPerEvent: cpuUsPerEvent(rounds),
  };
}

function compare(ours: number[], theirs: number[]): Comparison {
  const pairRatios = ours.map((value, i) => value / theirs[i]);
  return { ratioOfMedians: median(ours) / median(theirs), medianPairRatio: median(pairRatios), pairRatios };
}

async function startServers(plan: HttpPlan, profileDirs?: Record<string, string>): Promise<Server[]> {
  const flags = (name: string) => (profileDirs ? ['--cpu-prof', `--cpu-prof-dir=${profileDirs[name]}`] : []);
  const specs: Array<{ name: ServerName; kind: Target; file: string; cwd?: string }> = TARGETS.map((t) => ({ name: t, kind: t, file: SERVER_FILE[t] }));
  if (plan.baselineDir) specs.push({ name: 'baseline', kind: 'bridge', file: resolve(plan.baselineDir, SERVER_FILE.bridge), cwd: resolve(plan.baselineDir) });
  return Promise.all(specs.map(async (s) => ({ ...(await startServer(s.name, s.file, { flags: flags(s.name), cwd: s.cwd })), name: s.name, kind: s.kind })));
}

type Level = { servers: Server[]; floor: BenchProcess };

/** Starts the servers and the floor process (for every level, or once with `freshServersPerLevel` off). */
async function startLevel(plan: HttpPlan, profileDirs?: Record<string, string>): Promise<Level> {
  const [servers, floor] = await Promise.all([startServers(plan, profileDirs), started('bench/floor.ts')]);
  return { servers, floor };
}

async function stopLevel({ servers, floor }: Level): Promise<void> {
  await Promise.all([floor.stop(), ...servers.map((s) => s.process.stop())]);
}

function rounds(plan: HttpPlan, { floor }: Level, load: BenchProcess) {
  const words = plan.words;
  return {
    round: (server: Server, concurrency: number, streams: number) =>
      withCpu(server.process.pid, () =>
        load.request<RoundResult>({ cmd: 'round', target: server.kind, origin: server.origin, concurrency, streams, words }, 'round'),
      ),
    floorRound: (concurrency: number, streams: number) =>
      withCpu(floor.pid, () => floor.request<FloorRound>({ cmd: 'round', concurrency, streams, words }, 'round')),
  };
}

/** Unmeasured rounds on new processes, so that no measured round pays for the JIT. */
async function warmUp(plan: HttpPlan, level: Level, load: BenchProcess): Promise<void> {
  const { round, floorRound } = rounds(plan, level, load);
  for (let i = 0; i < plan.warmupRounds; i++) {
    for (const server of level.servers) await round(server, 4, 8);
    await floorRound(4, 8);
  }
}

/** One concurrency level: `reps` interleaved rounds of every server and the floor. */
async function measureLevel(plan: HttpPlan, level: Level, load: BenchProcess, concurrency: number): Promise<ConcurrencyResult> {
  const { servers } = level;
  const { round, floorRound } = rounds(plan, level, load);
  const streams = plan.streams(concurrency);
  const measured = Object.fromEntries(servers.map((s) => [s.name, [] as Array<Measured<RoundResult>>])) as Record<ServerName, Array<Measured<RoundResult>>>;
  const floorRounds: Array<Measured<FloorRound>> = [];
  for (let rep = 0; rep < plan.reps; rep++) {
    const order = rep % 2 === 0 ? servers : [...servers].reverse();
    for (const server of order) measured[server.name].push(await round(server, concurrency, streams));
    floorRounds.push(await floorRound(concurrency, streams));
    log(
      `http: c=${concurrency} rep ${rep + 1}/${plan.reps}: ${servers.map((s) => `${s.name} ${Math.round(measured[s.name][rep].eventsPerSec)}`).join(', ')}, floor ${Math.round(floorRounds[rep].eventsPerSec)} events/s`,
    );
  }
  const targets = Object.fromEntries(
    servers.map((s) => [s.name, { ...summarise(measured[s.name]), rssMb: rssOf(s.process.pid) / 2 ** 20 }]),
  ) as ConcurrencyResult['targets'];
  return {
    concurrency,
    streamsPerRound: streams,
    targets,
    floor: {
      eventsPerSec: median(floorRounds.map((r) => r.eventsPerSec)),
      samples: floorRounds.map((r) => r.eventsPerSec),
      cpuUsPerEvent: cpuUsPerEvent(floorRounds),
    },
    vsMastra: compare(targets.bridge.samples, targets.mastra.samples),
    vsAgui: compare(targets.bridge.samples, targets.agui.samples),
    ...(targets.baseline && { vsBaseline: compare(targets.bridge.samples, targets.baseline.samples) }),
  };
}

export async function runHttpPhase(plan: HttpPlan, profile: boolean): Promise<HttpResult> {
  const names: ServerName[] = [...TARGETS, ...(plan.baselineDir ? (['baseline'] as const) : [])];
  const profileDirs = profile ? Object.fromEntries(names.map((n) => [n, resolve(REPO_ROOT, 'bench/results/profiles', n)])) : undefined;
  const load = await started('bench/load.ts');
  const results: ConcurrencyResult[] = [];
  let modelTimers: HttpResult['modelTimers'] | undefined;
  let level: Level | undefined;
  try {
    for (const concurrency of plan.concurrency) {
      if (!level || plan.freshServersPerLevel) {
        if (level) await stopLevel(level);
        log(`http: c=${concurrency}: starting ${names.length} fresh servers and the floor process…`);
        level = await startLevel(plan, profileDirs);
        await warmUp(plan, level, load);
        modelTimers ??= await level.floor.request<HttpResult['modelTimers']>({ cmd: 'timers', words: plan.words }, 'timers');
      }
      results.push(await measureLevel(plan, level, load, concurrency));
    }
  } finally {
    await Promise.all([load.stop(), level && stopLevel(level)]);
  }
  const { streams: _streams, ...rest } = plan;
  const streamsPerRound = Object.fromEntries(plan.concurrency.map((c) => [c, plan.streams(c)]));
  return { plan: { ...rest, streamsPerRound }, modelTimers: modelTimers ?? { zero: Number.NaN, oneMs: Number.NaN }, results, profileDirs };
}
