/** The first retry's delay before jitter: it comes within 5 s of the failure. */
const FIRST_RETRY_MS = 2_000;
/** No wait between attempts is longer than this. */
const MAX_DELAY_MS = 3_600_000;
/** A delivery failing for this long is given up (about a day, as Standard Webhooks senders do). */
export const GIVE_UP_AFTER_MS = 24 * 3_600_000;

/**
 * How long to wait before the next attempt after `failures` failed ones: doubling from 2 s, at
 * most an hour, each wait drawn between half and the whole of it (jitter: receivers that come
 * back are not hit by every sender at once).
 *
 * @example
 * retryDelayMs(1); // 1–2 s
 * retryDelayMs(5); // 16–32 s
 */
export function retryDelayMs(failures: number, random: () => number = Math.random): number {
  const ceiling = Math.min(MAX_DELAY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, failures - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
