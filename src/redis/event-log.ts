import { randomUUID } from 'node:crypto';
import { EventType, type Event } from '@ag-ui/core';
import { inject, injectable, unmanaged } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import type { BridgeLogger } from '../logger.js';
import { TOKENS } from '../tokens.js';
import type { NumberedEvent, NumberedListener, ThreadEventLog, ThreadEventLogs } from '../feed/event-log.js';
import { ReplayRing } from '../feed/replay-ring.js';
import { errorMessage } from '../translate/values.js';
import type { RedisConnection } from './connection.js';
import { LuaScript } from './pubsub/lua.js';
import { RELEASE_IF_OWNER } from './pubsub/owned-key.js';
import { keyOf, Unmatched } from './unmatched.js';

/** A thread's shared log is dropped a day after its last event. */
const LOG_IDLE_MS = 24 * 3600 * 1000;
/** How soon another process takes over writing a thread's log when its writer's process dies. */
const WRITER_LEASE_MS = 5000;

/** Tuning of `RedisEventLogs`: from the config by default, each overridable. */
export interface SharedLogOptions {
  /** Events kept per thread in the process (the ring a feed replays from). */
  replayBufferSize: number;
  /** Events kept per thread in Redis (approximate: `MAXLEN ~`); a reconnect further back gets a snapshot. */
  retainedEvents: number;
  /** A thread's log expires this long after its last event. */
  idleTtlMs: number;
  /** The writer's lease: a process that dies stops writing, and another feed takes over within this. */
  writerLeaseMs: number;
  logger: BridgeLogger;
}

/** A new thread's counter: Redis's clock in milliseconds × 1000, as a feed's base in one process (`feedBase`). */
const CLOCK_BASE = `
local function clockBase()
  local t = redis.call('TIME')
  return (tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)) * 1000
end`;

/**
 * Numbers a batch and appends it: ids continue the thread's counter (started from the server's
 * clock, like a feed's base in one process), each event an entry `<id>-0` of the thread's stream,
 * the batch published on the thread's channel as `<firstId> <json array>`, the open run's start
 * remembered (`open`) or forgotten. KEYS: stream, meta. ARGV: channel, maxlen, ttl, open change
 * (`keep`, `clear` or the index of the batch's last RUN_STARTED, 0-based), events…
 */
const APPEND = new LuaScript(`${CLOCK_BASE}
local last = tonumber(redis.call('HGET', KEYS[2], 'last')) or clockBase()
local first = last + 1
local n = #ARGV - 4
for i = 1, n do
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], string.format('%.0f-0', last + i), 'e', ARGV[4 + i])
end
last = last + n
redis.call('HSET', KEYS[2], 'last', string.format('%.0f', last))
if ARGV[4] == 'clear' then
  redis.call('HDEL', KEYS[2], 'open')
elseif ARGV[4] ~= 'keep' then
  redis.call('HSET', KEYS[2], 'open', string.format('%.0f', first + tonumber(ARGV[4])))
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('PUBLISH', ARGV[1], string.format('%.0f', first) .. ' [' .. table.concat(ARGV, ',', 5) .. ']')
return string.format('%.0f', first)
`);

/** The counter (started from the server's clock when the thread has none) and the open run's start. KEYS: meta. ARGV: ttl. */
const POSITION = new LuaScript(`${CLOCK_BASE}
if redis.call('HSETNX', KEYS[1], 'last', '0') == 1 then
  redis.call('HSET', KEYS[1], 'last', string.format('%.0f', clockBase()))
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return redis.call('HMGET', KEYS[1], 'last', 'open')
`);

/**
 * Takes the writer's lease, or keeps it. KEYS: lease. ARGV: owner, ttl. Answers 1 when held, else
 * minus the milliseconds the other writer's lease has left (so a follower tries again as it lapses).
 */
const HOLD = new LuaScript(`
local owner = redis.call('GET', KEYS[1])
if owner == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if owner then return -math.max(redis.call('PTTL', KEYS[1]), 0) end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`);

