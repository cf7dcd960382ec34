import { randomUUID } from 'node:crypto';
import { PubSub, type Event, type EventCallback, type LeaseProvider, type PubSubDeliveryMode, type SubscribeOptions } from '@mastra/core/events';
import { Connections, type RedisClient } from './connections.js';
import { InFlight } from './in-flight.js';
import { entryFields, pubsubKeys, trimming, type EntryFields, type PubSubKeys } from './entry.js';
import { FanoutReader } from './fanout-reader.js';
import { GroupConsumer } from './group-consumer.js';
import { IdleExpiry } from './idle-expiry.js';
import { startHeartbeat, ALIVE_TTL_MS, type Heartbeat } from './heartbeat.js';
import { RedisLeases, type LeasedRun } from './leases.js';
import { resolveOptions, type PublishedEvent, type RedisPubSubOptions, type ResolvedOptions } from './options.js';
import { RepeatedFailures } from './repeated-failures.js';

export type { PublishedEvent, RedisPubSubOptions };

/**
 * Mastra's event bus and leases on Redis Streams, for Mastra apps running as several processes
 * (or several hosts) on one Redis: `new Mastra({ pubsub: new RedisPubSub({ url }) })`.
 *
 * - Each topic is a stream, `<keyPrefix>:topic:<topic>`. `publish` appends an entry (its `id` and
 *   `createdAt` assigned here) and resolves once the command is queued on the writer connection,
 *   not when Redis answers: Mastra awaits each publish of a run's chunks before reading the next
 *   one, so a round trip per chunk would set the pace of every run. Writes keep their order on
 *   that one connection; `flush()` waits for them and a failed one is logged.
 * - `localOnly` events (and those `keepLocal` picks) never reach Redis: this process's subscribers
 *   get the very object.
 * - Without a group every subscriber gets every event. All such subscriptions of the process
 *   share one connection (one XREAD over all their streams), however many topics Mastra
 *   subscribes to and leaves (a reply topic per request, a topic per thread followed).
 * - With a group, the members (in all processes) share the events through a Redis consumer
 *   group: one connection per group and topic in each process, acks and nacks honoured, entries
 *   a dead consumer held reclaimed.
 * - Leases (`LeaseProvider`, used by Mastra's thread signals to elect one owner per thread) are
 *   keys `<keyPrefix>:lease:<key>`, changed only by scripts that check the owner.
 *
 * @example
 * const pubsub = new RedisPubSub({ url: process.env.REDIS_URL!, streamIdleTtlMs: 7 * 24 * 3600_000 });
 * const mastra = new Mastra({ agents, storage, pubsub });
 * // at shutdown (Mastra's shutdown() does not close its pubsub)
 * await mastra.shutdown();
 * await pubsub.close();
 */
export class RedisPubSub extends PubSub implements LeaseProvider {
  readonly #options: ResolvedOptions;
  readonly #instanceId = randomUUID();
  readonly #keys: PubSubKeys;
  readonly #connections: Connections;
  readonly #inFlight = new InFlight();
  readonly #fanout: FanoutReader;
  /** topic → group → this process's consumer. */
  readonly #groups = new Map<string, Map<string, GroupConsumer>>();
  readonly #leases: RedisLeases;
  /** The writer connections that renew the leases when ready again (`#leaseWriter`). */
  readonly #renewsOnReady = new WeakSet<RedisClient>();
  readonly #expiry: IdleExpiry;
  #consumers = 0;
  #closing?: Promise<void>;
  #heartbeat?: Heartbeat;

