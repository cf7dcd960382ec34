import { setTimeout as pause } from 'node:timers/promises';
import type { Event, EventCallback } from '@mastra/core/events';
import { LuaScript } from './lua.js';
import type { Connections, RedisClient } from './connections.js';
import { deliver, localSettlement, type LocalRedelivery, type Settlement } from './delivery.js';
import { readEntry, retryFields, trimming, type PubSubKeys } from './entry.js';
import { streamBatches, streamMessages, type StreamMessage } from './stream-reply.js';
import { RepeatedFailures } from './repeated-failures.js';

/** Entries read (or reclaimed) at once. */
const READ_COUNT = 100;
/** How often a stop repeats its CLIENT UNBLOCK, should the first arrive before the blocking read. */
const UNBLOCK_RETRY_MS = 50;

/** Forgets this consumer in the group unless it still has entries pending. KEYS: stream. ARGV: group, consumer. */
const FORGET_CONSUMER = new LuaScript(`
if #redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2]) > 0 then return 0 end
return redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])
`);

export interface GroupConsumerOptions extends LocalRedelivery {
  connections: Connections;
  keys: PubSubKeys;
  /** This consumer's name in the group, unique to this instance and this consumer. */
  consumer: string;
  blockMs: number;
  maxStreamLength: number;
  streamIdleTtlMs: number;
  reclaimIntervalMs: number;
  reclaimIdleMs: number;
  /** Whether a failed read is Redis being away: logged once until a read succeeds, not at every retry. */
  isOutage: (error: unknown) => boolean;
}

/**
 * This process's members of one consumer group on one topic, behind one Redis consumer: a loop on
 * its own connection reads new entries (`XREADGROUP … >`), each for one member in turn. `ack` is
 * `XACK`; `nack` adds the entry again (attempt + 1, for this group only) and acks the original in
 * one `MULTI`, or drops it past `maxDeliveryAttempts`. Every `reclaimIntervalMs`, entries another
 * consumer of the group left unacked for `reclaimIdleMs` (it crashed, or lost its connection) are
 * claimed (`XAUTOCLAIM`) and delivered here, except those still in hand.
 *
 * @example
 * const consumer = new GroupConsumer('workflows', 'mastra-orchestration', options);
 * consumer.add(cb);
 * await consumer.start('earliest');
 * // when its last member leaves
 * await consumer.stop();
 */
export class GroupConsumer {
  readonly #topic: string;
  readonly #group: string;
  readonly #key: string;
  readonly #options: GroupConsumerOptions;
  #members: EventCallback[] = [];
  #turn = 0;
  /** Entries handed to a member and not settled yet: a reclaim must not hand them out again. */
  readonly #inHand = new Set<string>();
  #reader?: RedisClient;
  #readerId?: number;
  #loop?: Promise<void>;
  #started?: Promise<void>;
  #reclaimTimer?: NodeJS.Timeout;
  #reclaiming = false;
  readonly #stop = new AbortController();
  readonly #readFailures: RepeatedFailures;

  constructor(topic: string, group: string, options: GroupConsumerOptions) {
    this.#topic = topic;
    this.#group = group;
    this.#key = options.keys.topic(topic);
    this.#options = options;
    this.#readFailures = new RepeatedFailures(options.isOutage);
  }

  get size(): number {
    return this.#members.length;
  }

  add(cb: EventCallback): void {
    this.#members.push(cb);
  }

  remove(cb: EventCallback): boolean {
    const before = this.#members.length;
    this.#members = this.#members.filter((member) => member !== cb);
    return this.#members.length < before;
  }

  /** Creates the group (from the stream's start, or its end for `latest`) and starts reading, once. */
  start(startFrom: 'earliest' | 'latest'): Promise<void> {
    this.#started ??= this.#begin(startFrom);
    return this.#started;
  }

