import { setTimeout as delay } from 'node:timers/promises';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { MastraCompositeStore } from '@mastra/core/storage';
import type { PostgresStore } from '@mastra/pg';
import type { Pool } from 'pg';
import { importPeer } from './peers.js';

/** What a `DATABASE_URL` names: a LibSQL database, or a PostgreSQL database and schema. */
export type DatabaseTarget = { kind: 'libsql'; url: string } | { kind: 'postgres'; connectionString: string; schemaName?: string };

/** The URL schemes the libSQL client opens (a local file, Turso / sqld over HTTP or WebSockets). */
const LIBSQL_SCHEMES = ['file:', 'libsql:', 'http:', 'https:', 'ws:', 'wss:'];
const POSTGRES_SCHEMES = ['postgres:', 'postgresql:'];
/**
 * A schema name Mastra can put in its SQL as is: plain identifier characters, at most 63 bytes
 * (PostgreSQL's limit, past which it would silently truncate the name).
 */
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * Reads a `DATABASE_URL`. `file:`, `:memory:`, `libsql:` (and the libSQL client's `http(s):`,
 * `ws(s):`) are LibSQL; `postgres:` / `postgresql:` are PostgreSQL, whose `?schema=<name>`
 * selects the schema and is taken out of the connection string (pg does not know it). Throws on
 * anything else, without repeating the URL: it may hold a password.
 *
 * @example
 * parseDatabaseUrl('file:.data/bridge.db');
 * // { kind: 'libsql', url: 'file:.data/bridge.db' }
 * parseDatabaseUrl('postgres://app@db:5432/bridge?schema=agui&sslmode=require');
 * // { kind: 'postgres', connectionString: 'postgres://app@db:5432/bridge?sslmode=require', schemaName: 'agui' }
 */
export function parseDatabaseUrl(url: string): DatabaseTarget {
  if (url === ':memory:') return { kind: 'libsql', url };
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0].toLowerCase();
  if (scheme && LIBSQL_SCHEMES.includes(scheme)) return { kind: 'libsql', url };
  if (scheme && POSTGRES_SCHEMES.includes(scheme)) return parsePostgresUrl(url);
  const what = url === '' ? 'it is empty' : scheme ? `its scheme "${scheme}" is not supported` : 'it has no scheme';
  throw new Error(`${what}: use file:<path>, :memory:, libsql://…, or postgres://user@host:5432/db (optionally ?schema=<name>)`);
}

/** Splits `?schema=` off a PostgreSQL URL; every other parameter is left as written, for pg. */
function parsePostgresUrl(url: string): DatabaseTarget {
  const at = url.indexOf('?');
  if (at < 0) return { kind: 'postgres', connectionString: url };
  const query = url.slice(at + 1);
  const schemas = new URLSearchParams(query).getAll('schema');
  if (schemas.length === 0) return { kind: 'postgres', connectionString: url };
  if (schemas.length > 1) throw new Error('?schema= is given more than once');
  const [schemaName] = schemas;
  if (!SCHEMA_NAME.test(schemaName)) {
    throw new Error(`?schema=${schemaName} is not a plain identifier: use letters, digits and _, not starting with a digit, at most 63 characters`);
  }
  const rest = query.split('&').filter((part) => part !== '' && !new URLSearchParams(part).has('schema'));
  const connectionString = rest.length > 0 ? `${url.slice(0, at)}?${rest.join('&')}` : url.slice(0, at);
  return { kind: 'postgres', connectionString, schemaName };
}

