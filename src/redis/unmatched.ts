import type { Event } from '@ag-ui/core';

/** An event as the two sides compare it: its run, and its JSON (a step's events repeat from run to run). */
export const keyOf = (runId: string | undefined, event: Event) => `${runId ?? ''}\u0000${JSON.stringify(event)}`;

/**
 * Events of one side not yet paired with the other, oldest first. Both sides hold the same events
 * in the same order, so a match also drops what is before it: the other side will never have it
 * (it translated from a later point, or differently). Entries older than `keepMs`, or past `max`,
 * are forgotten. (What a thread log's follower translated and what its writer wrote: see
 * `SharedLog` in event-log.ts.)
 *
 * @example
 * const unwritten = new Unmatched(10_000, 1000);
 * unwritten.push(keyOf(runId, event), event);
 * unwritten.match(keyOf(runId, event)); // true: paired, gone with everything before it
 */
export class Unmatched {
  private entries: Array<{ key: string; event: Event; at: number }> = [];

  constructor(
    private readonly keepMs: number,
    private readonly max: number,
  ) {}

  get size(): number {
    return this.entries.length;
  }

  push(key: string, event: Event): void {
    this.entries.push({ key, event, at: Date.now() });
    this.prune();
  }

  /** Whether `key` is here: if so it leaves, with everything before it. */
  match(key: string): boolean {
    this.prune();
    const at = this.entries.findIndex((e) => e.key === key);
    if (at < 0) return false;
    this.entries = this.entries.slice(at + 1);
    return true;
  }

  /** Everything here, oldest first; nothing is left. */
  take(): Event[] {
    this.prune();
    const events = this.entries.map((e) => e.event);
    this.entries = [];
    return events;
  }

  private prune(): void {
    const since = Date.now() - this.keepMs;
    let drop = Math.max(0, this.entries.length - this.max);
    while (drop < this.entries.length && this.entries[drop].at < since) drop++;
    if (drop > 0) this.entries = this.entries.slice(drop);
  }
}
