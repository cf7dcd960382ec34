import { context, propagation, SpanKind, SpanStatusCode, trace, type TracerProvider } from '@opentelemetry/api';
import type { MiddlewareHandler } from 'hono';
import { TRACER_NAME } from './run-tracker.js';

/** Reads a header of a Hono request for the propagator (`traceparent`, `tracestate`). */
const headerGetter = {
  keys: (carrier: { header(name: string): string | undefined }) => ['traceparent', 'tracestate'].filter((name) => carrier.header(name) !== undefined),
  get: (carrier: { header(name: string): string | undefined }, key: string) => carrier.header(key),
};

/**
 * Each request's server span (`POST /agui/run`), continuing the caller's W3C `traceparent`, and
 * active while the handler runs: the run it starts and every log line written meanwhile are in
 * it. It names the route pattern given here and the path, never the query string (the events
 * stream's `access_token` may be there) nor any header. For a stream it ends once the stream has
 * opened; the run's own span goes on. A no-op until a tracer provider is registered.
 */
export function serverSpan(route: string, provider?: TracerProvider): MiddlewareHandler {
  const tracer = (provider ?? trace.getTracerProvider()).getTracer(TRACER_NAME);
  return async (c, next) => {
    const parent = propagation.extract(context.active(), c.req, headerGetter);
    const attributes = { 'http.request.method': c.req.method, 'http.route': route, 'url.path': c.req.path };
    await tracer.startActiveSpan(`${c.req.method} ${route}`, { kind: SpanKind.SERVER, attributes }, parent, async (span) => {
      try {
        await next();
        span.setAttribute('http.response.status_code', c.res.status);
        if (c.res.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
        throw error;
      } finally {
        span.end();
      }
    });
  };
}
