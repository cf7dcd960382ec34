import type { Event } from '@ag-ui/core';
import type { Mastra } from '@mastra/core';
import type { Agent } from '@mastra/core/agent';
import { inject, injectable } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import { agentsOf } from '../mastra/index.js';
import type { BridgeMetrics } from '../observability/metrics.js';
import { RunEndings } from '../threads/run-endings.js';
import { TOKENS } from '../tokens.js';
import { errorMessage } from '../text.js';
import type { ThreadEventLogs } from './event-log.js';
import { FeedFactory } from './feed-factory.js';
import type { FeedSink } from './feed-sink.js';
import { feedKey, feedKeyParts, type FollowTarget } from './follow-target.js';
import type { AttachOptions, FeedMetrics } from './feed-options.js';
import type { ThreadFeed } from './thread-feed.js';

/** Writes a run the bridge streams itself to its thread's followers (`ThreadHub.openRun`); `close` once the run has ended. */
export interface RunWriter {
  write(events: Event[]): void;
  close(): void;
}

/**
 * One `ThreadFeed` per thread (keyed by agent, resource and thread), shared by all its SSE
 * clients. The Mastra subscription is released `subscriptionLingerMs` after the last client
 * leaves: long enough for an EventSource to reconnect and resume from the ring.
 *
 * With a shared log, a feed is also kept without a client while a run of this process streams on a
 * thread another process follows (`ThreadEventLogs.onWriterNeeded`): only this process has the
 * run's chunks, and its feed writes them into the log. It lives while the thread is followed there.
 */
@injectable()
export class ThreadHub {
  private readonly feeds = new Map<string, ThreadFeed>();
  private readonly starting = new Map<string, Promise<ThreadFeed>>();
  private readonly lingering = new Map<string, NodeJS.Timeout>();
  /** Feeds a run of this process writes into (`openRun`), by key, and how many: kept while they write. */
  private readonly writing = new Map<string, number>();
  private readonly feedMetrics: FeedMetrics;
  private readonly sharedLog: boolean;

  constructor(
    @inject(TOKENS.Config) private readonly config: ResolvedConfig,
    @inject(TOKENS.Mastra) private readonly mastra: Mastra,
    @inject(TOKENS.EventLogs) private readonly logs: ThreadEventLogs,
    @inject(TOKENS.Metrics) metrics: BridgeMetrics,
    @inject(RunEndings) private readonly endings: RunEndings,
    @inject(FeedFactory) private readonly factory: FeedFactory,
  ) {
    // Read when scraped: the hub's own counts, nothing kept in step on attach and detach.
    metrics.trackFollowers(() => this.followerCount);
    metrics.trackFollowedThreads(() => this.subscriptionCount);
    this.feedMetrics = { events: metrics.threadEvents, joined: (kind) => metrics.followerJoined(kind) };
    this.sharedLog = logs.onWriterNeeded !== undefined;
    logs.onWriterNeeded?.((key) => this.keepWriter(key));
  }

  /** Number of live Mastra subscriptions (one per followed thread). */
  get subscriptionCount(): number {
    return this.feeds.size;
  }

  /** Number of open thread events streams, over every followed thread. */
  get followerCount(): number {
    let count = 0;
    for (const feed of this.feeds.values()) count += feed.clientCount;
    return count;
  }

  async attach(target: FollowTarget, out: FeedSink, options: AttachOptions): Promise<void> {
    const key = feedKey(target);
    const pending = this.lingering.get(key);
    if (pending) clearTimeout(pending);
    this.lingering.delete(key);
    const feed = this.feeds.get(key) ?? (await this.startFeed(key, target));
    out.onCancel(() => this.detach(key, feed, out));
    await feed.attach(out, options);
  }

