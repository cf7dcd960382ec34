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

/**
 * Checks a `BridgeConfig` and resolves its defaults, once. Each option is documented on
 * `BridgeConfig` (below), where an editor shows it.
 */
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
    maxClientQueueBytes: positiveInt(1024 ** 3).default(1024 * 1024),
    subscriptionLingerMs: z
      .number()
      .int()
      .min(0)
      .max(3600 * 1000)
      .default(5000),
    retryMs: positiveInt(3600 * 1000).default(2000),
    threadBusyWaitMs: z
      .number()
      .int()
      .min(0)
      .max(3600 * 1000)
      .default(30_000),
    idempotencyTtlMs: z
      .number()
      .int()
      .min(0)
      .max(365 * 24 * 3600 * 1000)
      .default(24 * 3600 * 1000),
    allowedUrlHosts: z
      .array(
        z
          .string()
          .regex(/^(\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$|^\[[0-9A-Fa-f:.]+\]$/, 'must be a host name, "*.example.com" or a bracketed IPv6 address'),
      )
      .default([]),
    schedules: z
      .object({
        minIntervalSeconds: positiveInt(365 * 24 * 3600).default(60),
        maxPerResource: positiveInt(100_000).default(50),
      })
      .strict()
      .default({ minIntervalSeconds: 60, maxPerResource: 50 }),
    limits: z
      .object({
        requestsPerMinute: positiveInt(1_000_000).optional(),
        streamsPerResource: positiveInt(1_000_000).optional(),
        streams: positiveInt(10_000_000).optional(),
        runsPerResource: positiveInt(1_000_000).optional(),
      })
      .strict()
      .default({}),
    webhooks: z
      .object({
        urls: z.array(z.url({ protocol: /^https?$/, error: 'each webhook URL must be an http(s) URL' })).min(1, 'webhooks.urls needs at least one URL'),
        secret: z.string().refine(isWebhookSecret, `the webhook secret ${WEBHOOK_SECRET_RULE}`),
      })
      .strict()
      .optional(),
    tracerProvider: z
      .custom<TracerProvider>((v) => !!v && typeof v === 'object' && typeof (v as { getTracer?: unknown }).getTracer === 'function', {
        message: 'tracerProvider must be an OpenTelemetry TracerProvider',
      })
      .optional(),
    cors: z.custom<CorsOptions>((v) => v === undefined || (typeof v === 'object' && v !== null)).optional(),
    logger: LoggerSchema.optional(),
    scaleOut: z
      .custom<SharedBindings>((v) => !!v && typeof v === 'object' && isModule((v as { bindings?: unknown }).bindings), {
        message: 'scaleOut must be what createScaleOut() answers',
      })
      .optional(),
    modules: z.array(z.custom<ContainerModule>(isModule, { message: 'each module must be an inversify ContainerModule' })).default([]),
  })
  .strict();

/**
 * The options of `createBridge`; every one is optional. Checked by `BridgeConfigSchema` (a bad value
 * throws `BridgeConfigError` listing every problem), which reads exactly these (a type test says so).
 * Written out here so that an editor shows each option's documentation. See docs/configuration.md.
 *
 * @example
 * createBridge({ prefix: '/agui', defaultAgentId: 'support', limits: { requestsPerMinute: 300 } });
 */
