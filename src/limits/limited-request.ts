import type { Context } from 'hono';

// Whether the request's route counts against the caller's requests per minute: set by the bridge
// from the route table (`RouteDef.limited`), read where the caller becomes known (`ResourceResolver`).
const LIMITED = 'rateLimitedRoute';

/** Marks the request as one of the rate-limited routes. */
export function markRateLimited(c: Context): void {
  c.set(LIMITED, true);
}

/** Whether `markRateLimited` was called for this request. */
export function isRateLimited(c: Context): boolean {
  return c.get(LIMITED) === true;
}
