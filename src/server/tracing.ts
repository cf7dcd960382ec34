import { trace, TraceFlags } from '@opentelemetry/api';

/** The service name spans carry when `OTEL_SERVICE_NAME` does not say another. */
const SERVICE_NAME = 'mastra-agui-bridge';

/**
 * Whether the environment asks for traces: an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`, or the
 * traces' own `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), and not `OTEL_SDK_DISABLED=true`.
 */
export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && env.OTEL_SDK_DISABLED !== 'true';
}

/**
 * The standalone server's OpenTelemetry SDK, started before the bridge when the environment asks
 * for traces; nothing is loaded, registered or exported otherwise. `@opentelemetry/sdk-node` reads
 * the standard variables itself (the OTLP endpoint, headers and protocol, `OTEL_SERVICE_NAME`,
 * `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`…) and registers the global tracer
 * provider, the W3C trace-context propagator and an `AsyncLocalStorage` context manager; no
 * auto-instrumentation. Answers what flushes and stops it at shutdown.
 *
 * @example
 * const stopTracing = await startTracing(process.env);
 * // … on shutdown:
 * await stopTracing?.();
 */
export async function startTracing(env: NodeJS.ProcessEnv): Promise<(() => Promise<void>) | undefined> {
  if (!tracingWanted(env)) return undefined;
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  const sdk = new NodeSDK({ ...(!env.OTEL_SERVICE_NAME && { serviceName: SERVICE_NAME }), instrumentations: [] });
  sdk.start();
  return () => sdk.shutdown();
}

/**
 * How much of Mastra's own span tree a trace holds (`MASTRA_SPANS`): `on`, the agent run, each
 * model call, tool call and workflow step; `all`, also its processors, memory reads and writes and
 * each model step; `off`, the bridge's spans only (Mastra's observability costs CPU per run even
 * for traces that are not sampled: docs/performance.md).
 */
export const MASTRA_SPAN_DETAILS = ['on', 'all', 'off'] as const;
export type MastraSpanDetail = (typeof MASTRA_SPAN_DETAILS)[number];

/**
 * Whether the span active now is sampled: Mastra's sampler, so that its spans follow the
 * decision the OpenTelemetry sampler took for the run's span (`OTEL_TRACES_SAMPLER`) instead of
 * taking one of their own. Where no span is active (a run nobody's request started), Mastra samples.
 */
export function activeSpanSampled(): boolean {
  const span = trace.getActiveSpan();
  return span === undefined || (span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0;
}

/**
 * Mastra's own spans (agent run, model and tool calls) as OpenTelemetry spans under the run's
 * `agui.run`: `@mastra/observability` with `@mastra/otel-bridge`, reading the ambient context and
 * writing to `startTracing`'s provider. Loaded with tracing only; `undefined` for `off`.
 */
export async function mastraSpans(detail: MastraSpanDetail) {
  if (detail === 'off') return undefined;
  const [{ Observability }, { OtelBridge }, { SpanType, SamplingStrategyType }] = await Promise.all([
    import('@mastra/observability'),
    import('@mastra/otel-bridge'),
    import('@mastra/core/observability'),
  ]);
  const inner = [SpanType.PROCESSOR_RUN, SpanType.MEMORY_OPERATION, SpanType.MODEL_STEP, SpanType.MODEL_INFERENCE];
  // A span per streamed chunk would outnumber the rest many times over: the model call says enough.
  const excludeSpanTypes = [SpanType.MODEL_CHUNK, ...(detail === 'on' ? inner : [])];
  return new Observability({
    configs: {
      default: {
        serviceName: process.env.OTEL_SERVICE_NAME ?? SERVICE_NAME,
        bridge: new OtelBridge(),
        excludeSpanTypes,
        sampling: { type: SamplingStrategyType.CUSTOM, sampler: activeSpanSampled },
      },
    },
  });
}
