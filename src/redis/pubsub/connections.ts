import type { RedisClientType } from 'redis';
import { failFastThenReconnect } from './reconnect.js';
import type { PubSubLogger } from './delivery.js';
import { watchConnection, type Watchdog } from './watchdog.js';
import { RepeatedFailures } from './repeated-failures.js';

/**
 * A TCP connect, and a connection that sends and receives nothing (a handshake left unanswered),
 * given up after 2 s. A ready connection is never idle that long: its watchdog pings it.
 */
export const HANDSHAKE_TIMEOUTS = { connectTimeout: 2000, socketTimeout: 2000 };

/** The install line for node-redis, an optional peer dependency of the package. */
export const REDIS_PEER = 'redis@^6.3.1';

/** node-redis is not installed (`loadRedis`): the message says what to install. */
export class RedisNotInstalledError extends Error {}

/**
 * node-redis, loaded when a process first connects to Redis: an app that does not scale out need
 * not install it. A missing one is a `RedisNotInstalledError` that says what to install.
 */
export async function loadRedis(): Promise<typeof import('redis')> {
  try {
    return await import('redis');
  } catch (error) {
    // Node's "cannot find" for redis itself; anything else (a package it imports, a broken install) as it is.
    const code = (error as { code?: unknown } | null)?.code;
    const itself = (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && /['"]redis['"]/.test(String((error as Error).message));
    if (!itself) throw error;
    throw new RedisNotInstalledError(`redis is not installed; RedisPubSub needs it: npm install ${REDIS_PEER}`, { cause: error });
  }
}

/** A node-redis client as `createClient()` makes it. */
export type RedisClient = RedisClientType;

/** Where the connections come from: a URL, or a client of the caller's (unconnected) to copy. */
export type ConnectionSource = { url: string } | { client: RedisClient };

/**
 * The connections of one `RedisPubSub`: the writer (every non-blocking command: publishes, acks,
 * leases, group setup; node-redis keeps their order and pipelines what is sent in one tick) and
 * the blocking readers, each a connection of its own (a blocked connection answers nothing
 * else). All are opened lazily and closed by `close()`.
 *
 * @example
 * const connections = new Connections({ url: 'redis://127.0.0.1:6379' }, logger);
 * const writer = await connections.writer();
 * const reader = await connections.open('fan-out reader');
 * await connections.close();
 */
export class Connections {
  readonly #source: ConnectionSource;
  readonly #logger: PubSubLogger;
  readonly #nameOf: (role: string) => string;
  readonly #isOutage: (error: unknown) => boolean;
  #writer?: RedisClient;
  #writerReady?: Promise<RedisClient>;
  readonly #readers = new Set<RedisClient>();
  readonly #watchdogs = new Map<RedisClient, Watchdog>();
  #closed = false;

  /**
   * `nameOf(role)`: each connection's CLIENT SETNAME, for CLIENT LIST; `isOutage(error)`: whether a
   * connection's error is Redis being away (logged once until it is ready again).
   */
  constructor(source: ConnectionSource, logger: PubSubLogger, nameOf: (role: string) => string, isOutage: (error: unknown) => boolean = () => false) {
    this.#source = source;
    this.#logger = logger;
    this.#nameOf = nameOf;
    this.#isOutage = isOutage;
  }

  /**
   * The writer once its first connect succeeded (`undefined` before): commands given to it while
   * it reconnects wait in node-redis's queue, in order.
   */
  get openedWriter(): RedisClient | undefined {
    return this.#writer;
  }

  /** The writer, connecting it on first use. A failed first connect is retried by the next call. */
  writer(): Promise<RedisClient> {
    this.#assertOpen();
    this.#writerReady ??= this.#newClient('writer', true)
      .then((client) => this.#connect(client, 'writer'))
      .then(
        (client) => (this.#writer = client),
        (error: unknown) => {
          this.#writerReady = undefined;
          throw error;
        },
      );
    return this.#writerReady;
  }

  /** A new connection for a blocking reader, connected; `release` or `close` closes it. */
  async open(role: string): Promise<RedisClient> {
    this.#assertOpen();
    const client = await this.#newClient(role, false);
    this.#readers.add(client);
    try {
      await this.#connect(client, role);
    } catch (error) {
      this.#readers.delete(client);
      throw error;
    }
    if (this.#closed) {
      await this.release(client);
      throw new Error('RedisPubSub is closed');
    }
    return client;
  }

  /** Closes a reader's connection (its blocking read, if any, ended first by its owner). */
  async release(client: RedisClient): Promise<void> {
    this.#readers.delete(client);
    this.#unwatch(client);
    await quit(client);
  }

  /** Drops a reader's connection at once, failing the command it waits on (for a read that leaves nothing behind). */
  drop(client: RedisClient): void {
    this.#readers.delete(client);
    this.#unwatch(client);
    if (client.isOpen) client.destroy();
  }

  /**
   * Runs a blocking read (`… BLOCK blockMs`) on a reader's connection, which is replaced if the read
   * takes much longer than it may block (Redis hangs): the read then fails and its loop reads again.
   */
  blocking<T>(client: RedisClient, blockMs: number, read: () => Promise<T>): Promise<T> {
    const watchdog = this.#watchdogs.get(client);
    return watchdog ? watchdog.blocking(blockMs, read) : read();
  }

  /** Closes every connection: the readers first (their loops have stopped), then the writer. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#readers].map((client) => this.release(client)));
    // A writer that never connected has nothing to close.
    const writer = await this.#writerReady?.catch(() => undefined);
    if (writer) {
      this.#unwatch(writer);
      await quit(writer);
    }
  }

  #unwatch(client: RedisClient): void {
    this.#watchdogs.get(client)?.stop();
    this.#watchdogs.delete(client);
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('RedisPubSub is closed');
  }

  async #newClient(role: string, writer: boolean): Promise<RedisClient> {
    const source = this.#source;
    // The caller's client is the writer; readers are its duplicates (same options: TLS, auth…).
    const name = this.#nameOf(role);
    const client = 'client' in source ? (writer ? source.client : source.client.duplicate({ name })) : await this.#fromUrl(source.url, name);
    // node-redis emits 'error' on every failed (re)connect; unheard, it would crash the process.
    // Redis away is said once, not at every reconnect attempt, until the connection is ready again.
    const failures = new RepeatedFailures(this.#isOutage);
    client.on('ready', () => failures.succeeded());
    client.on('error', (error: unknown) => {
      const level = failures.failed(error);
      if (level === 'warn') this.#logger.warn?.(`[RedisPubSub] ${role} connection: ${String(error)} (Redis is unavailable: not logged again until it is back)`);
      else if (level === 'error') this.#logger.warn?.(`[RedisPubSub] ${role} connection: ${String(error)}`);
    });
    return client;
  }

  async #fromUrl(url: string, name: string): Promise<RedisClient> {
    const { createClient } = await loadRedis();
    const reconnect = failFastThenReconnect();
    const client: RedisClient = createClient({
      url,
      name,
      // While the connection is down, commands fail at once (a server can answer 503) rather than
      // wait in a queue for as long as Redis is away.
      disableOfflineQueue: true,
      socket: { reconnectStrategy: reconnect.strategy, ...HANDSHAKE_TIMEOUTS },
      // No per-command timeout: node-redis arms an AbortSignal timer for each command, and a run
      // sends one per chunk (12 % of a busy server's CPU). A lost connection is still noticed (TCP
      // keepalive, socket errors): its commands fail and the client reconnects.
      commandOptions: { timeout: 0 },
    });
    client.once('ready', reconnect.connected);
    return client;
  }

  async #connect(client: RedisClient, role: string): Promise<RedisClient> {
    try {
      await client.connect();
      const onReplaced = (reason: string) => this.#logger.warn?.(`[RedisPubSub] ${role} connection replaced: ${reason}`);
      this.#watchdogs.set(client, watchConnection(client, { onReplaced }));
      return client;
    } catch (error) {
      if (client.isOpen) client.destroy();
      throw new Error(`RedisPubSub could not connect its ${role}: ${String((error as Error)?.message ?? error)}`, { cause: error });
    }
  }
}

async function quit(client: RedisClient): Promise<void> {
  if (!client.isOpen) return;
  try {
    await client.close();
  } catch {
    client.destroy();
  }
}
