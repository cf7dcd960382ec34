/**
 * 10,000 followers of one thread (issue 30): `send-message`, then the time until each follower has
 * the user echo and the run's `RUN_FINISHED`. One process (the embedded default, a LibSQL file)
 * beside two on Redis + PostgreSQL (the followers split evenly, the message posted to A), rounds
 * interleaved; with `baselineDir`, that checkout's servers too. The followers' client runs on the
 * same machine (bench/fanout.ts, raw sockets), as a user's load balancer would not.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { LatencyReply } from '../fanout.js';
import { BENCH_RESOURCE } from '../servers/shared.js';
import { REPO_ROOT } from './fixtures.js';
import { BenchProcess, cpuMsOf, startServer, startStandalone, type BenchServer } from './procs.js';
import { isolate, REDIS_URL, requireScaleServices } from './scale-phase.js';
import { median, percentile } from './stats.js';

export interface FollowersPlan {
  followers: number;
  /** `send-message`s per round (one round per setup and repetition). */
  messages: number;
  reps: number;
  baselineDir?: string;
}

/** Where the followers were: one process, or two sharing Redis and PostgreSQL. */
export type FollowersSetup = 'one' | 'two';

export interface FollowersCell {
  /** Every follower's time to the user echo, pooled over the rounds (ms). */
  echo: { p50: number; p99: number; max: number };
  /** Every follower's time to `RUN_FINISHED` (ms). */
  finished: { p50: number; p99: number; max: number };
  /** The rounds' echo p99s, one per repetition. */
  echoP99s: number[];
  /** Echo p50 / p99 of the followers of each process (its name), pooled over the rounds. */
  echoByServer: Record<string, { p50: number; p99: number }>;
  /** CPU the serving process(es) spent per message, ms (median of rounds): steadier than latency on a shared machine. */
  serverCpuMsPerMessage: number;
  /** That CPU over the events the followers received, µs per delivered event (median of rounds). */
  serverCpuUsPerEvent: number;
  /** Events each follower received per message (the most any got), and whether every follower got as many in every round. */
  eventsPerMessage: number;
  everyEventToEveryone: boolean;
  samples: number;
}

export interface FollowersResult {
  plan: FollowersPlan;
  after: Record<FollowersSetup, FollowersCell>;
  before?: Record<FollowersSetup, FollowersCell>;
  /** Main-thread CPU profiles written with `--profile`, per server (`followers one`, `followers A`, `followers B`). */
  profileDirs?: Record<string, string>;
}

type Latency = LatencyReply & { error?: string };
type Round = Latency & { serverCpuMs: number };

const PREFIX = '/agui';
const SERVER_FILE = 'bench/servers/standalone.ts';

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

const spread = (values: number[]) => ({ p50: percentile(values, 50), p99: percentile(values, 99), max: values.reduce((a, b) => Math.max(a, b), 0) });

function summarise(rounds: Round[], messages: number): FollowersCell {
  const echo = rounds.flatMap((r) => r.samples);
  return {
    echo: spread(echo),
    finished: spread(rounds.flatMap((r) => r.finished)),
    echoP99s: rounds.map((r) => percentile(r.samples, 99)),
    echoByServer: Object.fromEntries(
      [...new Set(rounds.flatMap((r) => Object.keys(r.byLabel)))].map((name) => {
        const values = rounds.flatMap((r) => r.byLabel[name] ?? []);
        return [name, { p50: percentile(values, 50), p99: percentile(values, 99) }];
      }),
    ),
    serverCpuMsPerMessage: median(rounds.map((r) => r.serverCpuMs / messages)),
    serverCpuUsPerEvent: median(rounds.map((r) => (r.serverCpuMs * 1000) / r.events.total)),
    eventsPerMessage: median(rounds.map((r) => r.events.most / messages)),
    everyEventToEveryone: rounds.every((r) => r.events.fewest === r.events.most && r.events.most > 0),
    samples: echo.length,
  };
}

/** The servers of one checkout: one on its LibSQL file, two on a schema and prefix of their own. */
async function startSetup(
  label: string,
  space: Awaited<ReturnType<typeof isolate>>,
  baselineDir?: string,
  profileDirs?: Record<string, string>,
): Promise<Record<FollowersSetup, BenchServer[]>> {
  const flags = (key: string) => (profileDirs ? ['--cpu-prof', `--cpu-prof-dir=${profileDirs[`followers ${key}`]}`] : []);
  const file = baselineDir ? resolve(baselineDir, SERVER_FILE) : SERVER_FILE;
  const env: Record<string, string> = {
    DATABASE_URL: space.databaseUrl,
    REDIS_URL,
    REDIS_PREFIX: space.prefix,
    ...(baselineDir && { BRIDGE_DIR: resolve(baselineDir) }),
  };
  const one = await startStandalone(`${label} one`, { baselineDir, flags: flags('one') });
  // One at a time: the first shared server creates the schema's tables, the second finds them.
  const a = await startServer(`${label} A`, file, { cwd: baselineDir, env, flags: flags('A') });
  const b = await startServer(`${label} B`, file, { cwd: baselineDir, env, flags: flags('B') });
  return { one: [one], two: [a, b] };
}

