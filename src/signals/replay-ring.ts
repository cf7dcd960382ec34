import type { Event } from '@ag-ui/core';

/**
 * The last `capacity` events of a thread with their sequence ids: what a client that reconnects
 * with `Last-Event-ID` is replayed from. Fixed size; the oldest entry is overwritten.
 *
 * @example
 * ring.push(42, event);
 * ring.since(40) // events 41 and 42, or undefined if 41 was already overwritten
 */
export class ReplayRing {
  private readonly ids: number[];
  private readonly events: Event[];
  private start = 0;
  private size = 0;

  constructor(private readonly capacity: number) {
    this.ids = new Array<number>(capacity);
    this.events = new Array<Event>(capacity);
  }

  push(id: number, event: Event): void {
    const index = (this.start + this.size) % this.capacity;
    this.ids[index] = id;
    this.events[index] = event;
    if (this.size < this.capacity) this.size++;
    else this.start = (this.start + 1) % this.capacity;
  }

  /** Events after `lastId` (ids ascending, contiguous), or `undefined` when some of them are gone. */
  since(lastId: number): Array<{ id: number; event: Event }> | undefined {
    const newest = this.size > 0 ? this.ids[(this.start + this.size - 1) % this.capacity] : undefined;
    if (newest === undefined || lastId >= newest) return lastId <= (newest ?? lastId) ? [] : undefined;
    const oldest = this.ids[this.start];
    if (lastId < oldest - 1) return undefined;
    const out: Array<{ id: number; event: Event }> = [];
    for (let i = 0; i < this.size; i++) {
      const index = (this.start + i) % this.capacity;
      if (this.ids[index] > lastId) out.push({ id: this.ids[index], event: this.events[index] });
    }
    return out;
  }
}
