/**
 * Fan-out on a fresh bridge process: memory per idle SSE subscriber (server RSS delta over many
 * idle subscriptions on one thread, after a full GC on both sides of it), then the latency from
 * `POST send-message` to each subscriber receiving the user echo, at several subscriber counts.
 */
import { randomUUID } from 'node:crypto';
import type { LatencyReply } from '../fanout.js';
import { BENCH_RESOURCE } from '../servers/shared.js';
import { BenchProcess, startServer } from './procs.js';
import { percentile } from './stats.js';

export interface FanoutPlan {
  subscribers: number[];
  messages: number;
  idleSubscribers: number;
}

export interface FanoutLatency {
  subscribers: number;
  samples: number;
  p50: number;
  p99: number;
  max: number;
  /** `POST send-message` round trip (Mastra decides the route before the answer), p50. */
  postP50: number;
}

export interface FanoutResult {
  plan: FanoutPlan;
  memory: { idleSubscribers: number; rssBytesPerSubscriber: number; heapBytesPerSubscriber: number; subscribeMs: number };
  latency: FanoutLatency[];
}

type Mem = NodeJS.MemoryUsage;
type Failure = { error?: string };

const PREFIX = '/agui';
const eventsPath = (threadId: string) => `${PREFIX}/threads/${threadId}/events?resourceId=${BENCH_RESOURCE}`;
const jsHeap = (m: Mem) => m.heapUsed + m.external;

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

function check<T extends Failure>(reply: T): T {
  if (reply.error) throw new Error(reply.error);
  return reply;
}

export async function runFanoutPhase(plan: FanoutPlan): Promise<FanoutResult> {
  log('fan-out: starting a fresh bridge and the subscriber client…');
  const server = await startServer('bridge-fanout', 'bench/servers/bridge.ts', { flags: ['--expose-gc'] });
  const client = new BenchProcess('bench/fanout.ts');
  await client.ready();
  const subscribe = async (threadId: string, count: number) =>
    check(
      await client.request<{ count: number; ms: number } & Failure>(
        { cmd: 'subscribe', origin: server.origin, path: eventsPath(threadId), count },
        'subscribed',
        120_000,
      ),
    );
  const close = () => client.request({ cmd: 'close' }, 'closed');
  const mem = () => server.process.request<Mem>({ cmd: 'mem' }, 'mem');
  try {
    // Warm the route and the feed code first, so the delta is the subscribers and not first-use costs.
    await subscribe(`warm-${randomUUID()}`, 200);
    await close();
    const before = await mem();
    const { ms } = await subscribe(`idle-${randomUUID()}`, plan.idleSubscribers);
    const after = await mem();
    await close();
    const memory = {
      idleSubscribers: plan.idleSubscribers,
      rssBytesPerSubscriber: (after.rss - before.rss) / plan.idleSubscribers,
      heapBytesPerSubscriber: (jsHeap(after) - jsHeap(before)) / plan.idleSubscribers,
      subscribeMs: ms,
    };
    log(`fan-out: ${plan.idleSubscribers} idle subscribers: ${(memory.rssBytesPerSubscriber / 1024).toFixed(1)} KB RSS each`);
    const latency: FanoutLatency[] = [];
    for (const count of plan.subscribers) {
      const threadId = `fanout-${randomUUID()}`;
      await subscribe(threadId, count);
      const spec = { cmd: 'latency', origin: server.origin, prefix: PREFIX, threadId, resourceId: BENCH_RESOURCE, messages: plan.messages };
      const { samples, postMs } = check(await client.request<LatencyReply & Failure>(spec, 'latency', 300_000));
      await close();
      latency.push({
        subscribers: count,
        samples: samples.length,
        p50: percentile(samples, 50),
        p99: percentile(samples, 99),
        max: Math.max(...samples),
        postP50: percentile(postMs, 50),
      });
      log(`fan-out: ${count} subscribers: p50 ${latency.at(-1)?.p50.toFixed(2)} ms, p99 ${latency.at(-1)?.p99.toFixed(2)} ms`);
    }
    return { plan, memory, latency };
  } finally {
    await Promise.all([client.stop(), server.process.stop()]);
  }
}
