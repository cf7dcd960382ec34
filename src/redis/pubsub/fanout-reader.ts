import { setTimeout as pause } from 'node:timers/promises';
import type { Event, EventCallback } from '@mastra/core/events';
import type { Connections, RedisClient } from './connections.js';
import { deliver, localSettlement, type LocalRedelivery } from './delivery.js';
import { compareIds, readEntry, START_ID, type PubSubKeys } from './entry.js';
import { streamBatches, type StreamMessage } from './stream-reply.js';
import { RepeatedFailures } from './repeated-failures.js';

/** Entries read per topic in one XREAD; a longer backlog takes several reads, back to back. */
const READ_COUNT = 200;
/** The wake stream expires on its own if this process dies without deleting it. */
const WAKE_TTL_MS = 60_000;

/** One callback on one topic: what it has been given so far (the id of the last entry). */
interface Subscription {
  topic: string;
  cb: EventCallback;
  cursor: string;
  active: boolean;
  /** Ids of this process's own events it was handed at once (`deliverOwn`), not to be handed again when read back. */
  early: Set<string>;
}

/** Own events remembered per subscription at most: one whose write failed never comes back to be forgotten. */
const EARLY_MAX = 1000;

export interface FanoutReaderOptions extends LocalRedelivery {
  connections: Connections;
  keys: PubSubKeys;
  instanceId: string;
  blockMs: number;
  /** Whether a failed read is Redis being away: logged once until a read succeeds, not at every retry. */
  isOutage: (error: unknown) => boolean;
  /** Told once of each event read from Redis and handed to subscribers (not this instance's own handed over at publish, `deliverOwn`). */
  onReceive: (topic: string, event: Event) => void;
}

/**
 * Every subscription without a group in this process, served by one connection and one loop: a
 * single `XREAD BLOCK` over the streams of all their topics, plus this instance's wake stream. Each
 * subscription keeps its own cursor (the last entry it was given): a topic is read from its lowest
 * cursor, and each subscriber is handed only the entries after its own, however late it joined. A
 * new subscription the read in progress does not cover (a new topic, or an older cursor) adds an
 * entry to the wake stream, which ends that read at once; the next read includes it. Nothing here
 * needs a consumer group, so a subscriber that goes away leaves nothing in Redis.
 *
 * @example
 * const reader = new FanoutReader({ connections, keys, instanceId, blockMs: 1000, maxDeliveryAttempts: 5, inFlight, logger, isOutage });
 * await reader.add('agent.thread-stream.t1', cb, 'earliest');
 * reader.remove('agent.thread-stream.t1', cb);
 * await reader.close();
 */
export class FanoutReader {
  readonly #options: FanoutReaderOptions;
  readonly #byTopic = new Map<string, Set<Subscription>>();
  /** The start id of each topic in the read under way, if one is. */
  #reading?: Map<string, string>;
  #wakeCursor = START_ID;
  #started?: Promise<void>;
  #loop?: Promise<void>;
  #reader?: RedisClient;
  readonly #stop = new AbortController();

  constructor(options: FanoutReaderOptions) {
    this.#options = options;
  }

