import { randomUUID } from 'node:crypto';
import { EventType, type Event, type Message } from '@ag-ui/core';
import type { Agent } from '@mastra/core/agent';
import type { RunAnnouncement } from '../runs/run-announcements.js';
import type { BridgeLogger } from '../config.js';
import type { EventStream } from '../sse/event-stream.js';
import type { MastraChunk } from '../translate/chunks.js';
import type { StreamTranslator } from '../translate/stream-translator.js';
import { errorMessage } from '../translate/values.js';
import { ReplayRing } from './replay-ring.js';
import { ThreadTranslator } from '../translate/thread-translator.js';

export interface FeedOptions {
  agent: Agent;
  threadId: string;
  resourceId: string;
  /** First sequence id: above every id an earlier feed of this thread handed out (see `feedBase`). */
  firstSeq: number;
  replayBufferSize: number;
  maxClientQueueBytes: number;
  heartbeatMs: number;
  translators: StreamTranslator;
  /** What a `/run` announced of itself, by Mastra run id (see `RunAnnouncements`). */
  announced?: (runId: string) => RunAnnouncement | undefined;
  loadHistory: () => Promise<Message[]>;
  /** The task manager's stream for this thread, where background-task progress arrives. */
  backgroundStream?: (signal: AbortSignal) => ReadableStream<unknown> | undefined;
  logger: BridgeLogger;
}

export interface AttachOptions {
  lastEventId?: number;
  snapshot?: boolean;
}

/** One SSE client of a feed: `position` is the last sequence id it was sent. */
interface Client {
  out: EventStream;
  position: number;
  /** Set while its snapshot loads: live events wait in the ring meanwhile. */
  loading: boolean;
  /** The client joined inside a run whose start is no longer in the ring: it waits for the next run. */
  awaitingRun: boolean;
}

const isTerminal = (e: Event) => e.type === EventType.RUN_FINISHED || e.type === EventType.RUN_ERROR;

/**
 * Follows one thread for all its SSE clients: one Mastra subscription (plus the background-task
 * stream), translated into run brackets, numbered with a per-thread sequence, kept in a bounded
 * replay ring and fanned out. A client that falls too far behind is cut off (it may come back with
 * `Last-Event-ID`), so one slow reader neither holds up the others nor grows memory.
 */
export class ThreadFeed {
  private seq: number;
  private readonly ring: ReplayRing;
  private readonly clients = new Set<Client>();
  private readonly translator: ThreadTranslator;
  private readonly stop = new AbortController();
  private unsubscribe?: () => void;
  private followingTasks = false;
  private runStartSeq?: number;
  private lastPublish = Date.now();
  private readonly heartbeat: NodeJS.Timeout;

  constructor(private readonly options: FeedOptions) {
    this.seq = options.firstSeq - 1;
    this.ring = new ReplayRing(options.replayBufferSize, this.seq);
    this.translator = new ThreadTranslator(options.threadId, options.translators, options.announced);
    this.heartbeat = setInterval(() => this.keepAlive(), options.heartbeatMs);
    this.heartbeat.unref();
  }

  /** The last sequence id handed out. */
  get lastSeq(): number {
    return this.seq;
  }

  get clientCount(): number {
    return this.clients.size;
  }

  /** Subscribes to the thread; resolves once Mastra has registered the subscriber. */
  async start(): Promise<void> {
    const sub = await this.options.agent.subscribeToThread({ resourceId: this.options.resourceId, threadId: this.options.threadId });
    this.unsubscribe = () => sub.unsubscribe();
    void this.consume(sub.stream as AsyncIterable<unknown>);
  }

  /**
   * Adds a client: replay after `lastEventId` when this feed can replay it exactly, else a snapshot
   * run first (when asked for, or for any id it cannot replay), then live. The client's id is only
   * read: it never moves the sequence that the other clients share.
   */
  async attach(out: EventStream, options: AttachOptions): Promise<void> {
    const client: Client = { out, position: this.seq, loading: false, awaitingRun: false };
    this.clients.add(client);
    const { lastEventId } = options;
    if (lastEventId !== undefined && this.canReplayAfter(lastEventId)) {
      client.position = lastEventId;
    } else {
      // Join first: the snapshot frames carry the position the client resumes from, and a client
      // joining inside a run resumes before that run's RUN_STARTED, so ids would otherwise go back.
      this.joinCurrentRun(client);
      if (options.snapshot || lastEventId !== undefined) await this.sendSnapshot(client);
    }
    this.catchUp(client);
  }

  detach(out: EventStream): void {
    for (const client of this.clients) if (client.out === out) this.clients.delete(client);
  }

  /** Ends every client stream (after closing the open run) and the Mastra subscription. */
  close(): void {
    this.publish(this.translator.close());
    clearInterval(this.heartbeat);
    this.stop.abort();
    this.unsubscribe?.();
    for (const client of this.clients) client.out.close();
    this.clients.clear();
  }