/** What the thread's channel carries when a writer lets go (a batch always starts with its first id): another follower takes over at once. */
const LET_GO_NOTICE = 'let-go';

const isTerminal = (e: Event) => e.type === EventType.RUN_FINISHED || e.type === EventType.RUN_ERROR;

/** How a batch moves the open run: where its last RUN_STARTED is, or that it closes the run. */
function openChange(events: readonly Event[]): string {
  let change = 'keep';
  events.forEach((event, i) => {
    if (event.type === EventType.RUN_STARTED) change = String(i);
    else if (isTerminal(event)) change = 'clear';
  });
  return change;
}

const entryId = (id: number) => `${id}-0`;
const idOf = (entry: string) => Number(entry.slice(0, entry.indexOf('-')));

/**
 * One log per thread shared by every bridge process on one Redis: a stream of numbered events
 * (ids global per thread, so a client may come back to any process with its `Last-Event-ID`)
 * and a channel that carries each batch to every process's feed. Of all the feeds that follow a
 * thread, the holder of the thread's writer lease writes what it translated; the others translate
 * the same Mastra chunks and drop their events, ready to take over if the writer's process dies.
 *
 * @example
 * const logs = new RedisEventLogs(redis, config, { writerLeaseMs: 600 });
 * const log = await logs.open('demo\0alice\0trip-7');
 */
@injectable()
export class RedisEventLogs implements ThreadEventLogs {
  private readonly options: SharedLogOptions;

  constructor(
    @inject(TOKENS.Redis) private readonly redis: RedisConnection,
    @inject(TOKENS.Config) { replayBufferSize, logger }: Pick<ResolvedConfig, 'replayBufferSize' | 'logger'>,
    @unmanaged() tuning: Partial<SharedLogOptions> = {},
  ) {
    this.options = { replayBufferSize, retainedEvents: Math.max(10 * replayBufferSize, 10_000), idleTtlMs: LOG_IDLE_MS, writerLeaseMs: WRITER_LEASE_MS, logger, ...tuning };
  }

  async open(key: string): Promise<ThreadEventLog> {
    const log = new SharedLog(this.redis, this.options, key);
    await log.start();
    return log;
  }
}

class SharedLog implements ThreadEventLog {
  private readonly keys: { stream: string; meta: string; lease: string; channel: string };
  private readonly owner = randomUUID();
  private ring!: ReplayRing;
  private base = 0;
  private last = 0;
  private listener: NumberedListener = () => {};
  /** Events read from Redis before the listener was set (the open run's start). */
  private backlog: NumberedEvent[] = [];
  private writer = false;
  /** Taking over from the last writer: what the feed translates meanwhile waits in `unwritten`. */
  private takingOver = false;
  private closed = false;
  /**
   * While another process writes: what this feed translated that the log does not hold yet
   * (`unwritten`), and what the log holds that this feed has not translated yet (`unseen`). Both
   * feeds translate the same Mastra chunks into the same events in the same order, so every event
   * ends up on both sides and is matched away within milliseconds. When the writer's process dies,
   * what this feed translated since (the rest of the cut run, its RUN_ERROR, the next run) is left
   * in `unwritten`, and is written when this log takes over: dropped, the followers of every
   * process would miss it (a cut run without its terminal event, a run without its RUN_STARTED).
   */
  private readonly unwritten: Unmatched;
  private readonly unseen: Unmatched;
  /** The run of the last RUN_STARTED translated here, and written to the log: events are matched within their run. */
  private translatedRun?: string;
  private writtenRun?: string;
  /** Off until `start` is done: what the log held before this feed subscribed to Mastra, it never translates. */
  private pairing = false;
  private leaseTimer?: NodeJS.Timeout;
  /** Batches that arrived while a gap before them was being read. */
  private filling?: Promise<void>;
  /** Batches that arrived before `start` knew where the thread stands. */
  private early?: string[] = [];
  private readonly onMessage = (message: string) => (this.early ? this.early.push(message) : this.received(message));

