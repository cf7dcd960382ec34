import type { Mastra } from '@mastra/core';
import { inject, injectable } from 'inversify';
import { ThreadStateQueue } from '../threads/state-queue.js';
import type { ThreadLocks } from '../threads/thread-locks.js';
import { TOKENS } from '../tokens.js';

/** One webhook to one URL, waiting to be delivered. */
export interface OutboxEntry {
  /** `<webhookId>.<n>`: the n-th configured URL's delivery of the event. */
  id: string;
  /** The run's thread: the row the entry is kept in. */
  threadId: string;
  /** The `webhook-id` header, the same on every attempt and for every URL. */
  webhookId: string;
  url: string;
  /** The JSON body, as signed. */
  body: string;
  createdAt: number;
  attempts: number;
  /** Not tried before this time (epoch ms). */
  nextAt: number;
  /** A process is delivering it until then; after, anyone may (that process died). */
  claimedUntil?: number;
  /** Which process (a token of its sender) holds the claim. */
  claimedBy?: string;
}

/**
 * The webhooks not yet delivered, in the storage the bridge already uses (`ThreadStateQueue`, as
 * the durable inbox): written before anyone is told of them, so a `kill -9` loses none. A process
 * claims an entry before it sends it, so that each is sent by one process at a time.
 */
@injectable()
export class WebhookOutbox {
  private readonly queue: ThreadStateQueue<OutboxEntry>;
  /** The entries seen by the last `due`: the depth `/metrics` shows. */
  depth = 0;

  constructor(@inject(TOKENS.Mastra) mastra: Mastra, @inject(TOKENS.ThreadLocks) locks: ThreadLocks) {
    this.queue = new ThreadStateQueue(mastra, locks, {
      entries: 'mastra-agui-bridge.webhooks',
      index: 'mastra-agui-bridge.webhook-threads',
      locks: 'webhooks',
    });
  }

  add(entries: readonly OutboxEntry[]): Promise<void> {
    const [first] = entries;
    return first ? this.queue.add(first.threadId, entries) : Promise.resolve();
  }

  /** Entries whose time has come and which no living process is sending, oldest first; and the next time one will be due. */
  async due(now: number): Promise<{ due: OutboxEntry[]; nextAt: number | undefined }> {
    const all = await this.queue.all();
    this.depth = all.length;
    const free = all.filter((entry) => (entry.claimedUntil ?? 0) <= now);
    const due = free.filter((entry) => entry.nextAt <= now).sort((a, b) => a.createdAt - b.createdAt);
    const later = all.map((entry) => Math.max(entry.nextAt, entry.claimedUntil ?? 0)).filter((at) => at > now);
    return { due, nextAt: later.length > 0 ? Math.min(...later) : undefined };
  }

  /** Takes the entry for `owner` until `until`; false when another holds it or it is gone. */
  async claim(entry: OutboxEntry, owner: string, now: number, until: number): Promise<boolean> {
    let claimed = false;
    await this.queue.update(entry.threadId, (entries) => {
      const current = entries.find((e) => e.id === entry.id);
      const held = current && current.claimedBy !== owner && (current.claimedUntil ?? 0) > now;
      if (!current || held || current.nextAt > now) return entries;
      claimed = true;
      return entries.map((e) => (e === current ? { ...e, claimedUntil: until, claimedBy: owner } : e));
    });
    return claimed;
  }

  delivered(entry: OutboxEntry): Promise<void> {
    return this.queue.remove(entry.threadId, [entry.id]);
  }

  /** A failed attempt: tried again at `nextAt`, by any process. */
  failed(entry: OutboxEntry, nextAt: number): Promise<void> {
    return this.queue.update(entry.threadId, (entries) =>
      entries.map((e) => (e.id === entry.id ? { ...e, attempts: e.attempts + 1, nextAt, claimedUntil: undefined, claimedBy: undefined } : e)),
    );
  }
}
