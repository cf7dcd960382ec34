import type { ErrorDetail } from '../errors.js';
import { computeNextFireAt, validateCron } from '../mastra/index.js';

/** How many fires ahead a cron is looked at for its shortest gap: enough for the irregular ones (`0,1 * * * *`). */
const FIRES_LOOKED_AT = 60;

/**
 * What is wrong with a schedule's timing, as `400` details naming the field: a cron of 5 fields (6
 * with seconds) Mastra can run, an IANA timezone, and no two fires closer than `minIntervalSeconds`.
 *
 * @example
 * timingProblems('* * * * * *', undefined, 60); // [{ path: 'cron', message: 'fires every 1 s: at most once every 60 s' }]
 */
export function timingProblems(cron: string, timezone: string | undefined, minIntervalSeconds: number): ErrorDetail[] {
  if (timezone !== undefined && !isTimeZone(timezone)) return [{ path: 'timezone', message: `${timezone} is not an IANA time zone` }];
  const fields = cron.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) return [{ path: 'cron', message: `has ${fields} fields: 5 (minute hour day month weekday), or 6 with seconds first` }];
  try {
    validateCron(cron, timezone);
  } catch (error) {
    return [{ path: 'cron', message: error instanceof Error ? error.message : 'is not a cron expression' }];
  }
  const gap = shortestGapSeconds(cron, timezone);
  return gap < minIntervalSeconds ? [{ path: 'cron', message: `fires every ${gap} s: at most once every ${minIntervalSeconds} s` }] : [];
}

/** The shortest time between two of the cron's next fires, in seconds. */
function shortestGapSeconds(cron: string, timezone: string | undefined): number {
  let shortest = Infinity;
  let at = computeNextFireAt(cron, { timezone });
  for (let i = 0; i < FIRES_LOOKED_AT; i++) {
    const next = computeNextFireAt(cron, { timezone, after: at });
    shortest = Math.min(shortest, (next - at) / 1000);
    at = next;
  }
  return Math.round(shortest);
}

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
