/**
 * Scale-out: the standalone server in its shared mode (Redis + PostgreSQL, docs/scaling.md),
 * measured in one run against what it replaces, rounds interleaved:
 *
 * - `/run` on one process: the embedded default (`local`: a LibSQL file, no Redis) against the
 *   same server on Redis + PostgreSQL (`A`), at each `single` level; and `pg`, on A's PostgreSQL
 *   without Redis, to tell what storage costs from what Redis costs.
 * - `/run` at `split.concurrency` streams, each on a thread of its own: one process (A or B, in
 *   turn) against two (A and B, the load generator's workers dealt out over both), all on the
 *   same Redis prefix and PostgreSQL schema. Aggregate events/s.
 * - Followers elsewhere: `/run` on A, each run's thread followed on B (`followed`): the CPU per
 *   event of A (which runs the agent, translates and writes the thread's log) against B's (which
 *   only serves the followers, from the log).
 * - Fan-out: `followers` subscribers of one thread, half on A and half on B, `send-message`
 *   posted to A; the time until each follower has the user echo. For reference, as many
 *   followers of one thread on `local`.
 * - With `baselineDir`, that checkout's standalone server runs as `A0` and `B0` (a schema and a
 *   prefix of their own) in the same interleave: `/run` on one process and followers elsewhere,
 *   before and after.
 *
 * Every round also reads the CPU time each server process, Redis, PostgreSQL (the postmaster and
 * every backend) and the load generator spent, and the whole machine's busy and stolen time
 * (/proc), as cores: on a small machine they say whether the servers or the machine set the pace.
 *
 * With `--profile`, the three servers run with `--cpu-prof` (bench/results/profiles/scale-<server>/).
 *
 * Each run gets a PostgreSQL schema and a Redis key prefix of its own, dropped and deleted at the
 * end. Redis (`BENCH_REDIS_URL`, default `redis://127.0.0.1:6379`) and PostgreSQL
 * (`BENCH_POSTGRES_URL`, default `postgres://postgres@127.0.0.1:5432/test`) must be up: the phase
 * fails at once with the command that starts the one that is down.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { createClient } from 'redis';
import { checkService, deleteKeys, reason, schemaUrl, withPostgres } from '../../scripts/services.js';
import type { LatencyReply } from '../fanout.js';
import type { RoundResult } from '../load.js';
import { BENCH_RESOURCE } from '../servers/shared.js';
import { REPO_ROOT } from './fixtures.js';
import { BenchProcess, coresBetween, cpuMsBetween, cpuMsByName, cpuMsOf, machineTicks, startServer, type BenchServer } from './procs.js';
import { median, percentile } from './stats.js';

export interface ScalePlan {
  words: number;
  reps: number;
  warmupRounds: number;
  /** One process, LibSQL file vs Redis + PostgreSQL: concurrency → streams per round. */
  single: Array<{ concurrency: number; streams: number }>;
  /** Two processes vs one: concurrency (split evenly) and streams per round. */
  split: { concurrency: number; streams: number };
  /** Followers of one thread, spread evenly over the two processes. */
  followers: number;
  /** `send-message`s per fan-out round (one round per repetition). */
  messages: number;
  /** `/run` on A with every thread followed on B. */
  followed: { concurrency: number; streams: number };
  /** A checkout whose standalone server runs as `A0` and `B0`, for before/after. */
  baselineDir?: string;
}

/** Where CPU time went during a round, in cores (CPU ms ÷ wall ms). */
export type CpuGroup = 'serving' | ServerKey | 'redis' | 'postgres' | 'load' | 'machine' | 'steal';

export interface ScaleCell {
  eventsPerSec: number;
  samples: number[];
  /** Request → end of body, pooled over the rounds' streams. */
  ttlb: { p50: number; p99: number };
  errors: string[];
  /** Median over the rounds, per group. */
  cores: Record<CpuGroup, number>;
  /** The serving process(es)' CPU per event, µs (median of rounds). */
  serverCpuUsPerEvent: number;
  /** Redis + PostgreSQL CPU per event, µs (median of rounds). */
  servicesCpuUsPerEvent: number;
  /** Commands Redis ran per `/run` (median of rounds; every client of that Redis counts). */
  redisCommandsPerRun: number;
  /** Each apart, µs (median of rounds). */
  redisCpuUsPerEvent: number;
  postgresCpuUsPerEvent: number;
  /** The serving process(es)' CPU per event in each round, µs. */
  cpuSamples: number[];
  /** With two processes: each one's share of the events (median of rounds). */
  shareByServer?: Record<string, number>;
}

