/**
 * `npm run bench [-- --quick] [-- --profile] [-- --only=translator,http,runcost,fanout,durability,scale,workflow,longthread,asstarted,followers,telemetry]`
 *
 * Measures the bridge side by side with what a user would otherwise pick, and checks the
 * performance budget (docs/performance.md). The markdown report goes to stdout, progress to
 * stderr, everything measured to bench/results/latest.json.
 *
 * - `--quick`: smaller answers, fewer rounds and subscribers: a smoke run in under a minute.
 * - `--profile`: the three HTTP servers (and the scale phase's three) run with `--cpu-prof`
 *   (bench/results/profiles/<server>/) and the report adds their CPU split by owner
 *   (bench/lib/profile-summary.ts).
 * - `--only=…`: run some phases only. `scale` and `followers` need Redis and PostgreSQL (bench/lib/scale-phase.ts).
 * - `--concurrency=1,16`, `--reps=N`, `--words=N`: override the HTTP plan (to iterate on one line).
 * - `--baseline=<dir>`: also run the bridge of another checkout (e.g. a `git worktree` of main,
 *   with this checkout's `node_modules` symlinked into it) in the same interleave, for
 *   before/after ratios: in the HTTP phase, and as the standalone server in the durability phase.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { runAsStartedPhase, type AsStartedPlan } from './lib/as-started-phase.js';
import { runDurabilityPhase, type DurabilityPlan } from './lib/durability-phase.js';
import { runFanoutPhase, type FanoutPlan } from './lib/fanout-phase.js';
import { runTelemetryPhase, type TelemetryPlan } from './lib/telemetry-phase.js';
import { runFollowersPhase, type FollowersPlan } from './lib/followers-phase.js';
import { REPO_ROOT } from './lib/fixtures.js';
import { runHttpPhase, type HttpPlan } from './lib/http-phase.js';
import { runLongThreadPhase, type LongThreadPlan } from './lib/long-thread-phase.js';
import { requireScaleServices, runScalePhase, type ScalePlan } from './lib/scale-phase.js';
import { runWorkflowPhase, type WorkflowPlan } from './lib/workflow-phase.js';
import { summarise } from './lib/profile-summary.js';
import { BenchProcess } from './lib/procs.js';
import { evaluateBudget, renderMarkdown, type BenchEnvironment, type BenchReport } from './lib/report.js';
import type { TranslatorResult } from './translator.js';

const args = process.argv.slice(2);
const option = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const quick = args.includes('--quick');
const profile = args.includes('--profile');
const only = option('only')?.split(',');
const runs = (phase: string) => !only || only.includes(phase);

const HTTP_PLAN: HttpPlan = withOverrides(
  quick
    ? { words: 500, concurrency: [1, 16, 64], streams: (c) => (c === 1 ? 8 : c), reps: 2, warmupRounds: 1, freshServersPerLevel: false }
    : // One stream: 20 per round, so that p99 is not just the slowest of a handful.
      { words: 2000, concurrency: [1, 16, 64], streams: (c) => (c === 1 ? 20 : 2 * c), reps: 5, warmupRounds: 2, freshServersPerLevel: true },
);

function withOverrides(plan: HttpPlan): HttpPlan {
  const concurrency = option('concurrency');
  return {
    ...plan,
    ...(concurrency && { concurrency: concurrency.split(',').map(Number) }),
    ...(option('reps') && { reps: Number(option('reps')) }),
    ...(option('words') && { words: Number(option('words')) }),
    ...(option('baseline') && { baselineDir: option('baseline') }),
  };
}

/**
 * The cost of a run: short answers are where per-run work (storage before `RUN_STARTED`, the inbox
 * entry, locks) shows, long ones where per-event work does. Each point gets its own servers.
 */
const RUN_COST_PLANS: { short: HttpPlan; long: HttpPlan } = {
  short: withOverrides({
    words: 20,
    concurrency: [16],
    streams: (c) => (quick ? c : 4 * c),
    reps: quick ? 2 : 5,
    warmupRounds: quick ? 1 : 2,
    freshServersPerLevel: false,
  }),
  long: withOverrides({
    words: 500,
    concurrency: [1],
    streams: () => (quick ? 8 : 20),
    reps: quick ? 2 : 5,
    warmupRounds: quick ? 1 : 2,
    freshServersPerLevel: false,
  }),
};

