import { createRequire } from 'node:module';
import { createClient } from 'redis';
import { redactedUrl } from '../src/text.js';

// The machine's PostgreSQL and Redis as the tests (test/support/services.ts) and the benchmarks
// (bench/lib/scale-phase.ts) use them: a check that fails at once and says how to start the one
// that is down, and short-lived connections for setting up and cleaning up.

/** What starts each service on the CI image (`.ci/run` runs the same commands). */
export const START_COMMANDS = {
  PostgreSQL: 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start',
  Redis: 'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log',
} as const;

export type Service = keyof typeof START_COMMANDS;

/** How long a reachability check may take: a service that is up answers in milliseconds. */
export const CHECK_TIMEOUT_MS = 3000;

/** The part of `pg`'s client used here (the repository has no `@types/pg`). */
export interface PgClient {
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

/** `work`, or a failure naming `what` once `CHECK_TIMEOUT_MS` passed. */
export function withTimeout<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** A socket error's own words: connecting to `localhost` fails with an AggregateError that has none. */
export function reason(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return error.errors.map(reason).join(', ');
  const { message, code } = error as { message?: string; code?: string };
  return message || code || String(error);
}

/** Runs `work` on a fresh connection to the PostgreSQL at `url`, then closes it. */
export async function withPostgres<T>(url: string, work: (client: PgClient) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CHECK_TIMEOUT_MS });
  // A connection the server drops emits 'error'; unheard, it would crash the process.
  client.on('error', () => {});
  try {
    await client.connect();
    return await work(client);
  } finally {
    await client.end().catch(() => {
      // a check that already failed or passed: its connection closing badly changes nothing
    });
  }
}

/** A client that gives up at the first failed connect instead of retrying. */
const redisClient = (url: string) => createClient({ url, socket: { connectTimeout: CHECK_TIMEOUT_MS, reconnectStrategy: false } });

/** Runs `work` on a fresh connection to the Redis at `url`, then closes it. */
export async function withRedis<T>(url: string, work: (client: ReturnType<typeof redisClient>) => Promise<T>): Promise<T> {
  const client = redisClient(url);
  client.on('error', () => {});
  try {
    await client.connect();
    return await work(client);
  } finally {
    if (client.isOpen) client.destroy();
  }
}

/** Answers once the service at `url` answered (`SELECT 1`, `PING`) within `CHECK_TIMEOUT_MS`; rejects with `serviceDown`'s error. */
export function checkService(service: Service, url: string): Promise<void> {
  const answered: Promise<unknown> = service === 'PostgreSQL' ? withPostgres(url, (c) => c.query('SELECT 1')) : withRedis(url, (c) => c.ping());
  return withTimeout(answered, service).then(
    () => undefined,
    (error: unknown) => Promise.reject(serviceDown(service, url, error)),
  );
}

/**
 * The error to fail with when a service is down: which one, where, and how to start it. A
 * PostgreSQL that answered with an error (it has a SQLSTATE `code`) is up: starting it would not
 * help, so the error says what it answered instead (a missing database, a refused login).
 */
export function serviceDown(service: Service, url: string, error: unknown): Error {
  const { code } = error as { code?: unknown };
  if (service === 'PostgreSQL' && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
    const fix = code === '3D000' ? ` Create it with: createdb -h 127.0.0.1 -U postgres ${new URL(url).pathname.slice(1)}` : '';
    return new Error(`PostgreSQL at ${redactedUrl(url)} refused the connection: ${reason(error)} (SQLSTATE ${code}).${fix}`);
  }
  return new Error(`${service} is not reachable at ${redactedUrl(url)} (${reason(error)}). Start it with:\n  ${START_COMMANDS[service]}`);
}

/** The URL of schema `schema` in the database at `url` (`?schema=`, as the server's `DATABASE_URL` takes it). */
export const schemaUrl = (url: string, schema: string) => `${url}${url.includes('?') ? '&' : '?'}schema=${schema}`;

/** Deletes every `<prefix>:*` key of the Redis at `url` (SCAN + UNLINK). */
export function deleteKeys(url: string, prefix: string): Promise<void> {
  return withRedis(url, async (client) => {
    for await (const keys of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 500 })) if (keys.length > 0) await client.unlink(keys);
  });
}