  /**
   * A run the bridge streams itself (a workflow's `/run`: Mastra's thread subscription carries
   * only agents' runs) reaches the thread's followers through the thread's feed here, whose log
   * every process reads. The feed is kept while the run writes, with or without a client here.
   */
  async openRun(target: FollowTarget): Promise<RunWriter> {
    const key = feedKey(target);
    this.writing.set(key, (this.writing.get(key) ?? 0) + 1);
    let open = true;
    const close = () => {
      if (!open) return;
      open = false;
      const left = (this.writing.get(key) ?? 1) - 1;
      if (left > 0) this.writing.set(key, left);
      else this.writing.delete(key);
    };
    try {
      const feed = this.feeds.get(key) ?? (await this.startFeed(key, target));
      if (feed.clientCount === 0 && !this.lingering.has(key)) this.linger(key, feed);
    } catch (error) {
      close();
      throw error;
    }
    // Looked up per batch: after a shutdown closed the feed, the run's last events go nowhere.
    const write = (events: Event[]) => {
      if (open) this.feeds.get(key)?.publishRun(events);
    };
    return { write, close };
  }

  private async keepWriter(key: string): Promise<void> {
    if (this.feeds.has(key)) return;
    const parts = feedKeyParts(key);
    const agent = parts && this.agentOf(parts.agentId);
    if (!parts || !agent) return;
    const { resourceId, threadId } = parts;
    try {
      const feed = await this.startFeed(key, { agent, resourceId, threadId });
      if (feed.clientCount === 0 && !this.lingering.has(key)) this.linger(key, feed);
    } catch (error) {
      this.config.logger.warn(`Thread ${threadId}: no feed to write this process's run for followers elsewhere: ${errorMessage(error)}`);
    }
  }

  private agentOf(agentId: string): Agent | undefined {
    return agentsOf(this.mastra).find(([, agent]) => agent.id === agentId)?.[1];
  }

  /**
   * The thread streams' part of a shutdown: the runs this process streams on its threads are cut
   * (each ends cancelled, what it had stored) and wound down, within `windDownMs`; then every
   * feed closes, each client getting the cut run's terminal event before its stream ends.
   */
  async shutdown(windDownMs: number): Promise<void> {
    await this.endings.cutAll(
      agentsOf(this.mastra).map(([, agent]) => agent),
      Date.now() + windDownMs,
    );
    for (const timer of this.lingering.values()) clearTimeout(timer);
    this.lingering.clear();
    await Promise.all(
      [...this.feeds].map(async ([key, feed]) => {
        this.feeds.delete(key);
        await feed.shutdown();
      }),
    );
  }

  private startFeed(key: string, target: FollowTarget): Promise<ThreadFeed> {
    let starting = this.starting.get(key);
    if (!starting) {
      starting = this.createFeed(key, target).finally(() => this.starting.delete(key));
      this.starting.set(key, starting);
    }
    return starting;
  }

  private async createFeed(key: string, target: FollowTarget): Promise<ThreadFeed> {
    const feed = await this.factory.create(target, { log: await this.logs.open(key), sharedLog: this.sharedLog, metrics: this.feedMetrics });
    this.feeds.set(key, feed);
    return feed;
  }

  private detach(key: string, feed: ThreadFeed, out: FeedSink): void {
    feed.detach(out);
    if (feed.clientCount > 0 || this.lingering.has(key)) return;
    this.linger(key, feed);
  }

  /**
   * Releases a feed left without clients after `subscriptionLingerMs`, unless a client came back or
   * (with a shared log) another process follows its thread: then it is checked again later.
   */
  private linger(key: string, feed: ThreadFeed): void {
    const timer = setTimeout(() => void this.lingered(key, feed), this.config.subscriptionLingerMs);
    timer.unref();
    this.lingering.set(key, timer);
  }

  private async lingered(key: string, feed: ThreadFeed): Promise<void> {
    if (feed.clientCount > 0) return void this.lingering.delete(key);
    if (this.writing.has(key)) return this.linger(key, feed);
    const followed = await this.logs.followedElsewhere?.(key).catch(() => true);
    if (this.feeds.get(key) !== feed || feed.clientCount > 0) return void this.lingering.delete(key);
    if (!followed) {
      this.lingering.delete(key);
      return this.release(key, feed);
    }
    // Kept for the other processes' followers: no longer counted as followed here.
    feed.unfollow();
    this.linger(key, feed);
  }

  private release(key: string, feed: ThreadFeed): void {
    feed.close();
    this.feeds.delete(key);
  }
}
