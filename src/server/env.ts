import { z } from 'zod';
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
});

export type ServerEnv = z.output<typeof ServerEnvSchema>;

export function readServerEnv(env: NodeJS.ProcessEnv = process.env): ServerEnv {
  const parsed = ServerEnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid environment: ${problems}`);
  }
  return parsed.data;
}
