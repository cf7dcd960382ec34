import type { Event } from '@ag-ui/core';
import { inject, injectable } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import { TOKENS } from '../tokens.js';
import type { NumberedEvent, NumberedListener, ThreadEventLog, ThreadEventLogs } from './event-log.js';
import { feedBase } from './feed-base.js';
import { ReplayRing } from './replay-ring.js';

/** Remembered last ids of closed logs, so a re-opened one never reuses an id (past that, the clock does: `feedBase`). */
const REMEMBERED_THREADS = 10_000;

/**
 * Event logs held in this process: each numbers from `feedBase` and keeps the last
 * `replayBufferSize` events in a ring. Nothing is stored; ids still never repeat (see `feedBase`).
 */
@injectable()
export class InProcessEventLogs implements ThreadEventLogs {
  private readonly lastIds = new Map<string, number>();
  private readonly capacity: number;

  constructor(@inject(TOKENS.Config) config: ResolvedConfig) {
    this.capacity = config.replayBufferSize;
  }

  async open(key: string): Promise<ThreadEventLog> {
    return new RingLog(feedBase(this.lastIds.get(key)), this.capacity, (lastId) => this.remember(key, lastId));
  }

  private remember(key: string, lastId: number): void {
    this.lastIds.delete(key); // re-inserted last: the oldest entry is the one evicted
    this.lastIds.set(key, lastId);
    if (this.lastIds.size > REMEMBERED_THREADS) this.lastIds.delete(this.lastIds.keys().next().value as string);
  }
}

/** Numbers at once, in the caller's turn: the feed's own events come straight back to it. */
class RingLog implements ThreadEventLog {
  private last: number;
  private readonly ring: ReplayRing;
  private listener: NumberedListener = () => {};

  constructor(
    readonly baseId: number,
    capacity: number,
    private readonly onClose: (lastId: number) => void,
  ) {
    this.last = baseId;
    this.ring = new ReplayRing(capacity, baseId);
  }

  get lastId(): number {
    return this.last;
  }

  append(events: readonly Event[]): void {
    const first = this.last + 1;
    for (const event of events) this.ring.push(++this.last, event);
    this.listener(events, first);
  }

  onEvents(listener: NumberedListener): void {
    this.listener = listener;
  }

  since(id: number): NumberedEvent[] | undefined {
    return this.ring.since(id);
  }

  close(): void {
    this.onClose(this.last);
  }
}
