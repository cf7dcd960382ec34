import type { MiddlewareHandler } from 'hono';
import type { BridgeMetrics } from './metrics.js';

/**
 * Counts a route's requests by status and observes their latency (seconds) in
 * `agui_bridge_http_requests_total` and `agui_bridge_http_request_duration_seconds`, labelled with
 * the route pattern given here, never the concrete path (ids would make a series per thread). A
 * handler that streams answers with its headers as soon as the stream opens, so an SSE route's
 * latency is its time to the headers, not the stream's life.
 *
 * @example
 * app.get('/agui/threads/:threadId/events', httpMetrics(metrics, '/agui/threads/:threadId/events'), handler);
 */
export function httpMetrics(metrics: BridgeMetrics, route: string): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    await next();
    metrics.httpRequest(c.req.method, route, c.res.status, (performance.now() - started) / 1000);
  };
}
