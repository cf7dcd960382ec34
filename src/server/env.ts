import { z } from 'zod';
import { parseApiKeys } from '../auth/api-keys.js';
import { isWebhookSecret, WEBHOOK_SECRET_RULE } from '../config.js';
import { MASTRA_SPAN_DETAILS } from './tracing.js';
import { DEFAULT_DATABASE_TIMEOUT_MS, parseDatabaseUrl } from './storage.js';

const port = z.coerce.number().int().min(0).max(65535);

/** A URL the storage can open (`parseDatabaseUrl` says why not, without repeating the URL). */
const databaseUrl = z.string().superRefine((url, ctx) => {
  try {
    parseDatabaseUrl(url);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
  }
});

const redisUrl = z.string().refine((url) => URL.canParse(url) && ['redis:', 'rediss:'].includes(new URL(url).protocol), {
  message: 'must be a redis://host:6379 or rediss://host:6380 URL',
});

/** An empty variable counts as unset (`AUTH_JWT_SECRET= npm start`). */
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

/** `key:resourceId` pairs, comma-separated. */
const apiKeys = z.string().transform((text, ctx) => {
  try {
    return parseApiKeys(text);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
    return z.NEVER;
  }
});

/** A cap: a whole number, `0` for none. */
const cap = (max: number, fallback: number) => z.coerce.number().int().min(0).max(max).default(fallback);
const ms = (min: number, fallback: number) => z.coerce.number().int().min(min).max(3_600_000).default(fallback);
const list = z
  .string()
  .optional()
  .transform((text) =>
    (text ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean),
  );

