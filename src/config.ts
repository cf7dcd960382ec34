import type { TracerProvider } from '@opentelemetry/api';
import type { Context } from 'hono';
import type { cors } from 'hono/cors';
import type { ContainerModule } from 'inversify';
import { z } from 'zod';
import { BridgeConfigError } from './errors.js';

export { consoleLogger, redactingLogger, type BridgeLogger } from './logger.js';
import { consoleLogger, redactingLogger, type BridgeLogger } from './logger.js';

/** Decides who the caller is. Return the resource id, or `null`/`undefined` (or throw) to answer 401. */
export type ResolveResourceId = (c: Context, claimed: string | undefined) => string | null | undefined | Promise<string | null | undefined>;

export type CorsOptions = Parameters<typeof cors>[0];

/**
 * Shared implementations of the container's ports, loaded in place of the in-process ones:
 * what `createScaleOut()` answers has them (Redis), and so may a deployment of your own.
 */
export interface SharedBindings {
  /** The ports on the shared stores, which `createBridge({ scaleOut })` loads into its container. */
  readonly bindings: ContainerModule;
}

/** A `ContainerModule`, by shape: a host app may bring its own copy of inversify. */
const isModule = (v: unknown): v is ContainerModule => !!v && typeof v === 'object' && typeof (v as { load?: unknown }).load === 'function';

/** What a webhook secret must look like, for the error that refuses one. */
export const WEBHOOK_SECRET_RULE = 'must be "whsec_" followed by the base64 of 24 to 64 random bytes (e.g. whsec_$(openssl rand -base64 32))';

/** A Standard Webhooks secret: `whsec_` and the base64 of 24 to 64 bytes (what `standardwebhooks` signs with). */
export function isWebhookSecret(secret: string): boolean {
  const base64 = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(secret)?.[1];
  if (!base64) return false;
  const bytes = Buffer.from(base64, 'base64').length;
  return bytes >= 24 && bytes <= 64;
}

const fn = <T>(name: string) => z.custom<T>((v) => typeof v === 'function', { message: `${name} must be a function` });
const positiveInt = (max: number) => z.number().int().positive().max(max);

const LoggerSchema = z.custom<BridgeLogger>(
  (v) => !!v && typeof v === 'object' && ['debug', 'info', 'warn', 'error'].every((k) => typeof (v as Record<string, unknown>)[k] === 'function'),
  { message: 'logger must have debug, info, warn and error functions' },
);