export interface ScaleComparison {
  medianPairRatio: number;
  ratioOfMedians: number;
  pairRatios: number[];
}

export interface ScaleFanout {
  followers: number;
  samples: number;
  p50: number;
  p99: number;
  max: number;
  postP50: number;
  /** Per process the followers were on (A, B or local). */
  byServer: Record<string, { samples: number; p50: number; p99: number }>;
}

/** `/run` on one process, each thread followed on another: the CPU each spent per event it sent. */
export interface ScaleFollowed {
  /** The process running the agent, per `/run` event, µs (median of rounds). */
  runningCpuUsPerEvent: number;
  /** The process serving only the followers, per event its followers got, µs (median of rounds). */
  followerCpuUsPerEvent: number;
  /** Follower ÷ running, median of the per-round ratios. */
  ratio: number;
  /** Events the followers got ÷ events `/run` sent (1: the followers got every run whole). */
  delivered: number;
  errors: string[];
}

export interface ScaleResult {
  plan: ScalePlan;
  single: Array<{
    concurrency: number;
    streams: number;
    local: ScaleCell;
    shared: ScaleCell;
    ratio: ScaleComparison;
    /** Shared ÷ local server CPU per event. */
    cpuRatio: ScaleComparison;
    /** The same server on A's PostgreSQL without Redis: ÷ local, and shared ÷ it (what Redis costs apart from PostgreSQL). */
    pgOnly: { cell: ScaleCell; vsLocal: ScaleComparison; sharedVsPg: ScaleComparison };
    /** The baseline checkout's shared server, and ours ÷ it. */
    before?: { cell: ScaleCell; ratio: ScaleComparison; cpuRatio: ScaleComparison };
  }>;
  followed: ScaleFollowed & { concurrency: number; streams: number; before?: ScaleFollowed };
  split: { concurrency: number; streams: number; one: ScaleCell; two: ScaleCell; ratio: ScaleComparison; cpuRatio: ScaleComparison };
  fanout: { spread: ScaleFanout; local: ScaleFanout };
  /** Main-thread CPU profiles written with `--profile`, per server (`scale local`, `scale A`, `scale B`). */
  profileDirs?: Record<string, string>;
}

export const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SERVER_FILE = 'bench/servers/standalone.ts';
const PREFIX = '/agui';

type Failure = { error?: string };
type ServerKey = 'local' | 'pg' | 'A' | 'B' | 'A0' | 'B0';

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

/** Fails at once, saying which service is down and how to start it (`bench/run.ts` asks before any phase runs). */
export async function requireScaleServices(): Promise<void> {
  const checks = await Promise.allSettled([checkService('Redis', REDIS_URL), checkService('PostgreSQL', POSTGRES_URL)]);
  const problems = checks.flatMap((check) => (check.status === 'rejected' ? [reason(check.reason)] : []));
  if (problems.length > 0) throw new Error(`scale phase: it needs Redis and PostgreSQL (BENCH_REDIS_URL, BENCH_POSTGRES_URL).\n${problems.join('\n')}`);
}