export interface BridgeConfig {
  /**
   * Path prefix of every route: starts with `/`, no trailing `/`; `'/'` serves them at the root.
   * Default `'/agui'`.
   * @example createBridge({ prefix: '/v1/agui' }); // POST /v1/agui/run
   */
  prefix?: string;
  /**
   * The agent for requests that name none (`forwardedProps.agentId`, `agentId`); default the first
   * registered agent.
   * @example createBridge({ defaultAgentId: 'support' });
   */
  defaultAgentId?: string;
  /**
   * Decides who the caller is (the resource its threads belong to); falsy or throwing answers
   * `401`. Default: trust the `resourceId` the request claims, else `'default'`. Ready-made:
   * `jwtAuth`, `apiKeyAuth`, `bearerAuth`, `mastraAuthResource`.
   * @example createBridge({ resolveResourceId: jwtAuth({ secret: process.env.AUTH_JWT_SECRET! }) });
   */
  resolveResourceId?: ResolveResourceId;
  /**
   * What a run does with a frontend tool call: `'proxy'` (default) waits for its result on the same
   * run; `'return'` ends the run and the next `/run` carries the result. A run may choose in
   * `forwardedProps.frontendToolMode`.
   * @example createBridge({ frontendToolMode: 'return' });
   */
  frontendToolMode?: 'proxy' | 'return';
  /**
   * How long a proxied frontend tool call waits for its result, in ms (default 300 000, at most 24 h).
   * @example createBridge({ frontendToolTimeoutMs: 60_000 });
   */
  frontendToolTimeoutMs?: number;
  /**
   * Request body limit in bytes, `413` above it (default 1 MiB, at most 1 GiB).
   * @example createBridge({ maxBodyBytes: 4 * 1024 * 1024 });
   */
  maxBodyBytes?: number;
  /**
   * Thread event streams: a `: keep-alive` comment after this many ms without an event (default
   * 15 000). Keep it below your proxies' idle timeouts.
   * @example createBridge({ heartbeatMs: 10_000 });
   */
  heartbeatMs?: number;
  /**
   * Thread event streams: events kept per thread for `Last-Event-ID` resumption (default 1000); an
   * older id gets a snapshot run instead.
   * @example createBridge({ replayBufferSize: 5000 });
   */
  replayBufferSize?: number;
  /**
   * Thread event streams: unread bytes a slow client may have queued before the bridge cuts it off
   * (default 1 MiB); an `EventSource` reconnects by itself with `Last-Event-ID`.
   * @example createBridge({ maxClientQueueBytes: 4 * 1024 * 1024 });
   */
  maxClientQueueBytes?: number;
  /**
   * Thread event streams: how long a thread's Mastra subscription outlives its last client, in ms,
   * so that a reconnect can resume (default 5000; `0` releases it at once).
   * @example createBridge({ subscriptionLingerMs: 30_000 });
   */
  subscriptionLingerMs?: number;
  /**
   * Thread event streams: the `retry:` hint, how long an `EventSource` waits before it reconnects,
   * in ms (default 2000).
   * @example createBridge({ retryMs: 1000 });
   */
  retryMs?: number;
  /**
   * One run per thread: how long a `/run` on a thread with a run streaming waits for its turn before
   * `409 CONFLICT`, in ms (default 30 000).
   * @example createBridge({ threadBusyWaitMs: 0 }); // refuse at once
   */
  threadBusyWaitMs?: number;
  /**
   * How long the first answer to a steering request sent with an `Idempotency-Key` is kept for its
   * retries, in ms (default 24 h; `0` keeps none).
   * @example createBridge({ idempotencyTtlMs: 60 * 60 * 1000 });
   */
  idempotencyTtlMs?: number;
  /**
   * Hosts whose `http(s)` URLs may appear in input messages' image/file parts, which the server
   * then downloads (Mastra fetches every part URL the model does not take itself). Exact host
   * names, or `*.example.com` for any subdomain of `example.com`; ports are not matched. Default
   * `[]`: every remote URL is refused with `400 INVALID_INPUT` (a caller could otherwise make the
   * server request internal addresses); `data:` URLs and base64 are always accepted.
   * @example createBridge({ allowedUrlHosts: ['cdn.example.com', '*.images.example.com'] });
   */
  allowedUrlHosts?: string[];
  /**
   * Schedules on threads (docs/schedules.md): a cron may fire at most once every
   * `minIntervalSeconds` (default 60), and a resource holds at most `maxPerResource` schedules
   * (default 50; more is `409 LIMIT_REACHED`).
   * @example createBridge({ schedules: { minIntervalSeconds: 300, maxPerResource: 10 } });
   */
  schedules?: {
    /** The shortest time between two fires of a schedule, in seconds. */
    minIntervalSeconds?: number;
    /** How many schedules one resource may hold. */
    maxPerResource?: number;
  };
  /**
   * Caps per resource (the caller), each answered `429 RATE_LIMITED` with `Retry-After` when
   * reached; none by default. `requestsPerMinute` counts `/run` and the steering routes (shared by
   * all processes with `scaleOut`); the stream and run caps are per process.
   * @example createBridge({ limits: { requestsPerMinute: 300, streamsPerResource: 50, streams: 10_000, runsPerResource: 10 } });
   */
  limits?: {
    /** `/run` and steering requests per minute of one resource. */
    requestsPerMinute?: number;
    /** Open event streams (`GET …/events`) of one resource. */
    streamsPerResource?: number;
    /** Open event streams of every resource together. */
    streams?: number;
    /** `/run`s streaming at once for one resource. */
    runsPerResource?: number;
  };
  /**
   * Standard Webhooks on every run's end (`run.finished`, `run.interrupted`, `run.failed`,
   * `run.cancelled`), POSTed to each URL from a durable outbox in Mastra's storage: at least once,
   * one `webhook-id` per event on every attempt, retried with backoff for about a day. See
   * docs/operations.md "Webhooks".
   * @example createBridge({ webhooks: { urls: ['https://api.example.com/hooks/agent'], secret: process.env.WEBHOOK_SECRET! } });
   */
  webhooks?: {
    /** Where each event is POSTed: `http(s)` URLs, at least one. */
    urls: string[];
    /** A Standard Webhooks secret: `whsec_` and the base64 of the key (24 to 64 bytes). */
    secret: string;
  };
  /**
   * Where the bridge's spans go (each request's, each run's `agui.run`); default the global
   * provider, a no-op until the host registers an OpenTelemetry SDK. The bridge never registers one.
   * @example createBridge({ tracerProvider: new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] }) });
   */
  tracerProvider?: TracerProvider;
  /**
   * CORS for the app `bridge.app()` builds (`hono/cors` options); off by default. In a Mastra
   * server, use Mastra's `server.cors` instead.
   * @example createBridge({ cors: { origin: 'https://app.example.com' } });
   */
  cors?: CorsOptions;
  /**
   * Where errors (with stacks) and the request log go; default `consoleLogger` (warnings and errors
   * only). `pinoLogger(pino())` writes structured JSON lines.
   * @example createBridge({ logger: pinoLogger(pino()) });
   */
  logger?: BridgeLogger;
  /**
   * Several bridge processes on one Redis: what `createScaleOut()` answers (give its `pubsub` to
   * your Mastra too). Without it, everything lives in this process.
   * @example const scaleOut = await createScaleOut({ url: process.env.REDIS_URL! }); createBridge({ scaleOut });
   */
  scaleOut?: SharedBindings;
  /**
   * Container modules loaded after the bridge's own bindings: rebind a port (`TOKENS.EventLogs`,
   * `TOKENS.ToolProxy`, …) to an implementation of your own. See docs/architecture.md.
   * @example createBridge({ modules: [new ContainerModule(({ rebind }) => rebind(TOKENS.EventLogs).to(NatsEventLogs))] });
   */
  modules?: ContainerModule[];
}
export type ResolvedConfig = Omit<z.output<typeof BridgeConfigSchema>, 'logger'> & { logger: BridgeLogger };

/** Validates a config and fills in the defaults; throws `BridgeConfigError` with every problem listed. */
export function resolveConfig(config: BridgeConfig = {}): ResolvedConfig {
  const parsed = BridgeConfigSchema.safeParse(config);
  if (!parsed.success) {
    throw new BridgeConfigError(parsed.error.issues.map((i) => ({ path: [...i.path, ...('keys' in i ? i.keys : [])].join('.'), message: i.message })));
  }
  return { ...parsed.data, logger: redactingLogger(parsed.data.logger ?? consoleLogger) };
}