function prepareDatabase(url: string): void {
  if (!url.startsWith('file:')) return;
  const path = url.slice('file:'.length);
  if (path && path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
}

/**
 * The standalone server's Mastra storage for a `DATABASE_URL`: a `LibSQLStore` (the folder of a
 * `file:` path is created) or a `PostgresStore` that owns its connection pool. Nothing connects
 * before first use; PostgreSQL creates the schema and its tables then. `close()` releases the file
 * handles or ends the pool; a second call (from Mastra's `shutdown()`) does nothing. Its package
 * (an optional peer) is loaded here: a missing one is an error naming what to install.
 *
 * @example
 * const storage = await createStorage(process.env.DATABASE_URL ?? 'file:.data/bridge.db');
 * const mastra = new Mastra({ agents, storage });
 * // at shutdown
 * await storage.close();
 */
export async function createStorage(url: string, options: StorageOptions = {}): Promise<MastraCompositeStore> {
  const target = parseDatabaseUrl(url);
  if (target.kind === 'postgres') return postgresStore(target, options);
  const { LibSQLStore } = await importPeer('@mastra/libsql', () => import('@mastra/libsql'), 'a LibSQL DATABASE_URL (the default)');
  prepareDatabase(target.url);
  return new LibSQLStore({ id: 'bridge', url: target.url });
}

/** How the standalone server's storage behaves when its database does not answer. */
export interface StorageOptions {
  /**
   * PostgreSQL: how long a connection may take to open, and a query to answer, before it fails
   * (and the request with it, `503`). Default 2500 ms: a database that hangs is then an error a
   * client can retry, not a request that never ends and a pool slot held for ever.
   */
  timeoutMs?: number;
  /** Where the pool reports a connection it lost (the pool drops it and opens another). */
  onPoolError?: (error: Error) => void;
}

/** The default of `StorageOptions.timeoutMs` (and of `DATABASE_TIMEOUT_MS`). */
export const DEFAULT_DATABASE_TIMEOUT_MS = 2500;

/** The pool of each PostgreSQL store `createStorage` made: `initStorage` locks on it. */
const pools = new WeakMap<MastraCompositeStore, Pool>();

/**
 * A `PostgresStore` on a pool of its own with connect and query timeouts (`PostgresStore` builds
 * its pool from the connection string alone and drops such options), ended with the store.
 */
async function postgresStore({ connectionString, schemaName }: Extract<DatabaseTarget, { kind: 'postgres' }>, options: StorageOptions): Promise<PostgresStore> {
  const why = 'a postgres: DATABASE_URL';
  const { PostgresStore } = await importPeer('@mastra/pg', () => import('@mastra/pg'), why);
  const { default: pg } = await importPeer('pg', () => import('pg'), why);
  const timeout = options.timeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS;
  const pool = new pg.Pool({ connectionString, max: 20, idleTimeoutMillis: 30_000, connectionTimeoutMillis: timeout, query_timeout: timeout, keepAlive: true });
  // A connection the server closes, unheard, is an uncaught error that ends the process: the pool
  // reports idle ones, a checked-out one (mid-transaction) on itself, and its query fails anyway.
  const lost = (error: Error) => options.onPoolError?.(error);
  pool.on('error', lost);
  pool.on('connect', (client) => client.on('error', lost));
  let ended = false;
  const store = new (class extends PostgresStore {
    override async close(): Promise<void> {
      await super.close();
      if (ended) return;
      ended = true;
      await pool.end();
    }
  })({ id: 'bridge', pool, ...(schemaName && { schemaName }) });
  pools.set(store, pool);
  return store;
}

/**
 * Creates the storage's tables before the server listens: an unreachable storage stops the start
 * rather than failing requests. On PostgreSQL this runs under an advisory lock (one per database):
 * processes started at once on a new schema would otherwise race on the same `CREATE`/`ALTER`
 * statements (duplicates, deadlocks, "multiple primary keys"), failing the losers' first requests.
 */
export async function initStorage(storage: MastraCompositeStore): Promise<void> {
  const pool = pools.get(storage);
  if (!pool) return storage.init();
  const client = await pool.connect();
  try {
    // Tried, not waited for: a session blocked in `pg_advisory_lock` holds a snapshot, and the
    // holder's `CREATE INDEX CONCURRENTLY` waits for every snapshot: a deadlock nobody detects.
    for (let wait = 10; !(await client.query<{ locked: boolean }>(TRY_INIT_LOCK)).rows[0]?.locked; wait = Math.min(wait * 2, 500)) await delay(wait);
    try {
      await storage.init();
    } finally {
      await client.query(INIT_UNLOCK);
    }
  } finally {
    client.release();
  }
}

const TRY_INIT_LOCK = "SELECT pg_try_advisory_lock(hashtext('mastra-agui-bridge:init')) AS locked";
const INIT_UNLOCK = "SELECT pg_advisory_unlock(hashtext('mastra-agui-bridge:init'))";
