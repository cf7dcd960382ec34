import { randomUUID } from 'node:crypto';
import { EventType, type Event, type Interrupt, type Message } from '@ag-ui/core';
import type { AgentState } from '../state/working-memory.js';
import { errorMessage } from '../text.js';
import type { ThreadEventLog } from './event-log.js';
import type { AttachOptions, FeedOptions } from './feed-options.js';
import type { FeedSink } from './feed-sink.js';
import type { RunsInLog } from './runs-in-log.js';
import { snapshotBracket } from './snapshot-bracket.js';

/** One SSE client of a feed: `position` is the last sequence id it was sent. */
interface Client {
  out: FeedSink;
  position: number;
  /** Set while its snapshot loads: live events wait in the ring meanwhile. */
  loading: boolean;
  /** The client joined inside a run whose start is no longer in the ring: it waits for the next run. */
  awaitingRun: boolean;
}

/** How long, inside one long turn, a batch waits for the next to share the clients' writes (as `EventStream` holds a frame). */
const MAX_HOLD_MS = 10;
/**
 * With this many clients, a batch holding nothing `isAwaited` waits up to `CROWD_HOLD_MS` for the
 * ones after it: delivering to every client then takes long enough that a run's answer and its end,
 * stored milliseconds apart, would each be a write to all. 50 ms is under a frame at 20 Hz.
 */
const CROWD = 1000;
const CROWD_HOLD_MS = 50;

/** What the followers wait for and must get at once, however many they are: a run's start, a user's message. */
const isAwaited = (e: Event) => e.type === EventType.RUN_STARTED || (e.type === EventType.TEXT_MESSAGE_START && e.role === 'user');

interface QueuedDelivery {
  events: Event[];
  firstId: number;
  /** When the first batch was queued (`performance.now()`). */
  since: number;
}

/** What the clients read of the feed's options: their bounds, and the stored thread a snapshot is made of. */
export type ClientOptions = Pick<
  FeedOptions,
  'threadId' | 'maxClientQueueBytes' | 'heartbeatMs' | 'loadHistory' | 'loadState' | 'loadInterrupts' | 'logger' | 'metrics'
>;

/**
 * The SSE clients of one feed: how each joins (replay, snapshot, or live from the run open in the
 * log), what each is sent of the numbered events (batched per event-loop turn, encoded once for
 * all), a keep-alive while nothing is, and the cut-off of one that falls too far behind.
 *
 * @example
 * await clients.attach(out, { lastEventId: 1767225600000041 });
 * clients.queueDelivery(events, firstId); // as the log numbers them
 */