  /** Hands a `localOnly` event to one member; a nack hands it to the next one. */
  deliverLocal(event: Event): void {
    const member = this.#nextMember();
    if (!member) return;
    const settlement = localSettlement(event, (next) => this.deliverLocal(next), this.#options, this.#topic);
    deliver(member, event, settlement, this.#options.logger, this.#topic);
  }

  /**
   * Ends the loop and closes the connection. The read in progress is ended with CLIENT UNBLOCK
   * (it returns empty-handed, so no entry is left stranded with this consumer); the consumer is
   * then removed from the group unless entries are still pending with it.
   */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#started?.catch(() => {
      // stopping: a start that failed has nothing to stop
    });
    clearInterval(this.#reclaimTimer);
    if (this.#loop) await this.#endRead(this.#loop);
    if (this.#reader) await this.#options.connections.release(this.#reader);
    const writer = this.#options.connections.openedWriter;
    if (writer && this.#inHand.size === 0) {
      await FORGET_CONSUMER.run(writer, [this.#key], [this.#group, this.#options.consumer]).catch(() => {
        // a consumer not forgotten is reclaimed by the group after reclaimIdleMs
      });
    }
  }

  async #begin(startFrom: 'earliest' | 'latest'): Promise<void> {
    await this.#createGroup(startFrom === 'latest' ? '$' : '0');
    const reader = await this.#options.connections.open(`group ${this.#group} reader`);
    this.#reader = reader;
    this.#readerId = await reader.clientId();
    // A reconnected connection has a new id: CLIENT UNBLOCK needs the current one.
    reader.on(
      'ready',
      () =>
        void reader.clientId().then(
          (id) => (this.#readerId = id),
          () => {},
        ),
    );
    this.#loop = this.#run(reader);
    const every = this.#options.reclaimIntervalMs;
    // Not once stopped: stop() clears the timer only after this start has settled.
    if (every > 0 && !this.#stop.signal.aborted) this.#reclaimTimer = setInterval(() => void this.#reclaim(), every).unref();
  }

  /** `XGROUP CREATE … MKSTREAM`: creating the stream is a write, so the idle TTL is set too. An existing group keeps its place. */
  async #createGroup(from: '0' | '$'): Promise<void> {
    const writer = await this.#options.connections.writer();
    const created = writer.xGroupCreate(this.#key, this.#group, from, { MKSTREAM: true }).catch((error: unknown) => {
      if (!String((error as Error)?.message).startsWith('BUSYGROUP')) throw error;
    });
    const ttl = this.#options.streamIdleTtlMs;
    await Promise.all([created, ttl > 0 ? writer.pExpire(this.#key, ttl) : undefined]);
  }

  async #run(reader: RedisClient): Promise<void> {
    let failures = 0;
    while (!this.#stop.signal.aborted) {
      try {
        const { blockMs, consumer, connections } = this.#options;
        const read = () => reader.xReadGroup(this.#group, consumer, { key: this.#key, id: '>' }, { COUNT: READ_COUNT, BLOCK: blockMs });
        const reply = await connections.blocking(reader, blockMs, read);
        for (const { messages } of streamBatches(reply)) for (const message of messages) this.#receive(message, false);
        failures = 0;
        this.#readFailures.succeeded();
      } catch (error) {
        if (this.#stop.signal.aborted) return;
        await this.#recover(error, failures++);
      }
    }
  }

  /** The stream was deleted (clearTopic) or expired: the group goes with it and is made again. */
  async #recover(error: unknown, failures: number): Promise<void> {
    if (String((error as Error)?.message).startsWith('NOGROUP')) {
      const recreated = await this.#createGroup('0').then(
        () => true,
        () => false,
      );
      if (recreated) return;
    } else {
      const level = this.#readFailures.failed(error);
      const once = level === 'warn' ? ' (Redis is unavailable: not logged again until a read succeeds)' : '';
      if (level) this.#options.logger.warn?.(`[RedisPubSub] read of group ${this.#group} on ${this.#topic} failed; retrying${once}`, error);
    }
    await pause(Math.min(100 * 2 ** failures, 2000), undefined, { signal: this.#stop.signal }).catch(() => {
      // an aborted pause is the stop the loop checks next
    });
  }

  /** Repeats CLIENT UNBLOCK until the loop has ended: one sent before the read arrived does nothing. */
  async #endRead(loop: Promise<void>): Promise<void> {
    let ended = false;
    void loop.finally(() => (ended = true));
    const writer = this.#options.connections.openedWriter;
    while (!ended && writer && this.#readerId !== undefined) {
      await writer.clientUnblock(this.#readerId).catch(() => {
        // sent again every UNBLOCK_RETRY_MS until the loop has ended
      });
      await Promise.race([loop, pause(UNBLOCK_RETRY_MS)]);
    }
    await loop;
  }

  #receive({ id, message }: StreamMessage, reclaimed: boolean): void {
    const entry = readEntry(message);
    if (!entry || (entry.group !== undefined && entry.group !== this.#group)) {
      // Not an event, or another group's redelivery: nothing for this group to do but ack it.
      if (!entry) this.#options.logger.warn?.(`[RedisPubSub] skipped entry ${id} of ${this.#topic}: not an event`);
      void this.#track(this.#ack(id)); // logged and tracked by #track
      return;
    }
    // A reclaimed entry was delivered once more (to the consumer that lost it) than its record says.
    const attempt = reclaimed ? entry.attempt + 1 : entry.attempt;
    if (attempt > this.#options.maxDeliveryAttempts) {
      void this.#drop(id, entry.event, attempt - 1);
      return;
    }
    const member = this.#nextMember();
    if (!member) return; // stopping: left pending, for a reclaim
    this.#inHand.add(id);
    deliver(member, { ...entry.event, deliveryAttempt: attempt }, this.#settlement(id, message, attempt, entry.event), this.#options.logger, this.#topic);
  }

  #settlement(id: string, message: Record<string, string>, attempt: number, event: Event): Settlement {
    const settle = (work: Promise<void>) => {
      this.#inHand.delete(id);
      return this.#track(work);
    };
    return {
      ack: () => settle(this.#ack(id)),
      nack: () => {
        if (attempt >= this.#options.maxDeliveryAttempts) {
          this.#inHand.delete(id);
          return this.#drop(id, event, attempt);
        }
        return settle(this.#retry(id, message, attempt + 1));
      },
    };
  }

  async #ack(id: string): Promise<void> {
    const writer = await this.#options.connections.writer();
    await writer.xAck(this.#key, this.#group, id);
  }

  /** The entry again, for this group only, and the original acked: both or neither. */
  async #retry(id: string, message: Record<string, string>, attempt: number): Promise<void> {
    const writer = await this.#options.connections.writer();
    const ttl = this.#options.streamIdleTtlMs;
    const transaction = writer
      .multi()
      .xAdd(this.#key, '*', retryFields(message, attempt, this.#group), trimming(this.#options.maxStreamLength))
      .xAck(this.#key, this.#group, id);
    if (ttl > 0) transaction.pExpire(this.#key, ttl);
    await transaction.exec();
  }

  #drop(id: string, event: Event, attempts: number): Promise<void> {
    this.#options.logger.warn?.(`[RedisPubSub] dropped ${event.type} on ${this.#topic} (group ${this.#group}) after ${attempts} delivery attempts`);
    return this.#track(this.#ack(id));
  }

  /** Settling never rejects: a failed write is logged, and `flush()` waits for it. */
  #track(work: Promise<void>): Promise<void> {
    const logged = work.catch((error: unknown) => this.#options.logger.error?.(`[RedisPubSub] write for group ${this.#group} on ${this.#topic} failed`, error));
    this.#options.inFlight.track(logged);
    return logged;
  }

  #nextMember(): EventCallback | undefined {
    if (this.#members.length === 0 || this.#stop.signal.aborted) return undefined;
    return this.#members[this.#turn++ % this.#members.length];
  }

  /** Claims what other consumers of the group left unacked for `reclaimIdleMs`, page by page. */
  async #reclaim(): Promise<void> {
    if (this.#reclaiming || this.#stop.signal.aborted) return;
    this.#reclaiming = true;
    try {
      const writer = await this.#options.connections.writer();
      let cursor = '0-0';
      do {
        const claimed = await writer.xAutoClaim(this.#key, this.#group, this.#options.consumer, this.#options.reclaimIdleMs, cursor, { COUNT: READ_COUNT });
        for (const message of streamMessages(claimed.messages)) if (!this.#inHand.has(message.id)) this.#receive(message, true);
        cursor = String(claimed.nextId);
      } while (cursor !== '0-0' && !this.#stop.signal.aborted);
    } catch (error) {
      if (!this.#stop.signal.aborted) this.#options.logger.debug?.(`[RedisPubSub] reclaim on ${this.#topic} (group ${this.#group}) failed`, error);
    } finally {
      this.#reclaiming = false;
    }
  }
}
