import { z } from 'zod';
import { parseApiKeys } from '../auth/api-keys.js';
import { parseDatabaseUrl } from './storage.js';

const port = z.coerce.number().int().min(0).max(65535);

/** A URL the storage can open (`parseDatabaseUrl` says why not, without repeating the URL). */
const databaseUrl = z.string().superRefine((url, ctx) => {
  try {
    parseDatabaseUrl(url);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
  }
});

/** A `redis://` or `rediss://` (TLS) URL. */
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

const httpsUrl = z.string().refine((url) => URL.canParse(url) && ['http:', 'https:'].includes(new URL(url).protocol), { message: 'must be an http(s):// URL' });

/** The standalone server's environment, validated once at start. */
export const ServerEnvSchema = z.object({
  PORT: port.default(4111),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: databaseUrl.default('file:.data/bridge.db'),
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
  AGUI_PREFIX: z.string().default('/agui'),
  /** How long an `Idempotency-Key`'s first answer is kept (ms); the bridge's default when unset. */
  IDEMPOTENCY_TTL_MS: z.coerce.number().int().min(0).max(365 * 24 * 3_600_000).optional(),
  /** HS256 secret of the tokens callers send (auth on). */
  AUTH_JWT_SECRET: optional(z.string().refine((s) => Buffer.byteLength(s) >= 32, { message: 'must be at least 32 bytes' })),
  /** JWKS endpoint of the RS256 / ES256 keys of the tokens callers send (auth on). */
  AUTH_JWKS_URL: optional(httpsUrl),
  AUTH_ISSUER: optional(z.string().min(1)),
  AUTH_AUDIENCE: optional(z.string().min(1)),
  /** The token claim that names the resource (default `sub`). */
  AUTH_RESOURCE_CLAIM: optional(z.string().min(1)),
  /** `key:resourceId` pairs for server-to-server callers (auth on). */
  AUTH_API_KEYS: optional(apiKeys),
}).refine((env) => !(env.AUTH_JWT_SECRET && env.AUTH_JWKS_URL), { message: 'set AUTH_JWT_SECRET or AUTH_JWKS_URL, not both', path: ['AUTH_JWT_SECRET'] });

export type ServerEnv = z.output<typeof ServerEnvSchema>;

export function readServerEnv(env: NodeJS.ProcessEnv = process.env): ServerEnv {
  const parsed = ServerEnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid environment: ${problems}`);
  }
  return parsed.data;
}
