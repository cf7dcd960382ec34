import { EventType, type BaseEvent } from '@ag-ui/core';
import { injectable } from 'inversify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Where a run came from: a `POST /run`, a signal that woke an idle thread, or recovery answering what a crash left. */
export type RunOrigin = 'run' | 'signal' | 'recovery' | 'schedule';
/** How a run ended: its terminal AG-UI event (`RUN_FINISHED` and its outcome, or `RUN_ERROR`). */
export type RunOutcome = 'success' | 'interrupt' | 'cancelled' | 'error';
/** How a follower joined a thread's events stream. */
export type FollowerJoin = 'live' | 'replay' | 'snapshot';

/** A counter for the per-event paths: an addition, nothing else (see `Tally`). */
export interface EventCounter {
  inc(value?: number): void;
}

/**
 * A plain running total, published when Prometheus scrapes. Even a prom-client child bound to its
 * labels hashes and validates them on every `inc`; on a path taken per event batch, per follower,
 * an addition is all that should happen.
 */
class Tally implements EventCounter {
  total = 0;

  inc(value = 1): void {
    this.total += value;
  }
}

/** A gauge bound to its labels once, moved up and down where the thing starts and ends. */
export interface LevelGauge {
  inc(): void;
  dec(): void;
}

/** A number read when Prometheus scrapes (a map's size, say): nothing to keep in step. */
export type GaugeSource = () => number;

export const METRIC_PREFIX = 'agui_bridge_';

/** Latency buckets (seconds) of the HTTP histogram: JSON routes answer in ms, SSE headers too. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The bridge's Prometheus metrics, on a registry of its own (never prom-client's global one:
 * several bridges, and every test's, live in one process). Gauges of things the services already
 * count (open runs, followers, followed threads) are read at scrape time from the sources the
 * services register, so nothing on their paths keeps them in step. The events counters, on the
 * per-event paths, are plain totals (`runEvents`, `threadEvents`) copied in at scrape time too.
 *
 * @example
 * const metrics = new BridgeMetrics();
 * metrics.runStarted('demo', 'run');
 * metrics.runEvents.inc(batch.length);
 * metrics.limitRefused('requests_per_minute');
 * const text = await metrics.text(); // Prometheus text format
 */
@injectable()
export class BridgeMetrics {
  readonly registry = new Registry();
  /** AG-UI events written to `POST /run` streams (one `inc` per batch). */
  readonly runEvents: EventCounter;
  /** AG-UI events written to thread events streams, counted per follower (one `inc` per batch). */
  readonly threadEvents: EventCounter;
  /** Proxied frontend tool calls waiting for the client's result. */
  readonly toolsWaiting: LevelGauge;

  private readonly runsStarted: Counter<'agent' | 'origin'>;
  private readonly runsFinished: Counter<'agent' | 'origin' | 'outcome'>;
  private readonly runsErrored: Counter<'agent' | 'origin'>;
  private readonly followerJoins: Counter<'kind'>;
  private readonly signalDecisions: Counter<'kind' | 'action'>;
  private readonly limitRefusals: Counter<'limit'>;
  private readonly recoveryRuns: Counter<'kind'>;
  private readonly scheduleFires: Counter<'outcome'>;
  private readonly webhookAttempts: Counter<'result'>;
  private readonly outboxDepth = new Set<GaugeSource>();
  private readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  private readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly openRuns = new Set<GaugeSource>();
  private readonly followers = new Set<GaugeSource>();
  private readonly followedThreads = new Set<GaugeSource>();