  constructor(
    private readonly redis: RedisConnection,
    private readonly options: SharedLogOptions,
    key: string,
  ) {
    const id = `${redis.prefix}:log:${encodeURIComponent(key)}`;
    this.keys = { stream: `${id}:events`, meta: `${id}:meta`, lease: `${id}:writer`, channel: id };
    // Long enough to outlast a dead writer's lease and the takeover after it, however busy.
    const keepMs = 2 * options.writerLeaseMs;
    const max = Math.max(options.replayBufferSize, UNMATCHED_MAX);
    this.unwritten = new Unmatched(keepMs, max);
    this.unseen = new Unmatched(keepMs, max);
  }

  get baseId(): number {
    return this.base;
  }

  get lastId(): number {
    return this.last;
  }

  /** Subscribes, reads where the thread stands (and its open run's events), and tries to become the writer. */
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
    this.matchWritten(prefill?.map((e) => e.event) ?? []);
    this.backlog = prefill ?? [];
    const early = this.early ?? [];
    this.early = undefined;
    for (const message of early) this.received(message);
    this.pairing = true;
    await this.holdLease();
  }

  append(events: readonly Event[]): void {
    if (this.closed || events.length === 0) return;
    const writing = this.writer && !this.takingOver;
    const fresh: Event[] = [];
    for (const event of events) {
      if (event.type === EventType.RUN_STARTED) this.translatedRun = event.runId;
      // The common case, the writer with nothing to match: no key to make.
      if (writing && this.unseen.size === 0) {
        fresh.push(event);
        continue;
      }
      const key = keyOf(this.translatedRun, event);
      // The last writer wrote it already (this feed was behind it): not twice.
      if (this.unseen.match(key)) continue;
      if (writing) fresh.push(event);
      else this.unwritten.push(key, event);
    }
    this.write(fresh);
  }

  onEvents(listener: NumberedListener): void {
    this.listener = listener;
    const backlog = this.backlog;
    this.backlog = [];
    if (backlog.length > 0) listener(backlog.map((e) => e.event), backlog[0].id);
  }

  since(id: number): NumberedEvent[] | undefined {
    return this.ring.since(id);
  }

  /** Events after `id` from the thread's stream, up to the last one seen here. */
  async fetch(id: number): Promise<NumberedEvent[] | undefined> {
    if (id > this.last) return undefined;
    return this.read(id, this.last);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.leaseTimer);
    void this.redis.subscriber.unsubscribe(this.keys.channel, this.onMessage).catch(() => {
      // closing: with Redis unreachable the subscription goes with the connection
    });
    if (this.writer) void RELEASE_IF_OWNER.run(this.redis.client, [this.keys.lease], [this.owner, this.keys.channel, LET_GO_NOTICE]).catch(() => {
      // closing: a lease not released lapses within writerLeaseMs
    });
  }

  /** Numbers and appends events, in the order of the calls (one connection, scripts in order). */
  private write(events: Event[]): void {
    if (events.length === 0) return;
    const args = [this.keys.channel, String(this.options.retainedEvents), String(this.options.idleTtlMs), openChange(events), ...events.map((e) => JSON.stringify(e))];
    APPEND.run(this.redis.client, [this.keys.stream, this.keys.meta], args).catch((error: unknown) =>
      this.options.logger.error(`Thread log ${this.keys.channel}: append failed: ${errorMessage(error)}`),
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
    // The writer let go (its feed closed): take over now rather than at the next try.
    if (message === LET_GO_NOTICE) return void (this.writer ? undefined : this.holdLease());
    const space = message.indexOf(' ');
    const firstId = Number(message.slice(0, space));
    const events = JSON.parse(message.slice(space + 1)) as Event[];
    if (this.filling || firstId > this.last + 1) return void this.fillThen(firstId, events);
    this.take(firstId, events);
  }

  private take(firstId: number, events: Event[]): void {
    const fresh = events.slice(Math.max(0, this.last + 1 - firstId));
    if (fresh.length === 0) return;
    const from = firstId + events.length - fresh.length;
    fresh.forEach((event, i) => this.keep(from + i, event));
    this.matchWritten(fresh);
    this.listener(fresh, from);
  }

  /** Pairs what another writer wrote with what this feed translated (see `unwritten`). */
  private matchWritten(events: readonly Event[]): void {
    // Our own batches coming back: nothing to pair.
    const own = this.writer && !this.takingOver;
    for (const event of events) {
      if (event.type === EventType.RUN_STARTED) this.writtenRun = event.runId;
      if (own || !this.pairing) continue;
      const key = keyOf(this.writtenRun, event);
      if (!this.unwritten.match(key)) this.unseen.push(key, event);
    }
  }

  /** Reads what is missing before `firstId` from the stream, in order with the batches behind it. */
  private fillThen(firstId: number, events: Event[]): void {
    const previous = this.filling ?? Promise.resolve();
    this.filling = previous.then(async () => {
      if (this.closed) return;
      if (firstId > this.last + 1) {
        const missing = await this.read(this.last, firstId - 1).catch(() => undefined);
        if (missing && missing.length > 0) this.take(missing[0].id, missing.map((m) => m.event));
        // Trimmed away: the gap stays a gap; the ring starts over after it and clients that
        // need what it held get a snapshot.
        if (!missing) this.restartAt(firstId - 1);
      }
      this.take(firstId, events);
    });
    const filling = this.filling;
    void filling.finally(() => {
      if (this.filling === filling) this.filling = undefined;
    });
  }

  private restartAt(id: number): void {
    this.ring = new ReplayRing(this.options.replayBufferSize, id);
    this.base = id;
    this.last = id;
  }

  private keep(id: number, event: Event): void {
    this.ring.push(id, event);
    this.last = id;
  }

  /**
   * Takes or keeps the writer's lease, again every third of its TTL; a follower whose writer's
   * lease lapses sooner tries again as it lapses, so that a dead writer is replaced within one
   * TTL of its last renewal (not up to a third more).
   */
  private async holdLease(): Promise<void> {
    let next = this.options.writerLeaseMs / 3;
    try {
      const held = Number(await HOLD.run(this.redis.client, [this.keys.lease], [this.owner, String(this.options.writerLeaseMs)]));
      if (held === 1) {
        if (!this.writer && !this.takingOver) await this.takeOver();
      } else {
        this.writer = false;
        next = Math.min(next, -held + LAPSE_MARGIN_MS);
      }
    } catch (error) {
      this.writer = false;
      this.options.logger.warn(`Thread log ${this.keys.channel}: writer lease: ${errorMessage(error)}`);
    }
    if (this.closed) return;
    clearTimeout(this.leaseTimer);
    this.leaseTimer = setTimeout(() => void this.holdLease(), next);
    this.leaseTimer.unref();
  }

  /**
   * Becomes the writer: first reads what the last writer wrote and this log has not seen (paired
   * with what this feed translated), then writes what this feed translated that nobody wrote.
   */
  private async takeOver(): Promise<void> {
    this.takingOver = true;
    try {
      const last = Number(await this.redis.client.hGet(this.keys.meta, 'last'));
      if (last > this.last) this.fillThen(last + 1, []);
      await this.filling;
      if (this.closed) return;
      this.writer = true;
      this.write(this.unwritten.take());
    } finally {
      this.takingOver = false;
    }
  }
}

/** How long after a lapsing lease a follower tries to take it: Redis expires keys on time, give or take a millisecond. */
const LAPSE_MARGIN_MS = 20;
/** Unpaired events kept per side at least (see `SharedLog.unwritten`). */
const UNMATCHED_MAX = 1000;
