/**
 * A 50-step workflow streamed end to end: this bridge's `POST /agui/run` (AG-UI: `STEP_STARTED` /
 * `STEP_FINISHED` per step, the answer stored on the thread) beside Mastra's own workflow route
 * (`@mastra/hono`, `POST /api/workflows/:id/stream`: Mastra's chunks, `\x1e`-separated). Same
 * Mastra, same workflow (`bench/servers/steps-workflow.ts`), each server in its own process,
 * rounds interleaved (A B, then B A). Runs/s is the ratio (each stream is one whole run, however
 * its server spells the events); events/s and time to last byte are each server's own.
 */
import type { RoundResult } from '../load.js';
import { BENCH_WORKFLOW_ID } from '../servers/steps-workflow.js';
import { BenchProcess, startServer, withCpu, type BenchServer, type Measured } from './procs.js';
import { median, percentile } from './stats.js';

export interface WorkflowPlan {
  levels: Array<{ concurrency: number; streams: number }>;
  reps: number;
  warmupRounds: number;
}

export interface WorkflowTargetSummary {
  runsPerSec: number;
  eventsPerSec: number;
  eventsPerRun: number;
  ttfe: { p50: number; p99: number };
  ttlb: { p50: number; p99: number };
  /** Server CPU time (user + system) per run, ms: median over the rounds. */
  cpuMsPerRun: number;
  samples: number[];
  errors: string[];
}

export interface WorkflowLevel {
  concurrency: number;
  streams: number;
  bridge: WorkflowTargetSummary;
  mastra: WorkflowTargetSummary;
  /** Bridge runs/s over Mastra's, per repetition, and their median. */
  pairRatios: number[];
  medianPairRatio: number;
}

export interface WorkflowResult {
  plan: WorkflowPlan;
  steps: number;
  levels: WorkflowLevel[];
}

const SERVERS = { bridge: 'bench/servers/bridge.ts', mastra: 'bench/servers/mastra-route.ts' } as const;
type Name = keyof typeof SERVERS;

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

function summarise(rounds: Measured<RoundResult>[]): WorkflowTargetSummary {
  const samples = rounds.flatMap((r) => r.samples);
  const runsPerSec = rounds.map((r) => (r.samples.length * 1000) / r.elapsedMs);
  const pick = (key: 'ttfe' | 'ttlb') => ({
    p50: percentile(
      samples.map((s) => s[key]),
      50,
    ),
    p99: percentile(
      samples.map((s) => s[key]),
      99,
    ),
  });
  return {
    runsPerSec: median(runsPerSec),
    eventsPerSec: median(rounds.map((r) => r.eventsPerSec)),
    eventsPerRun: median(samples.map((s) => s.events)),
    ttfe: pick('ttfe'),
    ttlb: pick('ttlb'),
    cpuMsPerRun: median(rounds.map((r) => r.cpuMs / Math.max(1, r.samples.length))),
    samples: runsPerSec,
    errors: rounds.flatMap((r) => r.errors),
  };
}

export async function runWorkflowPhase(plan: WorkflowPlan): Promise<WorkflowResult> {
  log('workflow: starting the bridge and Mastra’s route…');
  const servers = (await Promise.all((Object.keys(SERVERS) as Name[]).map((name) => startServer(name, SERVERS[name])))) as Array<BenchServer & { name: Name }>;
  const load = new BenchProcess('bench/load.ts');
  await load.ready();
  const round = async (server: BenchServer & { name: Name }, concurrency: number, streams: number): Promise<Measured<RoundResult>> => {
    return withCpu(server.process.pid, () =>
      load.request<RoundResult>(
        { cmd: 'round', target: server.name, origin: server.origin, concurrency, streams, words: 0, workflow: BENCH_WORKFLOW_ID },
        'round',
      ),
    );
  };
  const levels: WorkflowLevel[] = [];
  try {
    for (let i = 0; i < plan.warmupRounds; i++) for (const server of servers) await round(server, 4, 8);
    for (const { concurrency, streams } of plan.levels) {
      const measured: Record<Name, Measured<RoundResult>[]> = { bridge: [], mastra: [] };
      for (let rep = 0; rep < plan.reps; rep++) {
        for (const server of rep % 2 === 0 ? servers : [...servers].reverse()) measured[server.name].push(await round(server, concurrency, streams));
        log(
          `workflow: c=${concurrency} rep ${rep + 1}/${plan.reps}: ${servers.map((s) => `${s.name} ${((measured[s.name][rep].samples.length * 1000) / measured[s.name][rep].elapsedMs).toFixed(1)} runs/s`).join(', ')}`,
        );
      }
      const [bridge, mastra] = [summarise(measured.bridge), summarise(measured.mastra)];
      const pairRatios = bridge.samples.map((value, i) => value / mastra.samples[i]);
      levels.push({ concurrency, streams, bridge, mastra, pairRatios, medianPairRatio: median(pairRatios) });
    }
  } finally {
    await Promise.all([load.stop(), ...servers.map((s) => s.process.stop())]);
  }
  return { plan, steps: 50, levels };
}
