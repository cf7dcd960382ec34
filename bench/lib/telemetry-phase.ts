/**
 * The cost of what operators turn on (issue 31): the standalone server with traces exported (to
 * an OTLP/HTTP receiver in this process, `http/protobuf`, the SDK's default), with webhooks on (to a
 * receiver here answering 200), and with neither, side by side in the same rounds (rotated each
 * repetition), at 1 and 16 streams. Events/s is compared per repetition; each server's CPU per run
 * is read from `/proc`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RoundResult, RoundSpec } from '../load.js';
import { BenchProcess, cpuMsOf, startStandalone, type BenchServer } from './procs.js';
import { median } from './stats.js';

export interface TelemetryPlan {
  levels: Array<{ concurrency: number; streams: number; words: number }>;
  reps: number;
  warmupRounds: number;
}

type Name = 'off' | 'traced' | 'webhooks';

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
  /** Median over the repetitions of each server's events/s ÷ the `off` server's in the same repetition. */
  ratios: { traced: number; webhooks: number };
}

export interface TelemetryResult {
  plan: TelemetryPlan;
  levels: TelemetryLevel[];
  /** What the receivers got: spans exported (bodies) and webhooks delivered. */
  received: { traceExports: number; webhooks: number };
}

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

export async function runTelemetryPhase(plan: TelemetryPlan): Promise<TelemetryResult> {
  log('telemetry: the standalone server with traces exported, with webhooks, and with neither…');
  const [otlp, hooks] = await Promise.all([sink(), sink()]);
  const named = (name: Name) => (server: BenchServer) => ({ ...server, name });
  const servers: Array<BenchServer & { name: Name }> = await Promise.all([
    startStandalone('off').then(named('off')),
    startStandalone('traced', { env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url } }).then(named('traced')),
    startStandalone('webhooks', { env: { WEBHOOK_URLS: `${hooks.url}/hooks`, WEBHOOK_SECRET: SECRET } }).then(named('webhooks')),
  ]);
  const load = new BenchProcess('bench/load.ts');
  await load.ready();
  const round = async (server: BenchServer & { name: Name }, level: Omit<RoundSpec, 'target' | 'origin'>) => {
    const before = cpuMsOf(server.process.pid);
    const result = await load.request<RoundResult>({ cmd: 'round', target: 'bridge', origin: server.origin, ...level }, 'round');
    return { ...result, cpuMs: cpuMsOf(server.process.pid) - before };
  };
  const levels: TelemetryLevel[] = [];
  try {
    for (let i = 0; i < plan.warmupRounds; i++) for (const server of servers) await round(server, { concurrency: 16, streams: 64, words: 200 });
    for (const level of plan.levels) {
      const measured: Record<Name, Array<RoundResult & { cpuMs: number }>> = { off: [], traced: [], webhooks: [] };
      for (let rep = 0; rep < plan.reps; rep++) {
        // Rotated: each server goes first, second and third in turn.
        const order = servers.map((_, i) => servers[(i + rep) % servers.length]);
        for (const server of order) measured[server.name].push(await round(server, level));
        log(`telemetry: c=${level.concurrency} rep ${rep + 1}/${plan.reps}: ${servers.map((s) => `${s.name} ${measured[s.name][rep].eventsPerSec.toFixed(0)} events/s`).join(', ')}`);
      }
      const summary = (name: Name): TelemetryTarget => ({
        eventsPerSec: median(measured[name].map((r) => r.eventsPerSec)),
        cpuMsPerRun: median(measured[name].map((r) => r.cpuMs / level.streams)),
        errors: measured[name].flatMap((r) => r.errors),
      });
      const ratio = (name: Name) => median(measured[name].map((r, i) => r.eventsPerSec / measured.off[i].eventsPerSec));
      levels.push({ ...level, servers: { off: summary('off'), traced: summary('traced'), webhooks: summary('webhooks') }, ratios: { traced: ratio('traced'), webhooks: ratio('webhooks') } });
    }
  } finally {
    await Promise.all([load.stop(), ...servers.map((s) => s.process.stop())]);
  }
  const received = { traceExports: otlp.count(), webhooks: hooks.count() };
  await Promise.all([otlp.close(), hooks.close()]);
  return { plan, levels, received };
}