  /** Subscribes; from `earliest` the entries the stream still holds come first. */
  async add(topic: string, cb: EventCallback, startFrom: 'earliest' | 'latest'): Promise<void> {
    // The writer too: a new subscription may have to wake the reader.
    await this.#options.connections.writer();
    const cursor = startFrom === 'latest' ? await this.#lastId(topic) : START_ID;
    await this.#start();
    if (this.#stop.signal.aborted) throw new Error('RedisPubSub is closed');
    const subscription: Subscription = { topic, cb, cursor, active: true, early: new Set() };
    const subscriptions = this.#byTopic.get(topic) ?? new Set();
    subscriptions.add(subscription);
    this.#byTopic.set(topic, subscriptions);
    const start = this.#reading?.get(topic);
    if (!start || compareIds(cursor, start) < 0) this.#wake();
  }

  /** Stops delivery to `cb` on `topic` at once (an entry being dispatched skips it too). */
  remove(topic: string, cb: EventCallback): boolean {
    const subscriptions = this.#byTopic.get(topic);
    let removed = false;
    for (const subscription of subscriptions ?? []) {
      if (subscription.cb !== cb) continue;
      subscription.active = false;
      subscriptions?.delete(subscription);
      removed = true;
    }
    if (subscriptions?.size === 0) this.#byTopic.delete(topic);
    return removed;
  }

  /**
   * Hands an event this process publishes (and writes to Redis) to its subscribers of `topic` at
   * once, as one process's pub/sub would; each skips it when it is read back from the stream.
   */
  deliverOwn(topic: string, event: Event): void {
    for (const subscription of this.#byTopic.get(topic) ?? []) {
      subscription.early.add(event.id);
      if (subscription.early.size > EARLY_MAX) subscription.early.delete(subscription.early.values().next().value as string);
      this.#deliver(subscription, event);
    }
  }

  /** Hands a `localOnly` event, as it is (not serialised), to this process's subscribers of `topic`. */
  deliverLocal(topic: string, event: Event): void {
    for (const subscription of this.#byTopic.get(topic) ?? []) this.#deliver(subscription, event);
  }

  /**
   * After the topic's stream was deleted: its next entries start a new stream, whose ids may be
   * lower than what the subscribers had read (same millisecond), so they read it from the start.
   */
  rewind(topic: string): void {
    for (const subscription of this.#byTopic.get(topic) ?? []) subscription.cursor = START_ID;
  }

  async close(): Promise<void> {
    this.#stop.abort();
    for (const subscriptions of this.#byTopic.values()) for (const s of subscriptions) s.active = false;
    this.#byTopic.clear();
    await this.#started?.catch(() => {
      // stopping: a start that failed has nothing to stop
    });
    // An XREAD leaves nothing behind in Redis: the blocked connection can simply be dropped.
    if (this.#reader) this.#options.connections.drop(this.#reader);
    await this.#loop;
    const writer = this.#options.connections.openedWriter;
    if (writer)
      await writer.del(this.#wakeKey).catch(() => {
        // the wake stream expires with its idle TTL if the delete fails
      });
  }

  get #wakeKey(): string {
    return this.#options.keys.wake(this.#options.instanceId);
  }

  /** The id of the stream's last entry (`0-0` when there is none): a `latest` subscriber starts after it. */
  async #lastId(topic: string): Promise<string> {
    const writer = await this.#options.connections.writer();
    const last = await writer.xRevRange(this.#options.keys.topic(topic), '+', '-', { COUNT: 1 });
    return last?.[0]?.id ?? START_ID;
  }

  /** Opens the reader's connection and starts its loop, once (a failed open is tried again by the next subscription). */
  #start(): Promise<void> {
    this.#started ??= this.#options.connections.open('fan-out reader').then(
      (reader) => {
        this.#reader = reader;
        this.#loop = this.#run(reader);
      },
      (error: unknown) => {
        this.#started = undefined;
        throw error;
      },
    );
    return this.#started;
  }

  /** Ends the read in progress so that the next one covers the current subscriptions. */
  #wake(): void {
    const writer = this.#options.connections.openedWriter;
    if (!writer || this.#stop.signal.aborted) return;
    const woken = Promise.all([
      writer.xAdd(this.#wakeKey, '*', { w: '1' }, { TRIM: { strategy: 'MAXLEN', strategyModifier: '=', threshold: 1 } }),
      writer.pExpire(this.#wakeKey, WAKE_TTL_MS),
    ]).catch((error: unknown) => this.#options.logger.warn?.('[RedisPubSub] could not wake the fan-out reader', error));
    this.#options.inFlight.track(woken);
  }

  async #run(reader: RedisClient): Promise<void> {
    let failures = 0;
    const logged = new RepeatedFailures(this.#options.isOutage);
    while (!this.#stop.signal.aborted) {
      const starts = this.#starts();
      try {
        this.#reading = starts;
        const { blockMs } = this.#options;
        const reply = await this.#options.connections.blocking(reader, blockMs, () =>
          reader.xRead(this.#streams(starts), { BLOCK: blockMs, COUNT: READ_COUNT }),
        );
        this.#reading = undefined;
        this.#dispatch(streamBatches(reply), starts);
        failures = 0;
        logged.succeeded();
      } catch (error) {
        this.#reading = undefined;
        if (this.#stop.signal.aborted) return;
        const level = logged.failed(error);
        if (level)
          this.#options.logger.warn?.(
            `[RedisPubSub] fan-out read failed; retrying${level === 'warn' ? ' (Redis is unavailable: not logged again until a read succeeds)' : ''}`,
            error,
          );
        await pause(Math.min(100 * 2 ** failures++, 2000), undefined, { signal: this.#stop.signal }).catch(() => {
          // an aborted pause is the stop the loop checks next
        });
      }
    }
  }

  #starts(): Map<string, string> {
    const starts = new Map<string, string>();
    for (const [topic, subscriptions] of this.#byTopic) {
      let start: string | undefined;
      for (const s of subscriptions) if (start === undefined || compareIds(s.cursor, start) < 0) start = s.cursor;
      if (start !== undefined) starts.set(topic, start);
    }
    return starts;
  }

  #streams(starts: Map<string, string>): Array<{ key: string; id: string }> {
    const streams = [...starts].map(([topic, id]) => ({ key: this.#options.keys.topic(topic), id }));
    streams.push({ key: this.#wakeKey, id: this.#wakeCursor });
    return streams;
  }

  #dispatch(batches: Array<{ name: string; messages: StreamMessage[] }>, starts: Map<string, string>): void {
    const topicOfKey = new Map([...starts.keys()].map((topic) => [this.#options.keys.topic(topic), topic]));
    for (const { name, messages } of batches) {
      if (name === this.#wakeKey) {
        this.#wakeCursor = messages.at(-1)?.id ?? this.#wakeCursor;
        continue;
      }
      const topic = topicOfKey.get(name);
      if (topic !== undefined) this.#dispatchTopic(topic, starts.get(topic) ?? START_ID, messages);
    }
  }

  /**
   * Hands each entry to the subscribers whose cursor it follows. Only those whose cursor was at or
   * past the read's start take part: one that joined further back would get a gap; its own
   * entries come with the next read, which starts at its cursor.
   */
  #dispatchTopic(topic: string, start: string, messages: StreamMessage[]): void {
    const covered = [...(this.#byTopic.get(topic) ?? [])].filter((s) => compareIds(s.cursor, start) >= 0);
    for (const { id, message } of messages) {
      let event: Event | null | undefined;
      let received = false;
      for (const subscription of covered) {
        if (!subscription.active || compareIds(id, subscription.cursor) <= 0) continue;
        subscription.cursor = id;
        event ??= this.#eventOf(message, topic, id);
        if (!event || subscription.early.delete(event.id)) continue;
        this.#deliver(subscription, event);
        received = true;
      }
      if (received) this.#options.onReceive(topic, event as Event);
    }
  }

  /** The event of an entry, decoded once for all subscribers; `null` for one to skip. */
  #eventOf(message: Record<string, string>, topic: string, id: string): Event | null {
    const entry = readEntry(message);
    if (!entry) {
      this.#options.logger.warn?.(`[RedisPubSub] skipped entry ${id} of ${topic}: not an event`);
      return null;
    }
    // A redelivery addressed to one consumer group; fan-out subscribers had it the first time.
    if (entry.group !== undefined) return null;
    return { ...entry.event, deliveryAttempt: entry.attempt };
  }

  #deliver(subscription: Subscription, event: Event): void {
    if (!subscription.active) return;
    const again = (next: Event) => this.#deliver(subscription, next);
    deliver(subscription.cb, event, localSettlement(event, again, this.#options, subscription.topic), this.#options.logger, subscription.topic);
  }
}
