import type { MiddlewareHandler } from 'hono';
import type { BridgeMetrics } from './metrics.js';

/**
 * Counts a route's requests (`agui_bridge_http_requests_total`) and their latency
 * (`agui_bridge_http_request_duration_seconds`) by status, labelled with the route pattern given
 * here, never the concrete path (ids would make a series per thread). A streaming handler answers
 * with its headers once the stream opens: an SSE route's latency is its time to the headers.
 */
export function httpMetrics(metrics: BridgeMetrics, route: string): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    await next();
    metrics.httpRequest(c.req.method, route, c.res.status, (performance.now() - started) / 1000);
  };
}
