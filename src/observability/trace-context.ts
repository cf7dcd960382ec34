import { context, isSpanContextValid, propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api';

/**
 * The W3C `traceparent` of the active span, to send along with work another process (or a later
 * run) will do: undefined when nothing is traced (no SDK registered, or no span active).
 *
 * @example
 * const entry = { ...message, traceparent: currentTraceparent() };
 */
export function currentTraceparent(): string | undefined {
  const carrier: { traceparent?: string } = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** `{ traceparent }` of the active span, or nothing: to spread into what is stored. */
export function withTraceparent(): { traceparent?: string } {
  const traceparent = currentTraceparent();
  return traceparent ? { traceparent } : {};
}

/**
 * Runs `fn` in the trace a `traceparent` names, so that its spans join the request that sent the
 * work; without one, in the context active now.
 *
 * @example
 * await inTraceOf(entry.traceparent, () => recover(entry));
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