const FANOUT_PLAN: FanoutPlan = quick
  ? { subscribers: [1, 100, 1000], messages: 3, idleSubscribers: 1000 }
  : { subscribers: [1, 100, 1000], messages: 10, idleSubscribers: 5000 };

const DURABILITY_PLAN: DurabilityPlan = {
  ...(quick
    ? {
        messages: 10,
        runs: [
          { concurrency: 1, streams: 4 },
          { concurrency: 16, streams: 16 },
        ],
        words: 200,
        reps: 2,
      }
    : {
        messages: 30,
        runs: [
          { concurrency: 1, streams: 10 },
          { concurrency: 16, streams: 32 },
        ],
        words: 500,
        reps: 5,
      }),
  ...(option('baseline') && { baselineDir: option('baseline') }),
};

const SCALE_PLAN: ScalePlan = {
  ...(quick
    ? {
        words: 200,
        reps: 2,
        warmupRounds: 1,
        single: [
          { concurrency: 1, streams: 4 },
          { concurrency: 16, streams: 16 },
        ],
        split: { concurrency: 32, streams: 32 },
        followers: 1000,
        messages: 3,
        followed: { concurrency: 16, streams: 16 },
      }
    : {
        words: 500,
        reps: 5,
        warmupRounds: 2,
        single: [
          { concurrency: 1, streams: 20 },
          { concurrency: 16, streams: 48 },
        ],
        split: { concurrency: 32, streams: 96 },
        followers: 1000,
        messages: 10,
        followed: { concurrency: 16, streams: 48 },
      }),
  ...(option('baseline') && { baselineDir: option('baseline') }),
};

/** A 50-step workflow at 1 and 16 streams at once (issue 29). */
const WORKFLOW_PLAN: WorkflowPlan = quick
  ? {
      levels: [
        { concurrency: 1, streams: 4 },
        { concurrency: 16, streams: 16 },
      ],
      reps: 2,
      warmupRounds: 1,
    }
  : {
      levels: [
        { concurrency: 1, streams: 20 },
        { concurrency: 16, streams: 48 },
      ],
      reps: 5,
      warmupRounds: 2,
    };

/** A run on threads of 10, 100 and 1,000 stored messages (issue 30): flat within 10 %. */
const LONG_THREAD_PLAN: LongThreadPlan = {
  ...(quick ? { sizes: [10, 100], reps: 5, words: 20 } : { sizes: [10, 100, 1000], reps: 20, words: 20 }),
  ...(option('baseline') && { baselineDir: option('baseline') }),
};

/** `npm start` with its defaults beside Mastra's route on the same storage (issue 30): short answers at 16, a 2,000-word input at 1. */
const AS_STARTED_LEVELS: AsStartedPlan['levels'] = quick
  ? [
      { concurrency: 16, streams: 16, words: 20 },
      { concurrency: 1, streams: 4, words: 2000 },
    ]
  : [
      { concurrency: 16, streams: 64, words: 20 },
      { concurrency: 16, streams: 32, words: 500 },
      { concurrency: 1, streams: 20, words: 2000 },
    ];
const AS_STARTED_PLAN: AsStartedPlan = {
  // `--words=N` keeps the levels of that answer length (to iterate on one line).
  levels: option('words') ? AS_STARTED_LEVELS.filter((level) => level.words === Number(option('words'))) : AS_STARTED_LEVELS,
  reps: Number(option('reps') ?? (quick ? 2 : 5)),
  warmupRounds: quick ? 1 : 2,
  ...(option('baseline') && { baselineDir: option('baseline') }),
};

/** Traces exported and webhooks on, each beside neither, at 1 and 16 streams (issue 31). */
const TELEMETRY_PLAN: TelemetryPlan = quick
  ? {
      levels: [
        { concurrency: 1, streams: 4, words: 200 },
        { concurrency: 16, streams: 16, words: 200 },
      ],
      reps: 2,
      warmupRounds: 1,
    }
  : {
      levels: [
        { concurrency: 1, streams: 40, words: 200 },
        { concurrency: 16, streams: 96, words: 200 },
      ],
      reps: Number(option('reps') ?? 8),
      warmupRounds: 2,
    };

/** 10,000 followers of one thread, on one process and on two (issue 30). */
const FOLLOWERS_PLAN: FollowersPlan = {
  ...(quick ? { followers: 2000, messages: 2, reps: 1 } : { followers: 10_000, messages: 5, reps: 3 }),
  ...(option('baseline') && { baselineDir: option('baseline') }),
};