/** With `profile`, this checkout's three servers run with `--cpu-prof` (bench/results/profiles/followers-<server>/). */
export async function runFollowersPhase(plan: FollowersPlan, profile = false): Promise<FollowersResult> {
  await requireScaleServices();
  const profileDirs = profile
    ? Object.fromEntries(['one', 'A', 'B'].map((k) => [`followers ${k}`, resolve(REPO_ROOT, 'bench/results/profiles', `followers-${k}`)]))
    : undefined;
  const spaces = [await isolate(), ...(plan.baselineDir ? [await isolate()] : [])];
  const servers: BenchServer[] = [];
  const client = new BenchProcess('bench/fanout.ts');
  try {
    log(`followers: starting ${plan.baselineDir ? 'six' : 'three'} servers and the followers' client…`);
    const after = await startSetup('after', spaces[0], undefined, profileDirs);
    const before = plan.baselineDir ? await startSetup('before', spaces[1], plan.baselineDir) : undefined;
    servers.push(...Object.values(after).flat(), ...(before ? Object.values(before).flat() : []));
    await client.ready();

    const round = async (on: BenchServer[], messages: number): Promise<Round> => {
      const threadId = `followers-${randomUUID()}`;
      const path = `${PREFIX}/threads/${threadId}/events?resourceId=${BENCH_RESOURCE}`;
      try {
        for (const server of on) {
          const reply = await client.request<{ error?: string }>(
            { cmd: 'subscribe', origin: server.origin, path, count: Math.round(plan.followers / on.length), label: server.name },
            'subscribed',
            300_000,
          );
          if (reply.error) throw new Error(reply.error);
        }
        const spec = { cmd: 'latency', origin: on[0].origin, prefix: PREFIX, threadId, resourceId: BENCH_RESOURCE, messages };
        const cpu = () => on.reduce((ms, server) => ms + cpuMsOf(server.process.pid), 0);
        const before = cpu();
        const reply = await client.request<Latency>(spec, 'latency', 600_000);
        if (reply.error) throw new Error(reply.error);
        // Message 0 (uncounted, it creates the thread) is in this too: a small, equal share for every setup.
        return { ...reply, serverCpuMs: cpu() - before };
      } finally {
        await client.request({ cmd: 'close' }, 'closed');
      }
    };

    const checkouts = [['after', after] as const, ...(before ? [['before', before] as const] : [])];
    // Unmeasured: JIT, the first statements, Redis scripts loaded.
    for (const [, setup] of checkouts) for (const on of Object.values(setup)) await round(on, 1);
    const rounds = Object.fromEntries(checkouts.map(([key]) => [key, { one: [] as Round[], two: [] as Round[] }]));
    for (let rep = 0; rep < plan.reps; rep++) {
      const order = checkouts.flatMap(([key, setup]) => (['one', 'two'] as const).map((where) => [key, where, setup[where]] as const));
      for (const [key, where, on] of rep % 2 === 1 ? order.reverse() : order) {
        const result = await round(on, plan.messages);
        rounds[key][where].push(result);
        log(
          `followers: rep ${rep + 1}/${plan.reps} ${key} ${where}: echo p50 ${percentile(result.samples, 50).toFixed(0)} / p99 ${percentile(result.samples, 99).toFixed(0)} ms, RUN_FINISHED p99 ${percentile(result.finished, 99).toFixed(0)} ms, server CPU ${(result.serverCpuMs / plan.messages).toFixed(0)} ms/message, ${((result.serverCpuMs * 1000) / result.events.total).toFixed(1)} µs/event, events per follower ${result.events.fewest}–${result.events.most}`,
        );
      }
    }
    const cells = (key: string) => ({ one: summarise(rounds[key].one, plan.messages), two: summarise(rounds[key].two, plan.messages) });
    return { plan, after: cells('after'), ...(before && { before: cells('before') }), ...(profileDirs && { profileDirs }) };
  } finally {
    await Promise.all([client.stop(), ...servers.map((s) => s.process.stop(profileDirs ? 30_000 : 5000))]);
    for (const space of spaces) await space.cleanup().catch((error: unknown) => log(`followers: cleanup failed: ${(error as Error).message}`));
  }
}
