import type { Event } from '@ag-ui/core';

/**
 * The last `capacity` events of a thread with their sequence ids: what a client that reconnects
 * with `Last-Event-ID` is replayed from. Fixed size; the oldest entry is overwritten. Ids are
 * pushed ascending and contiguous, starting right after `startId`.
 *
 * @example
 * const ring = new ReplayRing(1000, 41); // the first id pushed will be 42
 * ring.push(42, event);
 * ring.since(41) // [{ id: 42, event }]; ring.since(42) // []; ring.since(43) // undefined
 */
export class ReplayRing {
  private readonly ids: number[];
  private readonly events: Event[];
  private start = 0;
  private size = 0;
  /** The newest id pushed, or `startId` while empty: the id after which nothing is missed. */
  private newest: number;

  /** @param startId the id just before the first one pushed (nothing before it is known) */
  constructor(
    private readonly capacity: number,
    startId: number,
  ) {
    this.ids = new Array<number>(capacity);
    this.events = new Array<Event>(capacity);
    this.newest = startId;
  }

  push(id: number, event: Event): void {
    const index = (this.start + this.size) % this.capacity;
    this.ids[index] = id;
    this.events[index] = event;
    this.newest = id;
    if (this.size < this.capacity) this.size++;
    else this.start = (this.start + 1) % this.capacity;
  }

  /**
   * Events after `lastId` (ids ascending, contiguous), or `undefined` when the ring cannot vouch
   * for them: some were overwritten (`lastId` older than the oldest kept, minus one), or `lastId`
   * is above the newest id (the ring never saw it, so "nothing after it" would be a guess).
   */
  since(lastId: number): Array<{ id: number; event: Event }> | undefined {
    if (lastId > this.newest) return undefined;
    const oldest = this.size > 0 ? this.ids[this.start] : this.newest + 1;
    if (lastId < oldest - 1) return undefined;
    // Ids are contiguous: the entry after `lastId` is `lastId + 1 - oldest` entries in.
    const out: Array<{ id: number; event: Event }> = [];
    for (let i = lastId + 1 - oldest; i < this.size; i++) {
      const index = (this.start + i) % this.capacity;
      out.push({ id: this.ids[index], event: this.events[index] });
    }
    return out;
  }
}