/** A fresh schema and key prefix for this run; `cleanup()` drops and deletes them. */
export async function isolate(): Promise<{ databaseUrl: string; prefix: string; cleanup: () => Promise<void> }> {
  const tag = randomBytes(6).toString('hex');
  const schema = `bench_scale_${tag}`;
  const prefix = `bench:scale:${tag}`;
  await withPostgres(POSTGRES_URL, (c) => c.query(`CREATE SCHEMA "${schema}"`));
  return {
    databaseUrl: schemaUrl(POSTGRES_URL, schema),
    prefix,
    cleanup: async () => {
      await withPostgres(POSTGRES_URL, (c) => c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
      await deleteKeys(REDIS_URL, prefix);
    },
  };
}

// ── CPU per round ────────────────────────────────────────────────────

interface Snapshot {
  at: number;
  procs: Record<ServerKey | 'load', number>;
  redis: Map<number, number>;
  postgres: Map<number, number>;
  machine: ReturnType<typeof machineTicks>;
}

type Measured = RoundResult & {
  cores: Record<CpuGroup, number>;
  ms: Record<Exclude<CpuGroup, 'machine' | 'steal'>, number>;
  serverCpuMs: number;
  servicesCpuMs: number;
  redisCommands: number;
};

/** Counts the commands Redis runs (`INFO commandstats`, every command's `calls`) on a connection of its own. */
async function redisCommandCounter(): Promise<{ count(): Promise<number>; close(): Promise<void> }> {
  const client = createClient({ url: REDIS_URL });
  client.on('error', () => {});
  await client.connect();
  return {
    count: async () => {
      let calls = 0;
      for (const match of (await client.info('commandstats')).matchAll(/calls=(\d+)/g)) calls += Number(match[1]);
      return calls;
    },
    close: () => client.close(),
  };
}

const cpuGroups: CpuGroup[] = ['serving', 'local', 'pg', 'A', 'B', 'A0', 'B0', 'redis', 'postgres', 'load', 'machine', 'steal'];

class CpuMeter {
  private readonly cores = cpus().length;
  constructor(private readonly pids: Partial<Record<ServerKey, number>> & { load: number }) {}

  snapshot(): Snapshot {
    const procs = Object.fromEntries(Object.entries(this.pids).map(([k, pid]) => [k, cpuMsOf(pid)])) as Snapshot['procs'];
    return { at: performance.now(), procs, redis: cpuMsByName(['redis-server']), postgres: cpuMsByName(['postgres']), machine: machineTicks() };
  }

  /** CPU ms per group between two snapshots, and the same as cores (`serving`: the processes `serving` names). */
  between(
    before: Snapshot,
    after: Snapshot,
    serving: ServerKey[],
  ): { ms: Record<Exclude<CpuGroup, 'machine' | 'steal'>, number>; cores: Record<CpuGroup, number> } {
    const wall = after.at - before.at;
    const ms = {
      ...(Object.fromEntries(cpuGroups.map((k) => [k, (after.procs[k as ServerKey] ?? 0) - (before.procs[k as ServerKey] ?? 0)])) as Record<
        ServerKey | 'load',
        number
      >),
      redis: cpuMsBetween(before.redis, after.redis),
      postgres: cpuMsBetween(before.postgres, after.postgres),
    };
    const servingMs = serving.reduce((n, k) => n + ms[k], 0);
    const machine = coresBetween(before.machine, after.machine, this.cores);
    const cores = {
      ...(Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, v / wall])) as Record<CpuGroup, number>),
      machine: machine.busy,
      steal: machine.steal,
    };
    return { ms: { ...ms, serving: servingMs }, cores: { ...cores, serving: servingMs / wall } };
  }
}

// ── summaries ────────────────────────────────────────────────────────

function summarise(rounds: Measured[], names?: Record<string, string>): ScaleCell {
  const samples = rounds.flatMap((r) => r.samples);
  const ttlb = samples.map((s) => s.ttlb);
  const cell: ScaleCell = {
    eventsPerSec: median(rounds.map((r) => r.eventsPerSec)),
    samples: rounds.map((r) => r.eventsPerSec),
    ttlb: { p50: percentile(ttlb, 50), p99: percentile(ttlb, 99) },
    errors: rounds.flatMap((r) => r.errors),
    cores: Object.fromEntries(cpuGroups.map((g) => [g, median(rounds.map((r) => r.cores[g]))])) as Record<CpuGroup, number>,
    serverCpuUsPerEvent: median(rounds.map((r) => (r.serverCpuMs * 1000) / r.events)),
    servicesCpuUsPerEvent: median(rounds.map((r) => (r.servicesCpuMs * 1000) / r.events)),
    redisCommandsPerRun: median(rounds.map((r) => r.redisCommands / r.spec.streams)),
    redisCpuUsPerEvent: median(rounds.map((r) => (r.ms.redis * 1000) / r.events)),
    postgresCpuUsPerEvent: median(rounds.map((r) => (r.ms.postgres * 1000) / r.events)),
    cpuSamples: rounds.map((r) => (r.serverCpuMs * 1000) / r.events),
  };
  if (names) {
    cell.shareByServer = Object.fromEntries(
      Object.entries(names).map(([origin, name]) => [name, median(rounds.map((r) => (r.eventsByOrigin?.[origin] ?? 0) / r.events))]),
    );
  }
  return cell;
}

