import { randomBytes } from 'node:crypto';
import { checkService, deleteKeys, schemaUrl, withPostgres } from '../../scripts/services.js';

// The real PostgreSQL and Redis the integration tests use, with a check that fails at once and
// says how to start the one that is down, and helpers that give each test file its own corner.

/** The test PostgreSQL (`TEST_POSTGRES_URL`): a database the tests may create schemas in. */
export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** The test Redis (`REDIS_URL`). */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

// Once per test file: vitest gives each file its own copy of this module.
let postgresChecked: Promise<void> | undefined;
let redisChecked: Promise<void> | undefined;

/**
 * Resolves once the test PostgreSQL answered `SELECT 1` (checked once per test file, within 3 s);
 * rejects with which service is down and the command that starts it.
 *
 * @example
 * beforeAll(() => requirePostgres());
 */
export function requirePostgres(): Promise<void> {
  postgresChecked ??= checkService('PostgreSQL', POSTGRES_URL);
  return postgresChecked;
}

/**
 * Resolves once the test Redis answered `PING` (checked once per test file, within 3 s); rejects
 * with which service is down and the command that starts it.
 *
 * @example
 * beforeAll(() => requireRedis());
 */
export function requireRedis(): Promise<void> {
  redisChecked ??= checkService('Redis', REDIS_URL);
  return redisChecked;
}

/** A random name part: letters and digits only, so it is safe in identifiers and key patterns. */
const random = () => randomBytes(6).toString('hex');
/** `label` as an identifier part: lower case letters, digits and `_`. */
const tag = (label: string) =>
  label
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 20);

/** A schema of its own in the test PostgreSQL. */
export interface IsolatedPostgres {
  /** The schema's name (`test_<label>_<random>`). */
  schema: string;
  /** The test PostgreSQL's URL with `?schema=<schema>`: a `DATABASE_URL` for the server. */
  url: string;
  /** Runs SQL on the test database (qualify tables with `schema`). */
  query(sql: string, values?: unknown[]): Promise<Array<Record<string, unknown>>>;
  /** Drops the schema and everything in it. */
  cleanup(): Promise<void>;
}

/**
 * Creates a schema with a random name, so test files (and tests) running at once never share
 * tables; `cleanup()` drops it with CASCADE.
 *
 * @example
 * const db = await isolatedPostgres('crash');
 * const server = await startServerProcess({ DATABASE_URL: db.url });
 * // …
 * await db.cleanup();
 */
export async function isolatedPostgres(label = 'test'): Promise<IsolatedPostgres> {
  await requirePostgres();
  const schema = `test_${tag(label)}_${random()}`;
  await withPostgres(POSTGRES_URL, (c) => c.query(`CREATE SCHEMA "${schema}"`));
  return {
    schema,
    url: schemaUrl(POSTGRES_URL, schema),
    query: (sql, values) => withPostgres(POSTGRES_URL, async (c) => (await c.query(sql, values)).rows),
    cleanup: () => withPostgres(POSTGRES_URL, async (c) => void (await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`))),
  };
}

/** A key prefix of its own in the test Redis. */
export interface IsolatedRedis {
  /** `test:<label>:<random>`; the keys to clean up are `<prefix>:*`. */
  prefix: string;
  /** The test Redis's URL. */
  url: string;
  /** Deletes every `<prefix>:*` key (SCAN + UNLINK). */
  cleanup(): Promise<void>;
}

/**
 * A random key prefix, so test files running at once never share keys; `cleanup()` deletes its
 * keys.
 *
 * @example
 * const redis = await isolatedRedisPrefix('locks');
 * const connection = await connectRedis(redis.url, redis.prefix);
 * // …
 * await redis.cleanup();
 */
export async function isolatedRedisPrefix(label = 'test'): Promise<IsolatedRedis> {
  await requireRedis();
  const prefix = `test:${tag(label)}:${random()}`;
  return {
    prefix,
    url: REDIS_URL,
    cleanup: () => deleteKeys(REDIS_URL, prefix),
  };
}