/** pino's levels; `silent` logs nothing. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const httpsUrl = z.string().refine((url) => URL.canParse(url) && ['http:', 'https:'].includes(new URL(url).protocol), { message: 'must be an http(s):// URL' });

/** The standalone server's environment, validated once at start (each variable's help: `ENV_HELP`). */
export const ServerEnvSchema = z
  .object({
    PORT: port.default(4111),
    HOST: z.string().min(1).default('127.0.0.1'),
    DATABASE_URL: databaseUrl.default('file:.data/bridge.db'),
    /** PostgreSQL: how long opening a connection, and each query, may take before it fails (and its request is 503). */
    DATABASE_TIMEOUT_MS: ms(100, DEFAULT_DATABASE_TIMEOUT_MS),
    /** Redis for several processes sharing threads; none: everything stays in this process. */
    REDIS_URL: redisUrl.optional(),
    /** What every Redis key and channel of this deployment starts with: processes that share threads share it. */
    REDIS_PREFIX: z
      .string()
      .regex(/^[\w.:-]{1,100}$/, 'must be 1–100 letters, digits, or _ . : -')
      .default('mastra-agui-bridge'),
    MODEL: z.string().min(1).optional(),
    DEMO_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(20),
    SLOW_TASK_MS: z.coerce.number().int().min(0).max(3_600_000).default(2000),
    /** A file the scripted model appends one JSON line to per call (`{"lastRole","input"}`): how tests count model calls. */
    DEMO_CALL_LOG: optional(z.string().min(1)),
    AGUI_PREFIX: z.string().default('/agui'),
    /** How long an `Idempotency-Key`'s first answer is kept (ms); the bridge's default when unset. */
    IDEMPOTENCY_TTL_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(365 * 24 * 3_600_000)
      .optional(),
    /** HS256 secret of the tokens callers send (auth on). */
    AUTH_JWT_SECRET: optional(z.string().refine((s) => Buffer.byteLength(s) >= 32, { message: 'must be at least 32 bytes' })),
    /** JWKS endpoint of the RS256 / ES256 keys of the tokens callers send (auth on). */
    AUTH_JWKS_URL: optional(httpsUrl),
    AUTH_ISSUER: optional(z.string().min(1)),
    AUTH_AUDIENCE: optional(z.string().min(1)),
    AUTH_RESOURCE_CLAIM: optional(z.string().min(1)),
    AUTH_API_KEYS: optional(apiKeys),
    METRICS_TOKEN: optional(z.string().min(1)),
    /** The least level logged (pino's levels); unset: `info` (see `logLevel`). */
    LOG_LEVEL: optional(z.enum(LOG_LEVELS)),
    /** `json` or `pretty`; unset: `pretty` on a terminal, `json` anywhere else (see `logFormat`). */
    LOG_FORMAT: optional(z.enum(['json', 'pretty'])),
    RATE_LIMIT_PER_MINUTE: cap(1_000_000, 300),
    MAX_STREAMS_PER_RESOURCE: cap(1_000_000, 50),
    MAX_STREAMS: cap(10_000_000, 10_000),
    MAX_RUNS_PER_RESOURCE: cap(1_000_000, 10),
    /** How long a client may take to send its request headers, and its whole request (not the response: streams are not cut). */
    HEADERS_TIMEOUT_MS: ms(1000, 10_000),
    REQUEST_TIMEOUT_MS: ms(1000, 30_000),
    KEEP_ALIVE_TIMEOUT_MS: ms(100, 5000),
    /**
     * On SIGTERM, how long runs in flight may take to finish (new runs and steering get 503
     * meanwhile) before the rest is cut: under Kubernetes' 30 s grace by default; `0` cuts at once.
     */
    SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(3_600_000).default(25_000),
    /** How often Mastra's scheduler looks for schedules due (docs/schedules.md). */
    SCHEDULER_TICK_MS: ms(100, 1000),
    /** The shortest time between two fires of a schedule, in seconds. */
    SCHEDULE_MIN_INTERVAL_S: z.coerce
      .number()
      .int()
      .min(1)
      .max(365 * 24 * 3600)
      .default(60),
    /** How many schedules one resource may hold. */
    MAX_SCHEDULES_PER_RESOURCE: z.coerce.number().int().min(1).max(100_000).default(50),
    /** Host names the server answers to besides loopback's (DNS rebinding; see docs/security.md). */
    ALLOWED_HOSTS: list,
    /** Hosts whose http(s) URLs input messages may carry (the server downloads them). */
    ALLOWED_URL_HOSTS: list,
    CORS_ORIGINS: list,
    /** Turns traces on: the OTLP collector (`@opentelemetry/sdk-node` reads it and the other `OTEL_*` variables itself). */
    OTEL_EXPORTER_OTLP_ENDPOINT: optional(httpsUrl),
    MASTRA_SPANS: z.enum(MASTRA_SPAN_DETAILS).default('on'),
    WEBHOOK_URLS: list.pipe(z.array(httpsUrl)),
    WEBHOOK_SECRET: optional(z.string().refine(isWebhookSecret, { message: WEBHOOK_SECRET_RULE })),
  })
  .refine((env) => !(env.AUTH_JWT_SECRET && env.AUTH_JWKS_URL), { message: 'set AUTH_JWT_SECRET or AUTH_JWKS_URL, not both', path: ['AUTH_JWT_SECRET'] })
  .refine((env) => env.WEBHOOK_URLS.length > 0 === (env.WEBHOOK_SECRET !== undefined), {
    message: 'set WEBHOOK_URLS and WEBHOOK_SECRET together',
    path: ['WEBHOOK_SECRET'],
  });

export type ServerEnv = z.output<typeof ServerEnvSchema>;

/** The level the server logs at: `LOG_LEVEL`, else `info`. */
export const logLevel = (env: Pick<ServerEnv, 'LOG_LEVEL'>): (typeof LOG_LEVELS)[number] => env.LOG_LEVEL ?? 'info';

export function readServerEnv(env: NodeJS.ProcessEnv = process.env): ServerEnv {
  const parsed = ServerEnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid environment: ${problems}`);
  }
  return parsed.data;
}
