import { context, isSpanContextValid, propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api';

/**
 * `{ traceparent }` of the active span, to store or send with work another process (or a later
 * run) will do; `{}` when nothing is traced (no SDK registered, or no span active).
 */
export function withTraceparent(): { traceparent?: string } {
  const carrier: { traceparent?: string } = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ? { traceparent: carrier.traceparent } : {};
}

/**
 * Runs `fn` in the trace a `traceparent` names, so that its spans join the request that sent the
 * work; without one, in the context active now.
 */
export function inTraceOf<T>(traceparent: string | undefined, fn: () => T): T {
  if (!traceparent) return fn();
  return context.with(propagation.extract(ROOT_CONTEXT, { traceparent }), fn);
}

/**
 * `trace_id` and `span_id` of the active span, for a log line written while serving a request:
 * nothing when no span is active or it is not sampled-in anywhere (no SDK). Made for pino's `mixin`.
 *
 * @example
 * const log = pino({ mixin: traceLogFields });
 */
export function traceLogFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getSpan(context.active());
  const ids = span?.spanContext();
  return ids && isSpanContextValid(ids) ? { trace_id: ids.traceId, span_id: ids.spanId } : {};
}