export class FeedClients {
  /** Each client by its stream: a follower that leaves is found at once among thousands. */
  private readonly clients = new Map<FeedSink, Client>();
  private queued?: QueuedDelivery;
  private deliveryScheduled = false;
  /** A run the log opened again after Redis lost it: its clients get the stored thread once it ends (`gappedRunEnds`). */
  private gappedRun?: string;
  private lastPublish = Date.now();
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    private readonly log: ThreadEventLog,
    private readonly runs: RunsInLog,
    private readonly options: ClientOptions,
  ) {
    this.heartbeat = setInterval(() => this.keepAlive(), options.heartbeatMs);
    this.heartbeat.unref();
  }

  get size(): number {
    return this.clients.size;
  }

  /**
   * Adds a client: replay after `lastEventId` when this feed can replay it exactly, else a snapshot
   * run first (when asked for, or for any id it cannot replay), then live. The client's id is only
   * read: it never moves the sequence that the other clients share.
   */
  async attach(out: FeedSink, options: AttachOptions): Promise<void> {
    const client: Client = { out, position: this.log.lastId, loading: false, awaitingRun: false };
    this.clients.set(client.out, client);
    this.log.setFollowed?.(true);
    const { lastEventId } = options;
    if (lastEventId !== undefined && this.canReplayAfter(lastEventId)) {
      client.position = lastEventId;
      this.options.metrics?.joined('replay');
    } else if (lastEventId !== undefined && (await this.replayFromStore(client, lastEventId))) {
      // sent; the ring goes on from there
      this.options.metrics?.joined('replay');
    } else {
      // Join first: the snapshot frames carry the position the client resumes from, and a client
      // joining inside a run resumes before that run's RUN_STARTED, so ids would otherwise go back.
      this.joinCurrentRun(client);
      const snapshot = options.snapshot || lastEventId !== undefined;
      this.options.metrics?.joined(snapshot ? 'snapshot' : 'live');
      if (snapshot && !(await this.sendSnapshot(client))) return;
    }
    this.catchUp(client);
  }

  detach(out: FeedSink): void {
    this.clients.delete(out);
  }

  /** Ends every client stream (after what is queued for it). */
  close(): void {
    clearInterval(this.heartbeat);
    for (const client of this.clients.values()) client.out.close();
    this.clients.clear();
  }

  /**
   * Batches numbered in one event-loop turn go to the clients together when the turn ends (or once
   * the oldest has waited `MAX_HOLD_MS`, inside a long turn): one write per client per turn, for
   * any number of batches. Past `CROWD` clients, batches also wait for the ones after them.
   */
  queueDelivery(events: readonly Event[], firstId: number): void {
    this.lastPublish = Date.now();
    let queued = this.queued;
    if (queued && queued.firstId + queued.events.length === firstId) queued.events.push(...events);
    else {
      this.deliverQueued();
      queued = this.queued = { events: [...events], firstId, since: performance.now() };
    }
    const hold = this.clients.size >= CROWD && !queued.events.some(isAwaited) ? CROWD_HOLD_MS : 0;
    if (performance.now() - queued.since >= Math.max(MAX_HOLD_MS, hold)) return this.deliverQueued();
    if (this.deliveryScheduled) return;
    this.deliveryScheduled = true;
    const deliver = () => {
      this.deliveryScheduled = false;
      this.deliverQueued();
    };
    if (hold > 0) setTimeout(deliver, hold);
    else setImmediate(deliver);
  }

  /** Sends what `queueDelivery` holds to every ready client (encoded once for all). */
  deliverQueued(): void {
    const queued = this.queued;
    if (!queued) return;
    this.queued = undefined;
    let sent = 0;
    for (const client of this.clients.values()) sent += this.deliver(client, queued.events, queued.firstId);
    this.options.metrics?.events.inc(sent);
  }

  /**
   * The log lost events its clients never got (Redis trimmed or restarted under them): they get
   * the thread as stored, once the run open in the log has ended, or now.
   */
  lostEvents(nextId: number): void {
    this.deliverQueued();
    // Not handled: a gap that swallowed the open run's end, then another run's RUN_STARTED before
    // that run is settled as lost; the clients' bracket of the first run stays open (not seen).
    // What they hold resumes at the log's next event: what came before it is gone from the ring.
    for (const client of this.clients.values()) if (!client.loading) client.position = Math.max(client.position, nextId - 1);
    const open = this.runs.open?.runId;
    if (open !== undefined) this.gappedRun = open;
    else this.afterGap();
  }

  /** Whether the run open in the log, now ending, is the one Redis lost under its followers (`afterGap` is due once its end is queued). */
  gappedRunEnds(): boolean {
    return this.gappedRun !== undefined && this.gappedRun === this.runs.open?.runId;
  }

  /** The run Redis lost under its followers has ended: each gets the thread as stored, then what came since. */
  afterGap(): void {
    this.deliverQueued();
    this.gappedRun = undefined;
    for (const client of this.clients.values()) {
      if (client.loading) continue;
      void this.sendSnapshot(client).then((sent) => sent && this.catchUp(client));
    }
  }

  /** Sends the batch to one client, from past what it holds (it may have caught up from the log while the batch waited); answers how many events it sent. */
  private deliver(client: Client, events: readonly Event[], firstId: number): number {
    if (client.loading) return 0;
    let from = Math.max(0, client.position + 1 - firstId);
    if (from >= events.length) return 0;
    if (client.awaitingRun) {
      from = events.findIndex((e, i) => i >= from && e.type === EventType.RUN_STARTED);
      if (from < 0) {
        client.position = firstId + events.length - 1;
        return 0;
      }
      client.awaitingRun = false;
    }
    client.out.sendShared(from === 0 ? events : events.slice(from), firstId + from);
    client.position = firstId + events.length - 1;
    this.cutOffIfBehind(client);
    return events.length - from;
  }

  /**
   * Only ids this feed handed out and its log still holds can be replayed, and its base (what a
   * client holds that got a snapshot before the feed's first event). Any other id names an unknown
   * point: from before this feed (no one followed, or a restart), or never handed out.
   */
  private canReplayAfter(id: number): boolean {
    return id >= this.log.baseId && this.log.since(id) !== undefined;
  }

  /** Replays what a shared store holds after `id` (older than the ring), while live events wait. */
  private async replayFromStore(client: Client, id: number): Promise<boolean> {
    if (!this.log.fetch || id >= this.log.baseId) return false;
    client.loading = true;
    // Not fetched (the store is away): the client gets a snapshot instead, as for an id out of reach.
    const older = await this.log.fetch(id).catch(() => undefined);
    client.loading = false;
    if (!older) return false;
    for (const { id: eventId, event } of older) client.out.sendShared([event], eventId);
    this.options.metrics?.events.inc(older.length);
    client.position = older.length > 0 ? older[older.length - 1].id : id;
    return true;
  }

  private catchUp(client: Client): void {
    const missed = this.log.since(client.position);
    // The ring moved past it while its snapshot loaded: a gap it cannot see. It comes back for a new snapshot.
    if (!missed) return this.cutOff(client);
    let sent = 0;
    for (const { id, event } of missed) {
      if (client.awaitingRun && event.type !== EventType.RUN_STARTED) continue;
      client.awaitingRun = false;
      client.out.sendShared([event], id);
      sent++;
    }
    this.options.metrics?.events.inc(sent);
    if (missed.length > 0) client.position = missed[missed.length - 1].id;
    this.cutOffIfBehind(client);
  }

  /** A client joining inside a run starts at that run's `RUN_STARTED`, or waits for the next run. */
  private joinCurrentRun(client: Client): void {
    const runStartSeq = this.runs.open?.startSeq;
    if (runStartSeq === undefined) return;
    if (this.log.since(runStartSeq - 1) !== undefined) client.position = runStartSeq - 1;
    else client.awaitingRun = true;
  }

  /**
   * Sends the snapshot run; answers whether it could. A history that fails to load is never sent
   * as an empty snapshot (a client would wipe its transcript): the client is cut off before any
   * frame, and reconnects with the same `Last-Event-ID` to try again.
   */
  private async sendSnapshot(client: Client): Promise<boolean> {
    client.loading = true;
    const runId = `snapshot-${randomUUID()}`;
    const { threadId } = this.options;
    let messages: Message[];
    let state: AgentState | undefined;
    let interrupts: Interrupt[] | undefined;
    try {
      [messages, state, interrupts] = await Promise.all([this.options.loadHistory(), this.loadState(), this.options.loadInterrupts?.()]);
    } catch (error) {
      this.options.logger.warn(`Snapshot of thread ${threadId} failed: ${errorMessage(error)}`);
      this.cutOff(client, "The thread's history could not be loaded; reconnect to try again");
      return false;
    }
    // Only the frame that completes the bracket carries the position the client resumes from
    // (ids never go back): a client cut inside the bracket keeps its previous id, and comes back
    // for the whole snapshot rather than past one it never had.
    const bracket = snapshotBracket(threadId, runId, messages, state, interrupts);
    client.out.send(bracket.slice(0, -1));
    client.out.send(bracket.slice(-1), client.position);
    this.options.metrics?.events.inc(bracket.length);
    client.loading = false;
    return true;
  }

  private async loadState(): Promise<AgentState | undefined> {
    return this.options.loadState?.();
  }

  private cutOffIfBehind(client: Client): void {
    if (client.out.queuedBytes > this.options.maxClientQueueBytes) this.cutOff(client);
  }

  private cutOff(client: Client, reason = 'The client fell too far behind; reconnect with Last-Event-ID'): void {
    this.clients.delete(client.out);
    client.out.abort(reason);
  }

  private keepAlive(): void {
    if (Date.now() - this.lastPublish < this.options.heartbeatMs) return;
    for (const client of this.clients.values()) client.out.raw(': keep-alive\n\n');
  }
}
