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
 * for traces; nothing loaded, registered or exported otherwise. `@opentelemetry/sdk-node` reads
 * the standard variables itself: the OTLP endpoint, headers and protocol (`http/protobuf` by
 * default, `http/json`, `grpc`), `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
 * `OTEL_TRACES_SAMPLER` (and `_ARG`), `OTEL_BSP_*`. It registers the global tracer provider, the
 * W3C trace-context propagator and an `AsyncLocalStorage` context manager; no auto-instrumentation.
 * Answers what flushes and stops it, for the shutdown.
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
 * Mastra's own spans (agent run, model call, each tool call) as OpenTelemetry spans under the
 * active one, the run's `agui.run`: `@mastra/observability` with `@mastra/otel-bridge`, which reads
 * the ambient context and writes to the provider `startTracing` registered. Loaded with tracing only.
 */
export async function mastraSpans() {
  const [{ Observability }, { OtelBridge }, { SpanType }] = await Promise.all([import('@mastra/observability'), import('@mastra/otel-bridge'), import('@mastra/core/observability')]);
  // A span per streamed chunk would outnumber the rest many times over: the model call and its steps say enough.
  const excludeSpanTypes = [SpanType.MODEL_CHUNK];
  return new Observability({ configs: { default: { serviceName: process.env.OTEL_SERVICE_NAME ?? SERVICE_NAME, bridge: new OtelBridge(), excludeSpanTypes } } });
}
