/**
 * `npm run soak -- --minutes 10 [--seed N] [--threads N] [--steps N]`: issue 28's mixed soak. Starts
 * two bridge processes of its own on the machine's Redis and PostgreSQL (an isolated prefix and
 * schema, dropped at the end), then runs storms (test/support/storm.ts) one round after another
 * until the time is up: each round drives `--threads` new threads for `--steps` steps each, waits
 * until they are idle and checks them. At the end every thread's history is read once more (a row
 * added after its check is a run nobody asked for), the report is printed (and written as JSON,
 * `--out`), and the exit code is 1 if anything failed.
 *
 * @example
 * npx tsx scripts/soak.ts --minutes 10 --seed 42
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { failureCount, FAILURE_KINDS, formatReport, runStorm, startStormCluster, summarize, type StormThread } from '../test/support/storm.js';

interface Args {
  minutes: number;
  seed: number;
  threads: number;
  steps: number;
  out?: string;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { minutes: 10, seed: Math.floor(Math.random() * 2 ** 31), threads: 6, steps: 25 };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = inline ?? argv[++i];
    const number = Number(value);
    switch (flag) {
      case '--minutes':
      case '--seed':
      case '--threads':
      case '--steps':
        if (!Number.isFinite(number) || number < 0) throw new Error(`${flag} needs a number, got ${value}`);
        args[flag.slice(2) as 'minutes' | 'seed' | 'threads' | 'steps'] = number;
        break;
      case '--out':
        args.out = value;
        break;
      default:
        throw new Error(`unknown option ${argv[i]} (options: --minutes N, --seed N, --threads N, --steps N, --out FILE)`);
    }
  }
  return args;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const out = args.out ?? join(tmpdir(), `soak-report-${args.seed}.json`);
  console.log(`soak: seed ${args.seed}, ${args.minutes} min, ${args.threads} threads × ${args.steps} steps per round`);
  const cluster = await startStormCluster('soak');
  const stop = () => {
    void cluster.close().finally(() => process.exit(130));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const started = Date.now();
  const deadline = started + args.minutes * 60_000;
  const threads: StormThread[] = [];
  let rounds = 0;
  try {
    do {
      rounds++;
      const seed = (args.seed + (rounds - 1) * 7919) >>> 0;
      const { report, threads: roundThreads } = await runStorm({ nodes: cluster.nodes, threads: args.threads, steps: args.steps, seed, round: rounds });
      threads.push(...roundThreads);
      const failures = FAILURE_KINDS.filter((k) => report.failures[k] > 0).map((k) => `${k} ${report.failures[k]}`);
      console.log(
        `round ${rounds} (seed ${seed}): ${(report.durationMs / 1000).toFixed(1)} s, ${report.acknowledged} acknowledged, failures: ${failures.join(', ') || 'none'}; ${Math.max(0, Math.round((deadline - Date.now()) / 1000))} s left`,
      );
    } while (Date.now() < deadline);

    // A run nobody asked for can come late (a sweep of the durable inbox runs every 5 s for
    // entries older than 10 s): read every thread once more after that has had its chance.
    console.log('soak: rounds done; reading every history again in 20 s');
    await sleep(20_000);
    let late = 0;
    for (const thread of threads) late += (await thread.recheck()).length;
    for (const [i, p] of cluster.processes.entries()) {
      if (p.child.exitCode !== null || p.child.signalCode !== null) {
        console.log(
          `soak: process ${cluster.nodes[i].name} exited (${p.child.exitCode ?? p.child.signalCode}) during the soak:\n${p.output().stderr.slice(-2000)}`,
        );
        late++;
      }
    }
    // What the processes healed on their own: leases of runs that were over (src/redis/stale-leases.ts),
    // and messages no run answered, adopted from the durable inbox (src/signals/inbox-recovery.ts).
    const healings = [
      ['let go of', 'stale thread lease(s)', 'still held the thread'],
      ['adopted messages on', 'thread(s)', 'that no run had answered'],
    ];
    for (const [i, p] of cluster.processes.entries()) {
      for (const [did, what, marker] of healings) {
        const healed = p
          .output()
          .stdout.split('\n')
          .filter((line) => line.includes(marker));
        if (healed.length > 0) console.log(`soak: process ${cluster.nodes[i].name} ${did} ${healed.length} ${what}:\n${healed.join('\n')}`);
      }
    }
    const report = summarize(threads, {
      seed: args.seed,
      threads: args.threads,
      steps: args.steps * rounds,
      nodes: cluster.nodes,
      durationMs: Date.now() - started,
    });
    if (late > 0) console.log(`soak: ${late} thread(s) changed after their check, or a process died`);
    console.log(`\nsoak: ${rounds} rounds (seeds ${args.seed} + k × 7919), ${threads.length} threads\n${formatReport(report)}`);
    writeFileSync(out, JSON.stringify({ rounds, ...report }, null, 2));
    console.log(`\nsoak: report written to ${out}`);
    return failureCount(report) + late > 0 ? 1 : 0;
  } finally {
    await cluster.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error('soak failed:', error);
    process.exit(2);
  },
);
