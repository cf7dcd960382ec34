/** Ids a feed may hand out per millisecond of its life without ever reaching the next feed's base. */
export const IDS_PER_MS = 1000;

/**
 * The base of a new feed of a thread: the position just before its first event. Above every id
 * any earlier feed of that thread handed out, and itself never an event's id, so that an id names
 * one event forever (even though nothing is stored), and the base names one point in the stream:
 * "before this feed's first event", which a client holding a snapshot of this feed resumes from.
 *
 * - `remembered` (the last id of this thread's released feed, while this process remembers it)
 *   makes that exact within one process, however fast feeds come and go.
 * - The clock covers what the process forgot (a restart, an entry evicted from the bounded memory):
 *   an earlier feed started at an earlier millisecond `t0`, with a base of at least
 *   `t0 * IDS_PER_MS`, so its ids stay below `now * IDS_PER_MS` (the assumption of `IDS_PER_MS`; a
 *   wall clock set back by more than the restart took breaks it too).
 *
 * Today's base is about 1.8e15 (16 digits), below `Number.MAX_SAFE_INTEGER` (9.0e15) until
 * the year 2255, so ids stay exact as JSON numbers and in browsers.
 *
 * @example
 * feedBase(undefined, 1767225600000) // 1767225600000000: the first event gets ...001
 * feedBase(1767225600000041, 1767225600000) // 1767225600000042: the clock has not moved on enough
 */
export function feedBase(remembered: number | undefined, now: number = Date.now()): number {
  return Math.max(now * IDS_PER_MS, (remembered ?? 0) + 1);
}
