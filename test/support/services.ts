import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { createClient } from 'redis';

// The real PostgreSQL and Redis the integration tests use, with a check that fails at once and
// says how to start the one that is down, and helpers that give each test file its own corner.

/** The test PostgreSQL (`TEST_POSTGRES_URL`): a database the tests may create schemas in. */
export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** The test Redis (`REDIS_URL`). */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** What starts each service on the CI image (`.ci/run` runs the same commands). */
export const START_COMMANDS = {
  PostgreSQL: 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start',
  Redis: 'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log',
} as const;

/** How long a reachability check may take: a service that is up answers in milliseconds. */
const CHECK_TIMEOUT_MS = 3000;

/** The part of `pg`'s client the helpers use (the repository has no `@types/pg`). */
interface PgClient {
  connect(): Promise<void>;
  query(sql: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): void;
}
interface PgModule {
  Client: new (config: { connectionString: string; connectionTimeoutMillis: number }) => PgClient;
}
/** `pg` as `@mastra/pg` itself loads it (a dependency of it, hoisted to the root). */
const pg = createRequire(import.meta.url)('pg') as PgModule;

/** The URL without its password, fit for an error message. */
function redact(url: string): string {
  if (!URL.canParse(url)) return url.replace(/:[^:@/]*@/, ':***@');
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.href;
}

/** A socket error's own words: connecting to `localhost` fails with an AggregateError that has none. */
function reason(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return error.errors.map(reason).join(', ');
  const { message, code } = error as { message?: string; code?: string };
  return message || code || String(error);
}

function withTimeout<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** Runs `work` on a fresh connection to the test PostgreSQL, then closes it. */
async function withPostgres<T>(work: (client: PgClient) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: CHECK_TIMEOUT_MS });
  // A connection the server drops emits 'error'; unheard, it would crash the test worker.
  client.on('error', () => {});
  try {
    await client.connect();
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** A client of the test Redis that gives up at the first failed connect instead of retrying. */
const redisClient = () => createClient({ url: REDIS_URL, socket: { connectTimeout: CHECK_TIMEOUT_MS, reconnectStrategy: false } });

/** Runs `work` on a fresh connection to the test Redis, then closes it. */
async function withRedis<T>(work: (client: ReturnType<typeof redisClient>) => Promise<T>): Promise<T> {
  const client = redisClient();
  client.on('error', () => {});
  try {
    await client.connect();
    return await work(client);
  } finally {
    if (client.isOpen) client.destroy();
  }
}

/**
 * The error a test file fails with when a service is down: which one, where, and how to start it.
 * A PostgreSQL that answered with an error (it has a SQLSTATE `code`) is up: starting it would not
 * help, so the error says what it answered instead (a missing database, a refused login).
 */
function down(service: keyof typeof START_COMMANDS, url: string, error: unknown): Error {
  const { code } = error as { code?: unknown };
  if (service === 'PostgreSQL' && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
    const fix = code === '3D000' ? ` Create it with: createdb -h 127.0.0.1 -U postgres ${new URL(url).pathname.slice(1)}` : '';
    return new Error(`PostgreSQL at ${redact(url)} refused the test connection: ${reason(error)} (SQLSTATE ${code}).${fix}`);
  }
  return new Error(`${service} is not reachable at ${redact(url)} (${reason(error)}). Start it with:\n  ${START_COMMANDS[service]}`);
}

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
  postgresChecked ??= withTimeout(withPostgres((c) => c.query('SELECT 1')), 'PostgreSQL').then(
    () => undefined,
    (error: unknown) => Promise.reject(down('PostgreSQL', POSTGRES_URL, error)),
  );
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
  redisChecked ??= withTimeout(withRedis((c) => c.ping()), 'Redis').then(
    () => undefined,
    (error: unknown) => Promise.reject(down('Redis', REDIS_URL, error)),
  );
  return redisChecked;
}

/** A random name part: letters and digits only, so it is safe in identifiers and key patterns. */
const random = () => randomBytes(6).toString('hex');
/** `label` as an identifier part: lower case letters, digits and `_`. */
const tag = (label: string) => label.toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, 20);

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
  await withPostgres((c) => c.query(`CREATE SCHEMA "${schema}"`));
  return {
    schema,
    url: `${POSTGRES_URL}${POSTGRES_URL.includes('?') ? '&' : '?'}schema=${schema}`,
    query: (sql, values) => withPostgres(async (c) => (await c.query(sql, values)).rows),
    cleanup: () => withPostgres(async (c) => void (await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`))),
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
    cleanup: () =>
      withRedis(async (client) => {
        for await (const keys of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 500 })) if (keys.length > 0) await client.unlink(keys);
      }),
  };
}