/** The followers-elsewhere rounds: `running` and `follower` name the two processes. */
function followedSummary(rounds: Measured[], running: ServerKey, follower: ServerKey): ScaleFollowed {
  const perEvent = (r: Measured) => ({ running: (r.ms[running] * 1000) / r.events, follower: (r.ms[follower] * 1000) / (r.followerEvents ?? Number.NaN) });
  const each = rounds.map(perEvent);
  return {
    runningCpuUsPerEvent: median(each.map((e) => e.running)),
    followerCpuUsPerEvent: median(each.map((e) => e.follower)),
    ratio: median(each.map((e) => e.follower / e.running)),
    delivered: median(rounds.map((r) => (r.followerEvents ?? 0) / r.events)),
    errors: rounds.flatMap((r) => r.errors),
  };
}

function compare(ours: number[], theirs: number[]): ScaleComparison {
  const pairRatios = ours.map((value, i) => value / theirs[i]);
  return { medianPairRatio: median(pairRatios), ratioOfMedians: median(ours) / median(theirs), pairRatios };
}

function fanoutSummary(followers: number, rounds: LatencyReply[]): ScaleFanout {
  const samples = rounds.flatMap((r) => r.samples);
  const labels = [...new Set(rounds.flatMap((r) => Object.keys(r.byLabel)))];
  return {
    followers,
    samples: samples.length,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    max: Math.max(...samples),
    postP50: percentile(
      rounds.flatMap((r) => r.postMs),
      50,
    ),
    byServer: Object.fromEntries(
      labels.map((label) => {
        const values = rounds.flatMap((r) => r.byLabel[label] ?? []);
        return [label, { samples: values.length, p50: percentile(values, 50), p99: percentile(values, 99) }];
      }),
    ),
  };
}

// ── the phase ────────────────────────────────────────────────────────

