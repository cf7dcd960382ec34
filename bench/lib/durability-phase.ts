/**
 * What the standalone server pays for durability, on its real storage (a LibSQL file): the
 * `send-message` round trip (answered once the durable inbox has committed the message) and
 * `/run` events/s (input stored before `RUN_STARTED`, each step saved as it ends).
 *
 * With `--baseline=<dir>`, that checkout's standalone server runs side by side, rounds
 * interleaved (A B, then B A), so the cost reads as a difference and a ratio from one run.
 */
import { randomUUID } from 'node:crypto';
import type { RoundResult } from '../load.js';
import { BENCH_RESOURCE } from '../servers/shared.js';
import { BenchProcess, startStandalone, type BenchServer } from './procs.js';
import { median, percentile } from './stats.js';

export interface DurabilityPlan {
  /** `send-message`s per round (each wakes an idle thread and waits for its run to end). */
  messages: number;
  /** `/run` rounds: concurrency → streams per round. */
  runs: Array<{ concurrency: number; streams: number }>;
  words: number;
  reps: number;
  baselineDir?: string;
}

export interface DurabilityServerResult {
  sendMessage: { p50: number; p99: number; samples: number };
  /** Per concurrency: median events/s over the rounds, and every round's. */
  runs: Array<{ concurrency: number; eventsPerSec: number; samples: number[]; errors: string[] }>;
}

export interface DurabilityResult {
  plan: DurabilityPlan;
  bridge: DurabilityServerResult;
  baseline?: DurabilityServerResult;
}

type Failure = { error?: string };

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

/** Collects one server's rounds. */
class Tally {
  readonly postMs: number[] = [];
  readonly runs = new Map<number, RoundResult[]>();

  result(): DurabilityServerResult {
    return {
      sendMessage: { p50: percentile(this.postMs, 50), p99: percentile(this.postMs, 99), samples: this.postMs.length },
      runs: [...this.runs].map(([concurrency, rounds]) => ({
        concurrency,
        eventsPerSec: median(rounds.map((r) => r.eventsPerSec)),
        samples: rounds.map((r) => r.eventsPerSec),
        errors: rounds.flatMap((r) => r.errors),
      })),
    };
  }
}

export async function runDurabilityPhase(plan: DurabilityPlan): Promise<DurabilityResult> {
  log('durability: starting the standalone server(s) on LibSQL files…');
  const servers = await Promise.all([startStandalone('bridge'), ...(plan.baselineDir ? [startStandalone('baseline', { baselineDir: plan.baselineDir })] : [])]);
  const [fanout, load] = [new BenchProcess('bench/fanout.ts'), new BenchProcess('bench/load.ts')];
  await fanout.ready();
  await load.ready();
  const tallies = new Map(servers.map((s) => [s.name, new Tally()]));

  const sendRound = async (server: BenchServer, tally: Tally) => {
    const threadId = `durability-${randomUUID()}`;
    const subscribed = await fanout.request<Failure>(
      { cmd: 'subscribe', origin: server.origin, path: `/agui/threads/${threadId}/events?resourceId=${BENCH_RESOURCE}`, count: 1 },
      'subscribed',
    );
    if (subscribed.error) throw new Error(subscribed.error);
    const spec = { cmd: 'latency', origin: server.origin, prefix: '/agui', threadId, resourceId: BENCH_RESOURCE, messages: plan.messages };
    const reply = await fanout.request<{ postMs: number[] } & Failure>(spec, 'latency', 300_000);
    await fanout.request({ cmd: 'close' }, 'closed');
    if (reply.error) throw new Error(reply.error);
    tally.postMs.push(...reply.postMs);
  };
  const runRound = async (server: BenchServer, tally: Tally, concurrency: number, streams: number) => {
    const round = await load.request<RoundResult>({ cmd: 'round', target: 'bridge', origin: server.origin, concurrency, streams, words: plan.words }, 'round');
    tally.runs.set(concurrency, [...(tally.runs.get(concurrency) ?? []), round]);
  };

  try {
    // One unmeasured pass: JIT, LibSQL's first statements.
    for (const server of servers) {
      await sendRound(server, new Tally());
      await runRound(server, new Tally(), 4, 8);
    }
    for (let rep = 0; rep < plan.reps; rep++) {
      const order = rep % 2 === 0 ? servers : [...servers].reverse();
      for (const server of order) {
        const tally = tallies.get(server.name) as Tally;
        await sendRound(server, tally);
        for (const { concurrency, streams } of plan.runs) await runRound(server, tally, concurrency, streams);
      }
      log(
        `durability: rep ${rep + 1}/${plan.reps}: ${servers.map((s) => `${s.name} send-message p50 ${percentile(tallies.get(s.name)!.postMs, 50).toFixed(2)} ms`).join(', ')}`,
      );
    }
  } finally {
    await Promise.all([fanout.stop(), load.stop(), ...servers.map((s) => s.process.stop())]);
  }
  const baseline = tallies.get('baseline');
  return { plan, bridge: (tallies.get('bridge') as Tally).result(), ...(baseline && { baseline: baseline.result() }) };
}