const RESULTS_DIR = join(REPO_ROOT, 'bench/results');

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

/** The comparison packages live in bench/package.json, outside the root lockfile CI installs. */
function ensureBenchDependencies(): void {
  if (existsSync(join(REPO_ROOT, 'bench/node_modules/@ag-ui/mastra/package.json'))) return;
  log('bench: installing the comparison packages (npm --prefix bench ci)…');
  const result = spawnSync('npm', ['--prefix', 'bench', 'ci', '--no-audit', '--no-fund'], { cwd: REPO_ROOT, stdio: ['ignore', 2, 2] });
  if (result.status !== 0) throw new Error('npm --prefix bench ci failed');
}

function environment(): BenchEnvironment {
  return {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim(),
    loadAverage: loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
    platform: `${process.platform} ${process.arch}`,
  };
}

async function translatorPhase(): Promise<TranslatorResult> {
  log('translator: running in its own process…');
  const proc = new BenchProcess('bench/translator.ts');
  try {
    await proc.ready();
    return await proc.request<TranslatorResult>({ quick }, 'translator', 180_000);
  } finally {
    await proc.stop();
  }
}

/** The main-thread profile of each server (the largest file: tsx's loader thread writes its own). */
function profileSplits(dirs: Record<string, string>): Record<string, ReturnType<typeof summarise>['owners']> {
  const out: Record<string, ReturnType<typeof summarise>['owners']> = {};
  for (const [target, dir] of Object.entries(dirs)) {
    const files = readdirSync(dir).map((f) => join(dir, f));
    const main = files.sort((a, b) => statSync(b).size - statSync(a).size)[0];
    if (main) out[target] = summarise(JSON.parse(readFileSync(main, 'utf8')) as Parameters<typeof summarise>[0]).owners;
  }
  return out;
}

async function main(): Promise<void> {
  ensureBenchDependencies();
  // Before the other phases: a run that would end on a missing Redis or PostgreSQL fails now.
  if (runs('scale') || runs('followers')) await requireScaleServices();
  const startedAt = new Date().toISOString();
  const partial: Omit<BenchReport, 'budget'> = { mode: quick ? 'quick' : 'full', startedAt, environment: environment() };
  if (profile) rmSync(join(RESULTS_DIR, 'profiles'), { recursive: true, force: true });
  if (runs('translator')) partial.translator = await translatorPhase();
  if (runs('http')) partial.http = await runHttpPhase(HTTP_PLAN, profile);
  if (runs('runcost')) partial.runCost = { short: await runHttpPhase(RUN_COST_PLANS.short, false), long: await runHttpPhase(RUN_COST_PLANS.long, false) };
  if (runs('fanout')) partial.fanout = await runFanoutPhase(FANOUT_PLAN);
  if (runs('durability')) partial.durability = await runDurabilityPhase(DURABILITY_PLAN);
  if (runs('scale')) partial.scale = await runScalePhase(SCALE_PLAN, profile);
  if (runs('workflow')) partial.workflow = await runWorkflowPhase(WORKFLOW_PLAN);
  if (runs('longthread')) partial.longThread = await runLongThreadPhase(LONG_THREAD_PLAN);
  if (runs('asstarted')) partial.asStarted = await runAsStartedPhase(AS_STARTED_PLAN, profile);
  if (runs('followers')) partial.followers = await runFollowersPhase(FOLLOWERS_PLAN, profile);
  if (runs('telemetry')) partial.telemetry = await runTelemetryPhase(TELEMETRY_PLAN, profile);
  const profileDirs = {
    ...partial.http?.profileDirs,
    ...partial.scale?.profileDirs,
    ...partial.asStarted?.profileDirs,
    ...partial.followers?.profileDirs,
    ...partial.telemetry?.profileDirs,
  };
  if (Object.keys(profileDirs).length > 0) partial.profiles = profileSplits(profileDirs);
  const report: BenchReport = { ...partial, budget: evaluateBudget(partial) };
  const markdown = renderMarkdown(report);
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, 'latest.json'), `${JSON.stringify({ ...report, markdown }, null, 2)}\n`);
  process.stdout.write(markdown);
  log(`bench: wrote bench/results/latest.json (${report.budget.filter((b) => b.pass === false).length} budget line(s) missed)`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
