import { EventType, type Event } from '@ag-ui/core';
import { RepeatedFailures } from './pubsub/index.js';
import { isRunEnd } from '../translate/close-run.js';
import { APPEND, entryId, idOf, openChange, POSITION, runAfter } from './event-log-scripts.js';
import { inject, injectable, unmanaged } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import type { BridgeLogger } from '../logger.js';
import { TOKENS } from '../tokens.js';
import type { NumberedEvent, NumberedListener, ThreadEventLog, ThreadEventLogs } from '../feed/event-log.js';
import { ReplayRing } from '../feed/replay-ring.js';
import { isUnavailable } from '../translate/failure.js';
import { errorMessage } from '../text.js';
import { withinMs } from '../within.js';
import type { RedisConnection } from './connection.js';
import { FollowedThreads, threadKeyOfLog } from './followed-threads.js';
import type { LocalThreadRuns } from './thread-runs.js';

const LOG_IDLE_MS = 24 * 3600 * 1000;
/** What must reach Redis while it may be away (a lost run's settlement, a catch-up) is tried again every second, this many times. */
const RETRIES = 30;
const RETRY_MS = 1000;
/** How long a run waits, at most, for its feed here to follow its thread for followers elsewhere (Redis slow or away: it goes on without). */
const WRITER_WAIT_MS = 2000;
/** How often the process reads again who follows the threads it runs (an announcement may have been lost). */
const RECHECK_MS = 1000;

async function retried(attempt: () => Promise<void>, goOn: () => boolean, left = RETRIES): Promise<void> {
  try {
    await attempt();
  } catch (error) {
    if (left === 0 || !goOn()) throw error;
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS).unref());
    return retried(attempt, goOn, left - 1);
  }
}

/** Tuning of `RedisEventLogs`: from the config by default, each overridable. */
export interface SharedLogOptions {
  /** Events kept per thread in the process (the ring a feed replays from). */
  replayBufferSize: number;
  /** Events kept per thread in Redis (approximate: `MAXLEN ~`); a reconnect further back gets a snapshot. */
  retainedEvents: number;
  /** A thread's log expires this long after its last event. */
  idleTtlMs: number;
  logger: BridgeLogger;
}

/**
 * One log per thread shared by every bridge process on one Redis: a stream of numbered events (ids
 * global per thread, so a client may come back to any process with its `Last-Event-ID`) and a
 * channel carrying each batch to every process's feed. A run's events are translated and appended
 * once, where the run runs (Mastra keeps its chunks there: `keepsRunChunksLocal`); the other
 * processes read the log. So that process needs a feed of the thread even when no client of its own
 * follows it: `onWriterNeeded` tells the hub when.
 */
@injectable()
export class RedisEventLogs implements ThreadEventLogs {
  private readonly options: SharedLogOptions;
  private readonly followed: FollowedThreads;
  private readonly logs = new Set<SharedLog>();
  /** When the subscriber connection last failed (ms), shared with every log (`outageWithin`). */
  private readonly outage = { at: 0 };

  constructor(
    @inject(TOKENS.Redis) private readonly redis: RedisConnection,
    @inject(TOKENS.Config) { replayBufferSize, logger }: Pick<ResolvedConfig, 'replayBufferSize' | 'logger'>,
    @inject(TOKENS.ThreadRuns) private readonly runs: LocalThreadRuns,
    @unmanaged() tuning: Partial<SharedLogOptions & { followTtlMs: number }> = {},
  ) {
    this.options = { replayBufferSize, retainedEvents: Math.max(10 * replayBufferSize, 10_000), idleTtlMs: LOG_IDLE_MS, logger, ...tuning };
    this.followed = new FollowedThreads(redis, tuning.followTtlMs);
    // Subscribed again after a lost connection: see `SharedLog.catchUp`.
    redis.subscriber.on('ready', () => {
      for (const log of this.logs) log.catchUp();
    });
    // Every failed (re)connect says so, from the drop to the last attempt before Redis is back.
    redis.subscriber.on('error', () => (this.outage.at = Date.now()));
  }

