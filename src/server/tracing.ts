import { trace, TraceFlags } from '@opentelemetry/api';
import type { ConfigSelectorOptions, ObservabilityEntrypoint } from '@mastra/core/observability';
import { importPeer } from './peers.js';

/** The service name spans carry when `OTEL_SERVICE_NAME` does not say another. */
const SERVICE_NAME = 'mastra-agui-bridge';

/** What a missing peer's error says needed it: the packages of traces are optional peers, loaded only when traces are asked for. */
const TRACES = 'tracing (OTEL_EXPORTER_OTLP_ENDPOINT)';
const MASTRA_TRACES = "tracing Mastra's own spans (OTEL_EXPORTER_OTLP_ENDPOINT; MASTRA_SPANS=off goes without)";

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
  const { NodeSDK } = await importPeer('@opentelemetry/sdk-node', () => import('@opentelemetry/sdk-node'), TRACES);
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

/** Each run's decision, by the request context Mastra passes through the whole run. */
const runDecisions = new WeakMap<object, boolean>();

/**
 * Whether a run is sampled: decided at its first lookup (its start, inside the run's span) and
 * kept for the run, so that a lookup Mastra makes later, outside that span, answers the same.
 */
function runSampled(requestContext: object | undefined): boolean {
  if (!requestContext) return activeSpanSampled();
  let sampled = runDecisions.get(requestContext);
  if (sampled === undefined) runDecisions.set(requestContext, (sampled = activeSpanSampled()));
  return sampled;
}

/**
 * Mastra's own spans (agent run, model and tool calls) as OpenTelemetry spans under the run's
 * `agui.run`: `@mastra/observability` with `@mastra/otel-bridge`, reading the ambient context and
 * writing to `startTracing`'s provider. Loaded with tracing only; `undefined` for `off`.
 *
 * A run the OpenTelemetry sampler dropped gets no observability instance at all: Mastra then
 * builds nothing for it, where an instance that samples it out still makes no-op spans and
 * switches contexts at every step (about 7 % of a 200-word run's CPU, docs/performance.md). A run
 * it kept gets the instance, whose own sampler follows the same decision.
 */
export async function mastraSpans(detail: MastraSpanDetail): Promise<ObservabilityEntrypoint | undefined> {
  if (detail === 'off') return undefined;
  const [{ Observability }, { OtelBridge }, { SpanType, SamplingStrategyType }] = await Promise.all([
    importPeer('@mastra/observability', () => import('@mastra/observability'), MASTRA_TRACES),
    importPeer('@mastra/otel-bridge', () => import('@mastra/otel-bridge'), MASTRA_TRACES),
    import('@mastra/core/observability'),
  ]);
  const inner = [SpanType.PROCESSOR_RUN, SpanType.MEMORY_OPERATION, SpanType.MODEL_STEP, SpanType.MODEL_INFERENCE];
  // A span per streamed chunk would outnumber the rest many times over: the model call says enough.
  const excludeSpanTypes = [SpanType.MODEL_CHUNK, ...(detail === 'on' ? inner : [])];
  const Sampled = class extends Observability {
    override getSelectedInstance(options: ConfigSelectorOptions) {
      return runSampled(options.requestContext) ? super.getSelectedInstance(options) : undefined;
    }
  };
  return new Sampled({
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