  private async consume(stream: AsyncIterable<unknown>): Promise<void> {
    try {
      for await (const chunk of stream) {
        if (this.stop.signal.aborted) return;
        if ((chunk as MastraChunk).type === 'background-task-started') this.followBackgroundTasks();
        this.publish(this.translator.push(chunk as MastraChunk));
      }
    } catch (error) {
      if (!this.stop.signal.aborted) this.options.logger.error(`Thread feed ${this.options.threadId} failed: ${errorMessage(error)}`);
    }
  }

  /**
   * Opens the task manager's stream for this thread, once, when the thread first starts a
   * background task: task progress never comes on the thread subscription, and a listener per
   * followed thread that never uses tasks would be waste.
   */
  private followBackgroundTasks(): void {
    if (this.followingTasks) return;
    this.followingTasks = true;
    const stream = this.options.backgroundStream?.(this.stop.signal);
    if (stream) void this.consume(streamToIterable(stream));
  }

  /** Numbers the events, keeps them in the ring, and sends them to every ready client (encoded once for all). */
  private publish(events: Event[]): void {
    if (events.length === 0) return;
    const firstId = this.seq + 1;
    for (const event of events) {
      this.ring.push(++this.seq, event);
      if (event.type === EventType.RUN_STARTED) this.runStartSeq = this.seq;
      else if (isTerminal(event)) this.runStartSeq = undefined;
    }
    this.lastPublish = Date.now();
    for (const client of this.clients) this.deliver(client, events, firstId);
  }

  private deliver(client: Client, events: Event[], firstId: number): void {
    if (client.loading) return;
    let from = 0;
    if (client.awaitingRun) {
      from = events.findIndex((e) => e.type === EventType.RUN_STARTED);
      if (from < 0) return void (client.position = firstId + events.length - 1);
      client.awaitingRun = false;
    }
    client.out.sendShared(from === 0 ? events : events.slice(from), firstId + from);
    client.position = firstId + events.length - 1;
    this.cutOffIfBehind(client);
  }

  /**
   * Only ids this feed handed out, still in its ring, can be replayed. Anything else names an
   * unknown point: an id from before this feed started (what happened while no one followed the
   * thread, or before a restart, is unknown), or one it never handed out.
   */
  private canReplayAfter(id: number): boolean {
    return id >= this.options.firstSeq && id <= this.seq && this.ring.since(id) !== undefined;
  }

  /** Sends what the client has not seen yet from the ring. */
  private catchUp(client: Client): void {
    const missed = this.ring.since(client.position);
    // The ring moved past it while its snapshot loaded: a gap it cannot see. It comes back for a new snapshot.
    if (!missed) return this.cutOff(client);
    for (const { id, event } of missed) {
      if (client.awaitingRun && event.type !== EventType.RUN_STARTED) continue;
      client.awaitingRun = false;
      client.out.sendShared([event], id);
    }
    if (missed.length > 0) client.position = missed[missed.length - 1].id;
    this.cutOffIfBehind(client);
  }

  /** A client joining inside a run starts at that run's `RUN_STARTED`, or waits for the next run. */
  private joinCurrentRun(client: Client): void {
    if (this.runStartSeq === undefined) return;
    if (this.ring.since(this.runStartSeq - 1) !== undefined) client.position = this.runStartSeq - 1;
    else client.awaitingRun = true;
  }

  private async sendSnapshot(client: Client): Promise<void> {
    client.loading = true;
    const runId = `snapshot-${randomUUID()}`;
    const { threadId } = this.options;
    let messages: Message[] = [];
    try {
      messages = await this.options.loadHistory();
    } catch (error) {
      this.options.logger.warn(`Snapshot of thread ${threadId} failed: ${errorMessage(error)}`);
    }
    // The snapshot frames carry the position the client resumes from: ids never go back.
    const snapshot: Event[] = [
      { type: EventType.RUN_STARTED, threadId, runId },
      { type: EventType.MESSAGES_SNAPSHOT, messages },
      { type: EventType.RUN_FINISHED, threadId, runId },
    ];
    for (const event of snapshot) client.out.send([event], client.position);
    client.loading = false;
  }

  private cutOffIfBehind(client: Client): void {
    if (client.out.queuedBytes > this.options.maxClientQueueBytes) this.cutOff(client);
  }

  private cutOff(client: Client): void {
    this.clients.delete(client);
    client.out.abort('The client fell too far behind; reconnect with Last-Event-ID');
  }

  private keepAlive(): void {
    if (Date.now() - this.lastPublish < this.options.heartbeatMs) return;
    for (const client of this.clients) client.out.raw(': keep-alive\n\n');
  }
}

async function* streamToIterable(stream: ReadableStream<unknown>): AsyncIterable<unknown> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}