  constructor() {
    const registers = [this.registry];
    const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
      new Counter<L>({ name: METRIC_PREFIX + name, help, labelNames, registers });
    this.runsStarted = counter('runs_started_total', 'Runs started, by agent and origin (run: POST /run; signal: a signal woke the thread)', [
      'agent',
      'origin',
    ]);
    this.runsFinished = counter('runs_finished_total', 'Runs ended with RUN_FINISHED, by outcome (success, interrupt, cancelled)', [
      'agent',
      'origin',
      'outcome',
    ]);
    this.runsErrored = counter('runs_errored_total', 'Runs ended with RUN_ERROR', ['agent', 'origin']);
    const [run, thread] = [new Tally(), new Tally()];
    this.runEvents = run;
    this.threadEvents = thread;
    this.tallied('events_sent_total', 'AG-UI events written to clients (thread streams: once per follower)', 'stream', { run, thread });
    this.followerJoins = counter('follower_joins_total', 'Thread events streams opened, by how they began (live, replay after Last-Event-ID, snapshot)', [
      'kind',
    ]);
    this.signalDecisions = counter('signal_decisions_total', 'Routing decisions of the signal routes, by route kind and action', ['kind', 'action']);
    this.limitRefusals = counter('limit_refusals_total', 'Requests refused by a configured limit', ['limit']);
    this.scheduleFires = counter(
      'schedule_fires_total',
      "Schedules' fires, by Mastra's outcome (succeeded, delivered, persisted, discarded, skipped, aborted, failed)",
      ['outcome'],
    );
    this.recoveryRuns = counter(
      'recovery_runs_total',
      'Runs recovery started for acknowledged input a crash left unanswered (continue: stored messages a cut run took; resend: messages never stored)',
      ['kind'],
    );
    this.webhookAttempts = counter(
      'webhook_attempts_total',
      'Webhook delivery attempts, by result (delivered: 2xx; retried: failed, tried again later; given_up: failed for the last time)',
      ['result'],
    );
    this.summedGauge('webhook_outbox_depth', 'Webhook deliveries waiting in the outbox (every process sees the same outbox)', this.outboxDepth);
    this.httpRequests = counter('http_requests_total', 'HTTP requests to the bridge routes, by route pattern and status', ['method', 'route', 'status']);
    this.httpDuration = new Histogram({
      name: `${METRIC_PREFIX}http_request_duration_seconds`,
      help: 'Time to the response headers (for SSE routes: until the stream opened), by route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.toolsWaiting = new Gauge({ name: `${METRIC_PREFIX}frontend_tools_waiting`, help: 'Proxied frontend tool calls waiting for their result', registers });
    this.summedGauge('open_run_streams', 'POST /run streams open now', this.openRuns);
    this.summedGauge('followers', 'Thread events streams open now', this.followers);
    this.summedGauge('followed_threads', 'Threads followed now (one Mastra subscription each)', this.followedThreads);
  }

  runStarted(agent: string, origin: RunOrigin): void {
    this.runsStarted.inc({ agent, origin });
  }

  runEnded(agent: string, origin: RunOrigin, outcome: RunOutcome): void {
    if (outcome === 'error') this.runsErrored.inc({ agent, origin });
    else this.runsFinished.inc({ agent, origin, outcome });
  }

  followerJoined(kind: FollowerJoin): void {
    this.followerJoins.inc({ kind });
  }

  /** A signal route's answer: `kind` is the route (`send`, `queue`, `signal`, `state`, `notification`), `action` Mastra's decision or `skipped`. */
  signalDecision(kind: string, action: string): void {
    this.signalDecisions.inc({ kind, action });
  }

  /** A run recovery started: `continue` answers stored messages a cut run took, `resend` sends one never stored. */
  recoveryRun(kind: 'continue' | 'resend'): void {
    this.recoveryRuns.inc({ kind });
  }

  /** One fire of a schedule, by how Mastra says it went. */
  scheduleFired(outcome: string): void {
    this.scheduleFires.inc({ outcome });
  }

  /** One webhook delivery attempt's result. */
  webhookAttempt(result: 'delivered' | 'retried' | 'given_up'): void {
    this.webhookAttempts.inc({ result });
  }

  /** Registers where the number of webhook deliveries waiting is read. */
  trackOutboxDepth(source: GaugeSource): void {
    this.outboxDepth.add(source);
  }

  /** A request refused by a limit (`LimitName`: `requests_per_minute`, `streams`, …): called where the `429` is decided. */
  limitRefused(limit: string): void {
    this.limitRefusals.inc({ limit });
  }

  /** One answered HTTP request; `route` is the pattern (`/agui/threads/:threadId`), never the path. */
  httpRequest(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, seconds);
  }

  /** Registers where the number of open `/run` streams is read (summed over sources). */
  trackOpenRuns(source: GaugeSource): void {
    this.openRuns.add(source);
  }

  /** Registers where the number of followers (open thread events streams) is read. */
  trackFollowers(source: GaugeSource): void {
    this.followers.add(source);
  }

  /** Registers where the number of followed threads is read. */
  trackFollowedThreads(source: GaugeSource): void {
    this.followedThreads.add(source);
  }

  /** Adds prom-client's process metrics (CPU, memory, event loop lag, GC) to this registry. */
  collectProcessMetrics(): void {
    collectDefaultMetrics({ register: this.registry });
  }

  /** The metrics in the Prometheus text format. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** The `Content-Type` of `text()`. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** A counter whose series are running totals kept outside prom-client, copied in when scraped. */
  private tallied(name: string, help: string, label: string, tallies: Record<string, Tally>): void {
    new Counter({
      name: METRIC_PREFIX + name,
      help,
      labelNames: [label],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [value, tally] of Object.entries(tallies)) this.inc({ [label]: value }, tally.total);
      },
    });
  }

  private summedGauge(name: string, help: string, sources: Set<GaugeSource>): void {
    new Gauge({
      name: METRIC_PREFIX + name,
      help,
      registers: [this.registry],
      collect() {
        let sum = 0;
        for (const source of sources) sum += source();
        this.set(sum);
      },
    });
  }
}

/**
 * The outcome of a run's terminal AG-UI event, or `undefined` for any other event.
 *
 * @example
 * terminalOutcome({ type: EventType.RUN_FINISHED, outcome: { type: 'interrupt' } }); // 'interrupt'
 */
export function terminalOutcome(event: BaseEvent | undefined): RunOutcome | undefined {
  if (event?.type === EventType.RUN_ERROR) return 'error';
  if (event?.type !== EventType.RUN_FINISHED) return undefined;
  // AG-UI's own outcome type; `success` with `pendingToolCallIds` (return-mode frontend tools) stays `success`.
  const outcome = (event as { outcome?: { type?: string } }).outcome?.type;
  return outcome === 'interrupt' || outcome === 'cancelled' ? outcome : 'success';
}

/**
 * The outcome of a Mastra run from its output's status (a run a signal woke, which the bridge
 * does not stream itself).
 *
 * @example
 * statusOutcome('suspended'); // 'interrupt'
 */
export function statusOutcome(status: string): RunOutcome {
  switch (status) {
    case 'failed':
    case 'tripwire':
      return 'error';
    case 'suspended':
    case 'waiting':
    case 'paused':
      return 'interrupt';
    case 'canceled':
    case 'bailed':
      return 'cancelled';
    default:
      return 'success';
  }
}