  async open(key: string): Promise<ThreadEventLog> {
    const log = new SharedLog(this.redis, this.options, key, this.followed, this.logs, this.outage);
    await log.start();
    return log;
  }

  onWriterNeeded(need: (key: string) => Promise<void>): void {
    const failures = new RepeatedFailures(isUnavailable);
    // Read every second while runs go on: an outage is one line, not one per read.
    const failed = (error: unknown) => {
      const level = failures.failed(error);
      if (level) this.options.logger[level](`Thread logs: who follows what could not be read: ${errorMessage(error)}`);
    };
    const writeFor = (threadKey: string) =>
      this.followed.logsOf(threadKey).then(async (keys) => {
        failures.succeeded();
        await Promise.all(keys.map(need));
      });
    // A run registers here on a thread followed elsewhere: its feed here follows the thread before
    // the run streams (a short run would otherwise be over before the feed subscribed), within a bound.
    this.runs.onRun((threadKey) => withinMs(writeFor(threadKey), WRITER_WAIT_MS).catch(failed));
    // A process starts following a thread while a run streams here: the feed gets the run from its start.
    this.followed
      .onFollowed((key) => {
        if (this.runs.running(threadKeyOfLog(key))) void need(key);
      })
      .catch(failed);
    // That announcement is pub/sub, lost while this process's subscriber was away (an outage, a
    // hang): who follows the threads running here is read again once it is back, and every second.
    const recheck = () => {
      for (const threadKey of this.runs.threads()) writeFor(threadKey).catch(failed);
    };
    this.redis.subscriber.on('ready', recheck);
    setInterval(recheck, RECHECK_MS).unref();
  }

  followedElsewhere(key: string): Promise<boolean> {
    return this.followed.followed(key);
  }
}

class SharedLog implements ThreadEventLog {
  private readonly keys: { stream: string; meta: string; channel: string; settled: (runId: string) => string };
  /** The thread's id (the key's last part): what a run opened again in the log names. */
  private readonly threadId: string;
  private ring!: ReplayRing;
  private base = 0;
  private last = 0;
  private listener: NumberedListener = () => {};
  /** Events read from Redis before the listener was set (the open run's start). */
  private backlog: NumberedEvent[] = [];
  private closed = false;
  /** The run this log's own appends go on (the last RUN_STARTED it appended, until its end). */
  private writingRun?: string;
  /** The run open in the log, as read from it. */
  private openRun?: string;
  private mark?: { stop(): void };
  /** Events were lost before what is handed out next (`skipGap`). */
  private gap = false;
  /** Batches that arrived while a gap before them was being read. */
  private filling?: Promise<void>;
  /** Batches that arrived before `start` knew where the thread stands. */
  private early?: string[] = [];
  private readonly onMessage = (message: string) => (this.early ? this.early.push(message) : this.received(message));
  private readonly failures = new RepeatedFailures(isUnavailable);

  constructor(
    private readonly redis: RedisConnection,
    private readonly options: SharedLogOptions,
    private readonly key: string,
    private readonly followed: FollowedThreads,
    private readonly openLogs: Set<SharedLog>,
    private readonly outage: { readonly at: number },
  ) {
    const id = `${redis.prefix}:log:${encodeURIComponent(key)}`;
    this.keys = { stream: `${id}:events`, meta: `${id}:meta`, channel: id, settled: (runId) => `${id}:settled:${encodeURIComponent(runId)}` };
    this.threadId = key.slice(key.lastIndexOf('\0') + 1);
  }

  get baseId(): number {
    return this.base;
  }

  get lastId(): number {
    return this.last;
  }

  /** Subscribes, and reads where the thread stands (and its open run's events). */
  async start(): Promise<void> {
    // Batches published while the position is read wait, then go through in order (duplicates dropped).
    await this.redis.subscriber.subscribe(this.keys.channel, this.onMessage);
    const [last, open] = (await POSITION.run(this.redis.client, [this.keys.meta], [String(this.options.idleTtlMs)])) as [string, string | null];
    const openStart = open ? Number(open) : undefined;
    const prefill = openStart !== undefined ? await this.read(openStart - 1, Number(last)) : undefined;
    this.base = prefill ? (openStart as number) - 1 : Number(last);
    this.last = this.base;
    this.ring = new ReplayRing(this.options.replayBufferSize, this.base);
    for (const entry of prefill ?? []) this.keep(entry.id, entry.event);
    this.backlog = prefill ?? [];
    const early = this.early ?? [];
    this.early = undefined;
    for (const message of early) this.received(message);
    this.openLogs.add(this);
  }