/** The bridge's configuration; every field is optional and defaults are resolved once, here. */
export const BridgeConfigSchema = z
  .object({
    prefix: z
      .string()
      .regex(/^\/([\w.~-]+(\/[\w.~-]+)*)?$/, 'prefix must start with "/" and have no trailing "/" (e.g. "/agui", or "/" for the root)')
      // Routes are joined as prefix + path: the root is the empty prefix.
      .transform((prefix) => (prefix === '/' ? '' : prefix))
      .default('/agui'),
    defaultAgentId: z.string().min(1).optional(),
    resolveResourceId: fn<ResolveResourceId>('resolveResourceId').optional(),
    frontendToolMode: z.enum(['proxy', 'return']).default('proxy'),
    frontendToolTimeoutMs: positiveInt(24 * 3600 * 1000).default(5 * 60 * 1000),
    maxBodyBytes: positiveInt(1024 ** 3).default(1024 * 1024),
    heartbeatMs: positiveInt(3600 * 1000).default(15_000),
    replayBufferSize: positiveInt(1_000_000).default(1000),
    /** Bytes a slow SSE client may have queued before the bridge cuts it off (it can resume with Last-Event-ID). */
    maxClientQueueBytes: positiveInt(1024 ** 3).default(1024 * 1024),
    /** How long a thread's Mastra subscription outlives its last SSE client, so a reconnect can resume. */
    subscriptionLingerMs: z.number().int().min(0).max(3600 * 1000).default(5000),
    /** The `retry:` hint sent to EventSource clients, in milliseconds. */
    retryMs: positiveInt(3600 * 1000).default(2000),
    /** How long a `/run` on a thread with a run streaming waits for its turn before `409`. */
    threadBusyWaitMs: z.number().int().min(0).max(3600 * 1000).default(30_000),
    /** How long the answer to a request with an `Idempotency-Key` is kept for its retries (0: not kept). */
    idempotencyTtlMs: z.number().int().min(0).max(365 * 24 * 3600 * 1000).default(24 * 3600 * 1000),
    /**
     * Hosts whose `http(s)` URLs may appear in input messages' image/file parts, which the server
     * then downloads (Mastra fetches every part URL the model does not take itself). Exact host
     * names, or `*.example.com` for any subdomain of `example.com`; ports are not matched. Default
     * `[]`: every remote URL is refused with `400 INVALID_INPUT` (a caller could otherwise make the
     * server request internal addresses); `data:` URLs and base64 are always accepted.
     *
     * @example
     * createBridge({ allowedUrlHosts: ['cdn.example.com', '*.images.example.com'] });
     */
    allowedUrlHosts: z
      .array(z.string().regex(/^(\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$|^\[[0-9A-Fa-f:.]+\]$/, 'must be a host name, "*.example.com" or a bracketed IPv6 address'))
      .default([]),
    /**
     * Caps per resource (the caller), each answered `429 RATE_LIMITED` with `Retry-After` when
     * reached; none by default. `requestsPerMinute` counts `/run` and the steering routes (shared by
     * all processes with `scaleOut`); the stream and run caps are per process.
     *
     * @example
     * createBridge({ limits: { requestsPerMinute: 300, streamsPerResource: 50, streams: 10_000, runsPerResource: 10 } });
     */
    limits: z
      .object({
        requestsPerMinute: positiveInt(1_000_000).optional(),
        /** Open event streams (`GET …/events`) of one resource. */
        streamsPerResource: positiveInt(1_000_000).optional(),
        /** Open event streams of every resource together. */
        streams: positiveInt(10_000_000).optional(),
        /** `/run`s streaming at once for one resource. */
        runsPerResource: positiveInt(1_000_000).optional(),
      })
      .strict()
      .default({}),
    /**
     * Standard Webhooks on every run's end (`run.finished`, `run.interrupted`, `run.failed`,
     * `run.cancelled`), POSTed to each URL from a durable outbox in Mastra's storage: at least once,
     * one `webhook-id` per event on every attempt, retried with backoff for about a day. See
     * docs/operations.md "Webhooks".
     *
     * @example
     * createBridge({ webhooks: { urls: ['https://api.example.com/hooks/agent'], secret: process.env.WEBHOOK_SECRET! } });
     */
    webhooks: z
      .object({
        urls: z.array(z.url({ protocol: /^https?$/, error: 'each webhook URL must be an http(s) URL' })).min(1, 'webhooks.urls needs at least one URL'),
        /** A Standard Webhooks secret: `whsec_` and the base64 of the key (24 to 64 bytes). */
        secret: z.string().refine(isWebhookSecret, `the webhook secret ${WEBHOOK_SECRET_RULE}`),
      })
      .strict()
      .optional(),
    /**
     * Where the bridge's spans go (each request's, each run's `agui.run`); default the global
     * provider, a no-op until the host registers an OpenTelemetry SDK. The bridge never registers one.
     *
     * @example
     * createBridge({ tracerProvider: new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] }) });
     */
    tracerProvider: z.custom<TracerProvider>((v) => !!v && typeof v === 'object' && typeof (v as { getTracer?: unknown }).getTracer === 'function', { message: 'tracerProvider must be an OpenTelemetry TracerProvider' }).optional(),
    cors: z.custom<CorsOptions>((v) => v === undefined || (typeof v === 'object' && v !== null)).optional(),
    logger: LoggerSchema.optional(),
    /** Several bridge processes on one Redis (`createScaleOut`); without it, everything lives in this process. */
    scaleOut: z
      .custom<SharedBindings>((v) => !!v && typeof v === 'object' && isModule((v as { bindings?: unknown }).bindings), { message: 'scaleOut must be what createScaleOut() answers' })
      .optional(),
    /**
     * Container modules loaded after the bridge's own bindings: rebind a port (`TOKENS.EventLogs`,
     * `TOKENS.ToolProxy`, …) to an implementation of your own. See docs/architecture.md.
     *
     * @example
     * createBridge({ modules: [new ContainerModule(({ rebind }) => rebind(TOKENS.EventLogs).to(NatsEventLogs))] });
     */
    modules: z.array(z.custom<ContainerModule>(isModule, { message: 'each module must be an inversify ContainerModule' })).default([]),
  })
  .strict();

export type BridgeConfig = z.input<typeof BridgeConfigSchema>;
export type ResolvedConfig = Omit<z.output<typeof BridgeConfigSchema>, 'logger'> & { logger: BridgeLogger };

/** Validates a config and fills in the defaults; throws `BridgeConfigError` with every problem listed. */
export function resolveConfig(config: BridgeConfig = {}): ResolvedConfig {
  const parsed = BridgeConfigSchema.safeParse(config);
  if (!parsed.success) {
    throw new BridgeConfigError(parsed.error.issues.map((i) => ({ path: [...i.path, ...('keys' in i ? i.keys : [])].join('.'), message: i.message })));
  }
  return { ...parsed.data, logger: redactingLogger(parsed.data.logger ?? consoleLogger) };
}
