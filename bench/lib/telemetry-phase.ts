/**
 * The cost of what operators turn on (issues 31 and 51): the standalone server with traces exported
 * (to an OTLP/HTTP receiver in this process, `http/protobuf`, the SDK's default) with Mastra's spans
 * (`MASTRA_SPANS=on`, the default), the same sampled at 10 % (`parentbased_traceidratio`), and
 * with the bridge's spans only (`off`), with webhooks on (to a
 * receiver here answering 200), and with none of them; beside them Mastra's own route with and
 * without the same tracing, for what Mastra's spans cost Mastra itself. All side by side in the same
 * rounds (forward and backward in turn), at 1 and 16 streams. Events/s is compared per repetition with
 * the untraced server of the same kind; each server's CPU per run is read from `/proc`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import type { RoundResult, RoundSpec } from '../load.js';
import { REPO_ROOT } from './fixtures.js';
import { BenchProcess, startServer, startStandalone, withCpu, type BenchServer, type Measured } from './procs.js';
import { median } from './stats.js';

export interface TelemetryPlan {
  levels: Array<{ concurrency: number; streams: number; words: number }>;
  reps: number;
  warmupRounds: number;
}

const NAMES = ['off', 'traced', 'sampled', 'tracedBridgeOnly', 'webhooks', 'mastra', 'mastraTraced'] as const;
type Name = (typeof NAMES)[number];
/** The servers compared with another, and which: each bridge with the bare bridge, Mastra's traced route with its bare one. */
const BASELINE = { traced: 'off', sampled: 'off', tracedBridgeOnly: 'off', webhooks: 'off', mastraTraced: 'mastra' } as const satisfies Partial<
  Record<Name, Name>
>;
type Compared = keyof typeof BASELINE;

export interface TelemetryTarget {
  eventsPerSec: number;
  cpuMsPerRun: number;
  errors: string[];
}

export interface TelemetryLevel {
  concurrency: number;
  streams: number;
  words: number;
  servers: Record<Name, TelemetryTarget>;
  /** Median over the repetitions of each server's events/s ÷ its baseline's (`BASELINE`) in the same repetition. */
  ratios: Record<Compared, number>;
}

export interface TelemetryResult {
  plan: TelemetryPlan;
  levels: TelemetryLevel[];
  /** What the receivers got: spans exported (bodies) and webhooks delivered. */
  received: { traceExports: number; webhooks: number };
  /** Main-thread CPU profiles written with `--profile`, per server. */
  profileDirs?: Record<string, string>;
}

const MASTRA_ROUTE = 'bench/servers/mastra-route.ts';

/** A secret for the bench's webhooks (what `WEBHOOK_SECRET` looks like). */
const SECRET = `whsec_${Buffer.from('the bench webhook secret, 32 byt').toString('base64')}`;

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

/** A receiver answering 200 to everything, counting the requests. */
async function sink(): Promise<{ url: string; count: () => number; close: () => Promise<void> }> {
  let count = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    count: () => count,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export async function runTelemetryPhase(plan: TelemetryPlan, profile = false): Promise<TelemetryResult> {
  log('telemetry: the standalone server traced (with and without Mastra’s spans), with webhooks, with neither; Mastra’s route traced and not…');
  const [otlp, hooks] = await Promise.all([sink(), sink()]);
  const profileDirs = profile
    ? Object.fromEntries(NAMES.map((name) => [`telemetry-${name}`, resolve(REPO_ROOT, `bench/results/profiles/telemetry-${name}`)]))
    : undefined;
  const flags = (name: Name) => (profileDirs ? ['--cpu-prof', `--cpu-prof-dir=${profileDirs[`telemetry-${name}`]}`] : []);
  const traced = { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url };
  const start: Record<Name, () => Promise<BenchServer>> = {
    off: () => startStandalone('off', { flags: flags('off') }),
    traced: () => startStandalone('traced', { env: traced, flags: flags('traced') }),
    // A tenth of the traces kept, as the SDK's standard variables say it: runs it drops should cost what untraced ones do.
    sampled: () =>
      startStandalone('sampled', {
        env: { ...traced, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' },
        flags: flags('sampled'),
      }),
    tracedBridgeOnly: () => startStandalone('tracedBridgeOnly', { env: { ...traced, MASTRA_SPANS: 'off' }, flags: flags('tracedBridgeOnly') }),
    webhooks: () => startStandalone('webhooks', { env: { WEBHOOK_URLS: `${hooks.url}/hooks`, WEBHOOK_SECRET: SECRET }, flags: flags('webhooks') }),
    mastra: () => startServer('mastra', MASTRA_ROUTE, { env: { BENCH_STORAGE: 'libsql' }, flags: flags('mastra') }),
    mastraTraced: () => startServer('mastraTraced', MASTRA_ROUTE, { env: { BENCH_STORAGE: 'libsql', ...traced }, flags: flags('mastraTraced') }),
  };
  const servers = await Promise.all(NAMES.map(async (name) => ({ ...(await start[name]()), name })));
  const load = new BenchProcess('bench/load.ts');
  await load.ready();
  const round = async (server: BenchServer & { name: Name }, level: Omit<RoundSpec, 'target' | 'origin'>) => {
    const target = server.name.startsWith('mastra') ? 'mastra' : 'bridge';
    return withCpu(server.process.pid, () => load.request<RoundResult>({ cmd: 'round', target, origin: server.origin, ...level }, 'round'));
  };
  const levels: TelemetryLevel[] = [];
  try {
    for (let i = 0; i < plan.warmupRounds; i++) for (const server of servers) await round(server, { concurrency: 16, streams: 64, words: 200 });
    for (const level of plan.levels) {
      const measured = Object.fromEntries(NAMES.map((name) => [name, []])) as unknown as Record<Name, Array<Measured<RoundResult>>>;
      for (let rep = 0; rep < plan.reps; rep++) {
        // Forward, then backward: a drift of the machine's speed over two repetitions weighs on every server alike.
        for (const server of rep % 2 === 0 ? servers : [...servers].reverse()) measured[server.name].push(await round(server, level));
        log(
          `telemetry: c=${level.concurrency} rep ${rep + 1}/${plan.reps}: ${servers.map((s) => `${s.name} ${measured[s.name][rep].eventsPerSec.toFixed(0)} events/s`).join(', ')}`,
        );
      }
      const summary = (name: Name): TelemetryTarget => ({
        eventsPerSec: median(measured[name].map((r) => r.eventsPerSec)),
        cpuMsPerRun: median(measured[name].map((r) => r.cpuMs / level.streams)),
        errors: measured[name].flatMap((r) => r.errors),
      });
      const ratio = (name: Compared) => median(measured[name].map((r, i) => r.eventsPerSec / measured[BASELINE[name]][i].eventsPerSec));
      const compared = Object.keys(BASELINE) as Compared[];
      levels.push({
        ...level,
        servers: Object.fromEntries(NAMES.map((name) => [name, summary(name)])) as Record<Name, TelemetryTarget>,
        ratios: Object.fromEntries(compared.map((name) => [name, ratio(name)])) as Record<Compared, number>,
      });
    }
  } finally {
    await Promise.all([load.stop(), ...servers.map((s) => s.process.stop())]);
  }
  const received = { traceExports: otlp.count(), webhooks: hooks.count() };
  await Promise.all([otlp.close(), hooks.close()]);
  return { plan, levels, received, profileDirs };
}