  setFollowed(followed: boolean): void {
    if (!followed || this.closed) {
      this.mark?.stop();
      this.mark = undefined;
    } else {
      this.mark ??= this.followed.follow(this.key, (error) =>
        this.options.logger.warn(`Thread log ${this.keys.channel}: could not mark it followed: ${errorMessage(error)}`),
      );
    }
  }

  append(events: readonly Event[]): void {
    if (this.closed || events.length === 0) return;
    // What goes on the run this log writes must find it still open; a new run starts anyway.
    const starts = events.findIndex((e) => e.type === EventType.RUN_STARTED);
    const goesOn = starts < 0 ? events : events.slice(0, starts);
    if (goesOn.length > 0) this.logFailure(this.write(goesOn, this.writingRun ?? ''));
    if (starts >= 0) this.logFailure(this.write(events.slice(starts), ''));
    this.writingRun = runAfter(this.writingRun, events);
  }

  /**
   * Written once for the whole cluster, and tried again while Redis is away (a lost run is often
   * noticed during the very outage that lost it): the run open now is the one it closes.
   */
  settle(runId: string, events: readonly Event[]): void {
    if (this.closed || events.length === 0) return;
    const closes = this.openRun ?? '';
    this.logFailure(
      retried(
        () => this.write(events, closes, this.keys.settled(runId)),
        () => !this.closed,
      ),
    );
  }

  /**
   * Reads what was appended while this log's subscription was down: a batch published then never
   * comes, and nothing later may reveal the gap (a lost run's settlement ends a quiet thread).
   */
  catchUp(): void {
    const attempt = async () => {
      const last = Number((await this.redis.client.hGet(this.keys.meta, 'last')) ?? 0);
      if (last > this.last) this.fillThen(last + 1, []);
    };
    retried(attempt, () => !this.closed).catch((error: unknown) =>
      this.options.logger.warn(`Thread log ${this.keys.channel}: could not catch up after a reconnect: ${errorMessage(error)}`),
    );
  }

  onEvents(listener: NumberedListener): void {
    this.listener = listener;
    const backlog = this.backlog;
    this.backlog = [];
    if (backlog.length > 0)
      listener(
        backlog.map((e) => e.event),
        backlog[0].id,
      );
  }

  since(id: number): NumberedEvent[] | undefined {
    return this.ring.since(id);
  }

  outageWithin(ms: number): boolean {
    return Date.now() - this.outage.at < ms;
  }

  /** Events after `id` from the thread's stream, up to the last one seen here. */
  async fetch(id: number): Promise<NumberedEvent[] | undefined> {
    if (id > this.last) return undefined;
    return this.read(id, this.last);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.openLogs.delete(this);
    this.setFollowed(false);
    void this.redis.subscriber.unsubscribe(this.keys.channel, this.onMessage).catch(() => {
      // closing: with Redis unreachable the subscription goes with the connection
    });
  }

  /** Numbers and appends events, in the order of the calls (one connection, scripts in order), if the run they go on is still open. */
  private async write(events: readonly Event[], goesOn: string, once?: string): Promise<void> {
    const [change, runId] = openChange(events);
    const args = [
      this.keys.channel,
      String(this.options.retainedEvents),
      String(this.options.idleTtlMs),
      change,
      runId,
      goesOn,
      this.threadId,
      ...events.map((e) => JSON.stringify(e)),
    ];
    const keys = [this.keys.stream, this.keys.meta, ...(once ? [once] : [])];
    const first = await APPEND.run(this.redis.client, keys, args);
    // Another process closed the run (it settled it as lost), or settled it first: not written.
    if (first === null) this.options.logger.debug(`Thread log ${this.keys.channel}: ${events.length} event(s) of a run closed meanwhile not written`);
  }