export async function runScalePhase(plan: ScalePlan, profile = false): Promise<ScaleResult> {
  await requireScaleServices();
  const profileDirs = profile
    ? Object.fromEntries((['local', 'A', 'B'] as const).map((k) => [`scale ${k}`, resolve(REPO_ROOT, 'bench/results/profiles', `scale-${k}`)]))
    : undefined;
  const flags = (key: ServerKey) => (profileDirs?.[`scale ${key}`] ? ['--cpu-prof', `--cpu-prof-dir=${profileDirs[`scale ${key}`]}`] : []);
  // A's (shared with B), the baseline's, and one of its own for the PostgreSQL-only server (which
  // has no Redis locks, so it must not meet A's threads or inbox).
  const [main, pgSpace] = [await isolate(), await isolate()];
  const baselineSpace = plan.baselineDir ? await isolate() : undefined;
  const spaces = [main, pgSpace, ...(baselineSpace ? [baselineSpace] : [])];
  log(
    `scale: schema and Redis prefix ${main.prefix.split(':').at(-1)}; starting the LibSQL server and two servers on Redis + PostgreSQL${plan.baselineDir ? ', and two of the baseline' : ''}…`,
  );
  const sharedEnv = (space: (typeof spaces)[number]) => ({ DATABASE_URL: space.databaseUrl, REDIS_URL, REDIS_PREFIX: space.prefix });
  const started: BenchServer[] = [];
  const processes: BenchProcess[] = [];
  const closers: Array<() => Promise<void>> = [];
  const start = async (key: ServerKey, options: Parameters<typeof startServer>[2], file = SERVER_FILE) => {
    const server = await startServer(key, file, { ...options, flags: flags(key) });
    started.push(server);
    return server;
  };
  try {
    // One at a time: the first shared server creates the schema's tables, the second finds them.
    const local = await start('local', { env: { DATABASE_URL: '', REDIS_URL: '', REDIS_PREFIX: '' } });
    const a = await start('A', { env: sharedEnv(main) });
    // PostgreSQL as A has it, without Redis: what storage costs, apart from what Redis costs.
    const pg = await start('pg', { env: { DATABASE_URL: pgSpace.databaseUrl, REDIS_URL: '', REDIS_PREFIX: '' } });
    const b = await start('B', { env: sharedEnv(main) });
    const baselineFile = plan.baselineDir && resolve(plan.baselineDir, SERVER_FILE);
    const before =
      baselineFile && baselineSpace
        ? {
            a: await start('A0', { env: sharedEnv(baselineSpace), cwd: plan.baselineDir }, baselineFile),
            b: await start('B0', { env: sharedEnv(baselineSpace), cwd: plan.baselineDir }, baselineFile),
          }
        : undefined;
    const load = new BenchProcess('bench/load.ts');
    const fanout = new BenchProcess('bench/fanout.ts');
    processes.push(load, fanout);
    await Promise.all([load.ready(), fanout.ready()]);
    const names = Object.fromEntries(started.map((server) => [server.origin, server.name as ServerKey]));
    const counter = await redisCommandCounter();
    closers.push(() => counter.close());
    const meter = new CpuMeter({ ...Object.fromEntries(started.map((server) => [server.name, server.process.pid])), load: load.pid });

    const round = async (servers: BenchServer[], concurrency: number, streams: number, followOn?: BenchServer): Promise<Measured> => {
      const origins = servers.map((s) => s.origin);
      const commands = await counter.count();
      const snapshot = meter.snapshot();
      const result = await load.request<RoundResult>(
        {
          cmd: 'round',
          target: 'bridge',
          origin: origins[0],
          ...(origins.length > 1 && { origins }),
          concurrency,
          streams,
          words: plan.words,
          ...(followOn && { followOn: followOn.origin }),
        },
        'round',
      );
      const { ms, cores } = meter.between(
        snapshot,
        meter.snapshot(),
        servers.map((s) => names[s.origin]),
      );
      // Less the INFO that read the count before (counted once it ran).
      const redisCommands = (await counter.count()) - commands - 1;
      return { ...result, cores, ms, serverCpuMs: ms.serving, servicesCpuMs: ms.redis + ms.postgres, redisCommands };
    };

    const fanoutRound = async (followersOn: BenchServer[], postTo: BenchServer, messages: number) => {
      const threadId = `scale-fanout-${randomUUID()}`;
      const path = `${PREFIX}/threads/${threadId}/events?resourceId=${BENCH_RESOURCE}`;
      try {
        for (const server of followersOn) {
          const count = Math.round(plan.followers / followersOn.length);
          const reply = await fanout.request<Failure>(
            { cmd: 'subscribe', origin: server.origin, path, count, label: names[server.origin] },
            'subscribed',
            120_000,
          );
          if (reply.error) throw new Error(reply.error);
        }
        const spec = { cmd: 'latency', origin: postTo.origin, prefix: PREFIX, threadId, resourceId: BENCH_RESOURCE, messages };
        const reply = await fanout.request<LatencyReply & Failure>(spec, 'latency', 300_000);
        if (reply.error) throw new Error(reply.error);
        return reply;
      } finally {
        await fanout.request({ cmd: 'close' }, 'closed');
      }
    };

    // Unmeasured: JIT, first statements, Redis scripts loaded, the tables' first pages.
    for (let i = 0; i < plan.warmupRounds; i++) {
      for (const server of started) await round([server], 4, 8);
      await round([a, b], 8, 16);
      await round([a], 4, 8, b);
      if (before) await round([before.a], 4, 8, before.b);
    }
    await fanoutRound([a, b], a, 1);
    await fanoutRound([local], local, 1);

    type SingleKey = 'local' | 'pg' | 'shared' | 'before';
    const single = plan.single.map(() => ({ local: [] as Measured[], pg: [] as Measured[], shared: [] as Measured[], before: [] as Measured[] }));
    const followed = { after: [] as Measured[], before: [] as Measured[] };
    const split = { one: [] as Measured[], two: [] as Measured[] };
    const fanoutRounds = { spread: [] as Array<Awaited<ReturnType<typeof fanoutRound>>>, local: [] as Array<Awaited<ReturnType<typeof fanoutRound>>> };
    const { concurrency: fc, streams: fs } = plan.followed;
    for (let rep = 0; rep < plan.reps; rep++) {
      const flip = rep % 2 === 1;
      const inTurn = <T>(items: T[]) => (flip ? items.reverse() : items);
      for (const [i, { concurrency, streams }] of plan.single.entries()) {
        const order: Array<[SingleKey, BenchServer]> = [
          ['local', local],
          ['pg', pg],
          ['shared', a],
          ...(before ? [['before', before.a] as [SingleKey, BenchServer]] : []),
        ];
        for (const [key, server] of inTurn(order)) single[i][key].push(await round([server], concurrency, streams));
      }
      const pairs: Array<['after' | 'before', BenchServer, BenchServer]> = [
        ['after', a, b],
        ...(before ? [['before', before.a, before.b] as ['before', BenchServer, BenchServer]] : []),
      ];
      for (const [key, running, follower] of inTurn(pairs)) followed[key].push(await round([running], fc, fs, follower));
      // The one process is A and B in turn, so each serves as many one-process rounds.
      const one = flip ? b : a;
      const order: Array<['one' | 'two', BenchServer[]]> = [
        ['one', [one]],
        ['two', [a, b]],
      ];
      for (const [key, servers] of inTurn(order)) split[key].push(await round(servers, plan.split.concurrency, plan.split.streams));
      const fanouts: Array<['spread' | 'local', () => ReturnType<typeof fanoutRound>]> = [
        ['spread', () => fanoutRound([a, b], a, plan.messages)],
        ['local', () => fanoutRound([local], local, plan.messages)],
      ];
      for (const [key, run] of inTurn(fanouts)) fanoutRounds[key].push(await run());
      const last = (rounds: Measured[]) => Math.round(rounds[rep].eventsPerSec);
      const spreadP99 = percentile(fanoutRounds.spread[rep].samples, 99);
      log(
        `scale: rep ${rep + 1}/${plan.reps}: ${plan.single.map((s, i) => `c=${s.concurrency} local ${last(single[i].local)} / shared ${last(single[i].shared)}`).join(', ')}, ` +
          `c=${plan.split.concurrency} one ${last(split.one)} / two ${last(split.two)} events/s, fan-out p99 ${spreadP99.toFixed(1)} ms`,
      );
    }

    const twoNames = { [a.origin]: 'A', [b.origin]: 'B' };
    return {
      plan,
      single: plan.single.map(({ concurrency, streams }, i) => {
        const [l, s, p] = [summarise(single[i].local), summarise(single[i].shared), summarise(single[i].pg)];
        const b0 = before && summarise(single[i].before);
        return {
          concurrency,
          streams,
          local: l,
          shared: s,
          ratio: compare(s.samples, l.samples),
          cpuRatio: compare(s.cpuSamples, l.cpuSamples),
          pgOnly: { cell: p, vsLocal: compare(p.samples, l.samples), sharedVsPg: compare(s.samples, p.samples) },
          ...(b0 && { before: { cell: b0, ratio: compare(s.samples, b0.samples), cpuRatio: compare(s.cpuSamples, b0.cpuSamples) } }),
        };
      }),
      followed: { ...plan.followed, ...followedSummary(followed.after, 'A', 'B'), ...(before && { before: followedSummary(followed.before, 'A0', 'B0') }) },
      split: (() => {
        const [one, two] = [summarise(split.one), summarise(split.two, twoNames)];
        return { ...plan.split, one, two, ratio: compare(two.samples, one.samples), cpuRatio: compare(two.cpuSamples, one.cpuSamples) };
      })(),
      fanout: { spread: fanoutSummary(plan.followers, fanoutRounds.spread), local: fanoutSummary(plan.followers, fanoutRounds.local) },
      ...(profileDirs && { profileDirs }),
    };
  } finally {
    await Promise.all([
      ...processes.map((p) => p.stop()),
      ...started.map((s) => s.process.stop(profileDirs ? 30_000 : 5000)),
      ...closers.map((close) => close()),
    ]);
    for (const space of spaces) await space.cleanup().catch((error: unknown) => log(`scale: cleanup failed: ${reason(error)}`));
  }
}