  constructor(options: RedisPubSubOptions = {}) {
    super();
    this.#options = resolveOptions(options);
    this.#publishFailures = new RepeatedFailures(this.#options.isOutage, 'once');
    this.#keys = pubsubKeys(this.#options.keyPrefix);
    const nameOf = (role: string) => `mastra-pubsub:${this.#instanceId}:${role.replace(/[^\w.:-]/g, '_')}`;
    this.#connections = new Connections(this.#options.source, this.#options.logger, nameOf, this.#options.isOutage);
    this.#fanout = new FanoutReader({
      ...this.#redelivery(),
      connections: this.#connections,
      keys: this.#keys,
      instanceId: this.#instanceId,
      blockMs: this.#options.blockMs,
      isOutage: this.#options.isOutage,
      onReceive: this.#options.onReceive,
    });
    this.#leases = new RedisLeases(() => this.#leaseWriter(), this.#keys, this.#holding());
    this.#expiry = new IdleExpiry(this.#options.streamIdleTtlMs);
  }

  /** With a heartbeat: the instance each lease names as its holder; the heartbeat starts with the first. */
  #holding() {
    const { source, heartbeat, logger } = this.#options;
    if (!heartbeat || !('url' in source)) return undefined;
    const beating = () => {
      if (!this.#closing) this.#heartbeat ??= startHeartbeat(source.url, this.#keys.alive(this.#instanceId), logger);
    };
    return { instanceId: this.#instanceId, aliveTtlMs: ALIVE_TTL_MS, beating };
  }

  /** The writer, which renews every lease held here each time it is ready again after an outage. */
  #leaseWriter(): Promise<RedisClient> {
    return this.#connections.writer().then((client) => {
      if (!this.#renewsOnReady.has(client)) {
        this.#renewsOnReady.add(client);
        client.on('ready', () => void this.#leases.renewAll());
      }
      return client;
    });
  }

  /** This instance's id: in the names of its connections (CLIENT LIST) and of its group consumers. */
  get instanceId(): string {
    return this.#instanceId;
  }

  /**
   * `pull` only. Mastra reads this to decide how its workers consume: with `pull` it runs the
   * OrchestrationWorker (topic `workflows`: the evented workflow engine) and the agent-schedule
   * worker (`agent-schedules`) as members of consumer groups (`mastra-orchestration`,
   * `mastra-agent-schedules`), so that across processes each event is handled by one process.
   * Without `pull` it subscribes every process to those topics with no group: every process
   * would run every workflow step and fire every scheduled agent run. With both declared,
   * Mastra (1.71) does as with `pull` alone, so `push` would add nothing. Agent runs, thread
   * signals and background tasks subscribe to their own topics whatever the mode (task dispatch
   * in the group `background-task-workers`): they work either way.
   */
  override get supportedModes(): ReadonlyArray<PubSubDeliveryMode> {
    return ['pull'];
  }

  async publish(topic: string, event: PublishedEvent, options?: { localOnly?: boolean }): Promise<void> {
    this.#assertOpen();
    const told = this.#options.onPublish(topic, event);
    if (told) await told;
    const full: Event = { ...event, id: randomUUID(), createdAt: new Date(), deliveryAttempt: 1 };
    if (options?.localOnly || this.#options.keepLocal(topic, event)) return this.#deliverLocal(topic, full);
    const fields = entryFields(full);
    if (this.#options.deliverAtOnce(topic, event)) this.#fanout.deliverOwn(topic, full);
    // Only the very first publish waits, for the connection; the XADD's reply is never waited for here.
    this.#append(this.#connections.openedWriter ?? (await this.#connections.writer()), topic, fields);
  }

  async subscribe(topic: string, cb: EventCallback, options?: SubscribeOptions): Promise<void> {
    this.#assertOpen();
    const startFrom = options?.startFrom ?? this.#options.defaultStartFrom(topic);
    if (options?.group === undefined) return this.#fanout.add(topic, cb, startFrom);
    const consumer = this.#groupConsumer(topic, options.group);
    consumer.add(cb);
    try {
      await consumer.start(startFrom);
    } catch (error) {
      await this.#leaveGroup(topic, options.group, consumer, cb);
      throw error;
    }
  }

  async unsubscribe(topic: string, cb: EventCallback): Promise<void> {
    this.#fanout.remove(topic, cb);
    for (const [group, consumer] of this.#groups.get(topic) ?? []) await this.#leaveGroup(topic, group, consumer, cb);
  }

  /** Waits for the writes sent so far (publishes, acks, redeliveries) and the redeliveries scheduled. */
  async flush(): Promise<void> {
    await this.#inFlight.drain();
  }

  /** Deletes the topic's stream, its consumer groups with it. Never throws: a failure is logged (once closed, nothing is done). */
  override async clearTopic(topic: string): Promise<void> {
    // Mastra clears reply topics fire-and-forget, possibly after shutdown: nothing to say then.
    if (this.#closing) return;
    try {
      const writer = await this.#connections.writer();
      await writer.del(this.#keys.topic(topic));
      this.#expiry.forget(this.#keys.topic(topic));
      this.#fanout.rewind(topic);
    } catch (error) {
      this.#options.logger.warn?.(`[RedisPubSub] could not clear ${topic}`, error);
    }
  }

  /** Stops every reader, waits for the writes under way, and closes all connections. */
  close(): Promise<void> {
    this.#closing ??= this.#shutDown();
    return this.#closing;
  }

  acquireLease(key: string, owner: string, ttlMs: number): Promise<{ acquired: boolean; owner?: string }> {
    return this.#leases.acquireLease(key, owner, ttlMs);
  }

  getLeaseOwner(key: string): Promise<string | undefined> {
    return this.#leases.getLeaseOwner(key);
  }

  releaseLease(key: string, owner: string): Promise<void> {
    return this.#leases.releaseLease(key, owner);
  }

  renewLease(key: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.#leases.renewLease(key, owner, ttlMs);
  }

  transferLease(key: string, fromOwner: string, toOwner: string, ttlMs: number): Promise<boolean> {
    return this.#leases.transferLease(key, fromOwner, toOwner, ttlMs);
  }

  /**
   * Whether a run of this instance holds the lease on `key` (taken, renewed or handed over
   * through this instance, not released, not expired), known without a round trip: what tells
   * whether a thread's run is here or in another process.
   */
  holdsLease(key: string): boolean {
    return this.#leases.holdsLease(key);
  }

  /**
   * The instance holding each run's lease, as it named itself (see `heartbeat`): `undefined` when
   * the run does not hold it now, `null` when it does and no holder is named.
   */
  leaseHolders(runs: readonly LeasedRun[]): Promise<Array<string | null | undefined>> {
    return this.#leases.holdersOf(runs);
  }

  /** Those of `instanceIds` whose heartbeat is gone (the process died, or lost Redis for seconds). */
  goneInstances(instanceIds: readonly string[]): Promise<string[]> {
    return this.#leases.gone(instanceIds);
  }

  /**
   * Lets go of the leases that runs of a gone instance still hold, and answers the runs this call
   * was the first, of all processes, to find gone: whoever gets a run here tells the others.
   */
  reclaimFromGone(instanceId: string, runs: readonly LeasedRun[]): Promise<string[]> {
    return this.#leases.reclaimFromGone(instanceId, runs);
  }

  /** The leases held through this instance (not released, not expired), with their owners. */
  heldLeases(): Array<{ key: string; owner: string }> {
    return this.#leases.heldLeases();
  }

  /** What of the publishes' failures is logged: each kind once, from a failed publish to the next that succeeds. */
  readonly #publishFailures: RepeatedFailures;

  #assertOpen(): void {
    if (this.#closing) throw new Error('RedisPubSub is closed');
  }

  #redelivery() {
    return { maxDeliveryAttempts: this.#options.maxDeliveryAttempts, inFlight: this.#inFlight, logger: this.#options.logger };
  }

  /** XADD (trimmed) and, when due, the idle TTL, queued on the writer in this tick: one pipeline, in order. */
  #append(writer: RedisClient, topic: string, fields: EntryFields): void {
    const key = this.#keys.topic(topic);
    const written = Promise.all([writer.xAdd(key, '*', fields, trimming(this.#options.maxStreamLength)), this.#expiry.touch(writer, key)]);
    this.#inFlight.track(
      written.then(
        () => this.#publishFailures.succeeded(),
        (error: unknown) => {
          // Once per outage: while Redis is away every chunk of every run fails the same way.
          const level = this.#publishFailures.failed(error);
          if (level === 'warn')
            this.#options.logger.warn?.(
              `[RedisPubSub] Redis is unavailable: publish to ${topic} failed (further failures are not logged until one succeeds)`,
              error,
            );
          else if (level === 'error')
            this.#options.logger.error?.(`[RedisPubSub] publish to ${topic} failed (further failures are not logged until one succeeds)`, error);
        },
      ),
    );
  }

  #deliverLocal(topic: string, event: Event): void {
    this.#fanout.deliverLocal(topic, event);
    for (const consumer of this.#groups.get(topic)?.values() ?? []) consumer.deliverLocal(event);
  }

  #groupConsumer(topic: string, group: string): GroupConsumer {
    const byGroup = this.#groups.get(topic) ?? new Map<string, GroupConsumer>();
    this.#groups.set(topic, byGroup);
    let consumer = byGroup.get(group);
    if (!consumer) {
      const { blockMs, maxStreamLength, streamIdleTtlMs, reclaimIntervalMs, reclaimIdleMs } = this.#options;
      const name = `${this.#instanceId}:${++this.#consumers}`;
      consumer = new GroupConsumer(topic, group, {
        ...this.#redelivery(),
        connections: this.#connections,
        keys: this.#keys,
        consumer: name,
        blockMs,
        maxStreamLength,
        streamIdleTtlMs,
        reclaimIntervalMs,
        reclaimIdleMs,
        isOutage: this.#options.isOutage,
      });
      byGroup.set(group, consumer);
    }
    return consumer;
  }

  /** Removes `cb` from the group; the last member out stops the consumer and frees its connection. */
  async #leaveGroup(topic: string, group: string, consumer: GroupConsumer, cb: EventCallback): Promise<void> {
    if (!consumer.remove(cb) || consumer.size > 0) return;
    const byGroup = this.#groups.get(topic);
    if (byGroup?.get(group) === consumer) byGroup.delete(group);
    if (byGroup?.size === 0) this.#groups.delete(topic);
    await consumer.stop();
  }

  async #shutDown(): Promise<void> {
    const consumers = [...this.#groups.values()].flatMap((byGroup) => [...byGroup.values()]);
    this.#groups.clear();
    await Promise.all([this.#fanout.close(), ...consumers.map((consumer) => consumer.stop())]);
    await this.#inFlight.drain();
    this.#expiry.stop();
    await this.#heartbeat?.stop();
    await this.#connections.close();
  }
}