  /**
   * Logs a failed write as what it is: Redis away (failing every append, one per chunk) once per
   * outage at `warn`, until a write of this log goes through; anything else at `error`.
   */
  private logFailure(written: Promise<void>): void {
    written.then(
      () => this.failures.succeeded(),
      (error: unknown) => {
        const level = this.failures.failed(error);
        if (level === 'warn')
          this.options.logger.warn(
            `Thread log ${this.keys.channel}: Redis is unavailable, events are not appended until it answers again (further failures are not logged until an append succeeds): ${errorMessage(error)}`,
          );
        else if (level === 'error') this.options.logger.error(`Thread log ${this.keys.channel}: append failed: ${errorMessage(error)}`);
      },
    );
  }

  /** Exactly the events in `(after, upTo]`, or `undefined` when the stream no longer holds them all. */
  private async read(after: number, upTo: number): Promise<NumberedEvent[] | undefined> {
    if (upTo <= after) return [];
    const entries = (await this.redis.client.xRange(this.keys.stream, entryId(after + 1), entryId(upTo))) ?? [];
    if (entries.length !== upTo - after || idOf(entries[0].id) !== after + 1) return undefined;
    return entries.map((entry) => ({ id: idOf(entry.id), event: JSON.parse(entry.message.e) as Event }));
  }

  /** A batch from the channel: duplicates dropped, a gap before it read from the stream first. */
  private received(message: string): void {
    if (this.closed) return;
    const space = message.indexOf(' ');
    const firstId = Number(message.slice(0, space));
    const events = JSON.parse(message.slice(space + 1)) as Event[];
    if (this.filling || firstId > this.last + 1) return void this.fillThen(firstId, events);
    this.take(firstId, events);
  }

  private take(firstId: number, events: Event[]): void {
    const fresh = events.slice(Math.max(0, this.last + 1 - firstId));
    if (fresh.length === 0 && !this.gap) return;
    const from = firstId + events.length - fresh.length;
    fresh.forEach((event, i) => this.keep(from + i, event));
    const afterGap = this.gap;
    this.gap = false;
    this.listener(fresh, from, afterGap);
  }

  /** Reads what is missing before `firstId` from the stream, in order with the batches behind it. */
  private fillThen(firstId: number, events: Event[]): void {
    const previous = this.filling ?? Promise.resolve();
    this.filling = previous.then(async () => {
      if (this.closed) return;
      if (firstId > this.last + 1) {
        // Not read (Redis away): handled as a gap, which the feed fills with a snapshot.
        const missing = await this.read(this.last, firstId - 1).catch(() => undefined);
        if (missing && missing.length > 0)
          this.take(
            missing[0].id,
            missing.map((m) => m.event),
          );
        if (!missing) await this.skipGap(firstId - 1);
      }
      this.take(firstId, events);
    });
    const filling = this.filling;
    void filling.finally(() => {
      if (this.filling === filling) this.filling = undefined;
    });
  }

  /**
   * The stream no longer holds all of `(last, upTo]` (trimmed, or Redis restarted empty): the ring
   * restarts at what it still holds, marked as after a gap, so the feed sends a snapshot.
   */
  private async skipGap(upTo: number): Promise<void> {
    // Not read (Redis away): the ring starts over after the gap, holding nothing of it.
    const entries = (await this.redis.client.xRange(this.keys.stream, entryId(this.last + 1), entryId(upTo)).catch(() => undefined)) ?? [];
    const held = entries.map((entry) => ({ id: idOf(entry.id), event: JSON.parse(entry.message.e) as Event }));
    this.restartAt((held[0]?.id ?? upTo + 1) - 1);
    this.gap = true;
    if (held.length > 0)
      this.take(
        held[0].id,
        held.map((h) => h.event),
      );
  }

  private restartAt(id: number): void {
    this.ring = new ReplayRing(this.options.replayBufferSize, id);
    this.base = id;
    this.last = id;
  }

  private keep(id: number, event: Event): void {
    this.ring.push(id, event);
    this.last = id;
    if (event.type === EventType.RUN_STARTED) this.openRun = event.runId;
    else if (isRunEnd(event)) this.openRun = undefined;
  }
}
