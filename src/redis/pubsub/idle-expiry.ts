import type { RedisClient } from './connections.js';

/** The longest a topic's idle TTL goes unrefreshed while it is written to. */
const MAX_REFRESH_MS = 60_000;

/**
 * The sliding expiry of topic streams (`streamIdleTtlMs`), refreshed once per window per topic
 * rather than with every write: a run publishes a chunk at a time, and a `PEXPIRE` per chunk would
 * double the commands of the hottest path. The window is half the TTL, at most a minute, so a
 * stream still outlives its last write by at least half its TTL. The first write of a window (the
 * stream's creation included) sets it, in the same pipeline, right after the `XADD`.
 *
 * @example
 * const expiry = new IdleExpiry(7 * 24 * 3600_000);
 * writer.xAdd(key, '*', fields);
 * expiry.touch(writer, key); // a PEXPIRE the first time in this window, else nothing
 */
export class IdleExpiry {
  readonly #ttlMs: number;
  /** Keys whose TTL was set in the current window. */
  #fresh = new Set<string>();
  #timer?: NodeJS.Timeout;

  constructor(ttlMs: number) {
    this.#ttlMs = ttlMs;
  }

  /** Queues the key's `PEXPIRE` when it is due (the answer, or `undefined` when not sent). */
  touch(writer: RedisClient, key: string): Promise<number> | undefined {
    if (this.#ttlMs <= 0 || this.#fresh.has(key)) return undefined;
    this.#fresh.add(key);
    this.#startWindows();
    return writer.pExpire(key, this.#ttlMs);
  }

  /** The key was deleted: the next write sets its TTL again at once. */
  forget(key: string): void {
    this.#fresh.delete(key);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#fresh.clear();
  }

  #startWindows(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => this.#fresh.clear(), Math.min(this.#ttlMs / 2, MAX_REFRESH_MS));
    this.#timer.unref();
  }
}
