import { createHash, timingSafeEqual } from 'node:crypto';
import type { Hono } from 'hono';
import { bearerIn } from '../auth/credentials.js';
import type { BridgeMetrics } from '../observability/metrics.js';

/**
 * `GET /metrics` at the server root, in the Prometheus text format. Open unless `token` is set;
 * then it wants `Authorization: Bearer <token>` (compared in constant time), else `401`.
 */
export function serveMetrics(app: Hono, metrics: BridgeMetrics, token?: string): void {
  app.get('/metrics', async (c) => {
    if (token !== undefined && !bearerMatches(c.req.header('authorization'), token)) {
      return c.json({ error: 'Missing or invalid metrics token', code: 'UNAUTHORIZED' }, 401, { 'WWW-Authenticate': 'Bearer realm="metrics"' });
    }
    return c.body(await metrics.text(), 200, { 'Content-Type': metrics.contentType, 'Cache-Control': 'no-store' });
  });
}

/**
 * Whether the header carries exactly `token` as a bearer token. Both sides are hashed first:
 * `timingSafeEqual` wants equal lengths, and comparing digests keeps the token's length secret too.
 *
 * @example
 * bearerMatches('Bearer s3cret', 's3cret'); // true
 */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const given = bearerIn(header);
  const same = timingSafeEqual(digest(given ?? ''), digest(token));
  return given !== undefined && same;
}

const digest = (text: string) => createHash('sha256').update(text).digest();
