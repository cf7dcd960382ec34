import type { LeaseProvider } from '@mastra/core/events';
import { LuaScript, type ScriptRunner } from './lua.js';

// Each lease is one key: its value the owner, its TTL the lease's. Every change checks the owner
// in the same script that makes it, so an owner that lost its lease (expired, taken) can never
// release, renew or hand over the next owner's. A released lease leaves a marker for the rest of
// its TTL (`released:<owner>`, free to take): so that a key that is gone means Redis lost it
// (restarted empty), which its holder may take back, not that another process let go of the
// run's lease (it resumed the run, and ended it).

/** The value a released lease keeps until it would have expired. */
const RELEASED = 'released:';

/**
 * Claims the lease if it is free (no key, or a released one); when its owner already holds it,
 * refreshes the TTL. KEYS: lease. ARGV: owner, ttl ms, released prefix. Answers `{1, owner}` when
 * held by the caller now, else `{0, holder}`.
 */
const ACQUIRE = new LuaScript(`
local holder = redis.call('GET', KEYS[1])
if not holder or string.sub(holder, 1, #ARGV[3]) == ARGV[3] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return {1, ARGV[1]}
end
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, holder}
end
return {0, holder}
`);

/** KEYS: lease. ARGV: from owner, to owner, ttl ms. The key is never empty in between. */
const TRANSFER = new LuaScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`);

/**
 * Extends the lease if `owner` holds it; with `retake` (the caller knows it held the lease until
 * now), also sets it again when the key is gone: Redis lost it (restarted empty), as a released
 * lease leaves its marker. KEYS: lease. ARGV: owner, ttl ms, retake (`1` or `0`). Answers 1 when
 * held by `owner` now.
 */
const RENEW = new LuaScript(`
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if not holder and ARGV[3] == '1' then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
`);

/** Lets go of the lease if `owner` holds it, leaving the released marker for the rest of its TTL. KEYS: lease. ARGV: owner, released prefix. */
const RELEASE = new LuaScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local left = redis.call('PTTL', KEYS[1])
if left > 0 then redis.call('SET', KEYS[1], ARGV[2] .. ARGV[1], 'PX', left) else redis.call('DEL', KEYS[1]) end
return 1
`);

/** What the leases need of a connection: scripts, and reading a key. */
export interface LeaseConnection extends ScriptRunner {
  get(key: string): Promise<string | null>;
}

/** A TTL Redis takes: a whole number of milliseconds, at least 1. */
const ttl = (ms: number) => String(Math.max(1, Math.ceil(ms)));

/**
 * Mastra's `LeaseProvider` on Redis keys (`keyOf(key)`), atomic across processes; and, for the
 * bridge, `holdsLease`: whether a lease is held by this instance, known without asking Redis.
 *
 * @example
 * const leases = new RedisLeases(() => connections.writer(), (key) => `mastra:lease:${key}`);
 * const { acquired, owner } = await leases.acquireLease('thread-7', runId, 15_000);
 * leases.holdsLease('thread-7'); // true while it lasts
 */
export class RedisLeases implements LeaseProvider {
  /**
   * The leases this instance took and has not let go, with when they expire at the latest (counted
   * from before the command was sent, so never later than Redis's own expiry).
   */
  readonly #held = new Map<string, { owner: string; expiresAt: number; ttlMs: number }>();

  constructor(
    private readonly connection: () => Promise<LeaseConnection>,
    private readonly keyOf: (key: string) => string,
  ) {}

  async acquireLease(key: string, owner: string, ttlMs: number): Promise<{ acquired: boolean; owner?: string }> {
    const expiresAt = Date.now() + ttlMs;
    const [won, holder] = (await ACQUIRE.run(await this.connection(), [this.keyOf(key)], [owner, ttl(ttlMs), RELEASED])) as [number, string | null];
    if (won === 1) this.#held.set(key, { owner, expiresAt, ttlMs });
    else if (holder !== this.#held.get(key)?.owner) this.#forget(key); // held elsewhere now
    // The holder's key may expire between SET and GET: no holder to name then (rare, allowed).
    return { acquired: won === 1, owner: holder ?? undefined };
  }

  async getLeaseOwner(key: string): Promise<string | undefined> {
    const value = (await (await this.connection()).get(this.keyOf(key))) ?? undefined;
    const owner = value?.startsWith(RELEASED) ? undefined : value;
    if (owner === undefined || owner !== this.#held.get(key)?.owner) this.#forget(key);
    return owner;
  }

  async releaseLease(key: string, owner: string): Promise<void> {
    this.#forget(key, owner);
    await RELEASE.run(await this.connection(), [this.keyOf(key)], [owner, RELEASED]);
  }

  /**
   * Extends the lease while `owner` holds it. A lease this instance still holds by its own count
   * (renewed within its TTL) that Redis no longer has was lost with Redis's data, not expired:
   * it is taken again, or the other processes would settle a live run as lost.
   */
  async renewLease(key: string, owner: string, ttlMs: number): Promise<boolean> {
    const expiresAt = Date.now() + ttlMs;
    const retake = this.#holds(key, owner) ? '1' : '0';
    const renewed = (await RENEW.run(await this.connection(), [this.keyOf(key)], [owner, ttl(ttlMs), retake])) === 1;
    if (renewed) this.#held.set(key, { owner, expiresAt, ttlMs });
    else this.#forget(key, owner);
    return renewed;
  }

  /**
   * Renews every lease this instance holds at once: for a connection that is back after an outage
   * (Redis may have restarted empty), not at the holders' next renewal, up to a third of a TTL later.
   */
  async renewAll(): Promise<void> {
    await Promise.all([...this.#held].map(([key, { owner, ttlMs }]) => this.renewLease(key, owner, ttlMs).catch(() => false)));
  }

  async transferLease(key: string, fromOwner: string, toOwner: string, ttlMs: number): Promise<boolean> {
    const expiresAt = Date.now() + ttlMs;
    const moved = (await TRANSFER.run(await this.connection(), [this.keyOf(key)], [fromOwner, toOwner, ttl(ttlMs)])) === 1;
    if (moved) this.#held.set(key, { owner: toOwner, expiresAt, ttlMs });
    else this.#forget(key, fromOwner);
    return moved;
  }

  /** The leases this instance holds (not released, not expired by its own count). */
  heldLeases(): Array<{ key: string; owner: string }> {
    const now = Date.now();
    return [...this.#held].filter(([, held]) => held.expiresAt > now).map(([key, { owner }]) => ({ key, owner }));
  }

  /** Whether this instance holds the lease on `key` (acquired, renewed or handed over here, not released, not expired). */
  holdsLease(key: string): boolean {
    const held = this.#held.get(key);
    if (!held) return false;
    if (held.expiresAt > Date.now()) return true;
    this.#held.delete(key);
    return false;
  }

  #holds(key: string, owner: string): boolean {
    const held = this.#held.get(key);
    return held?.owner === owner && held.expiresAt > Date.now();
  }

  /** Forgets the lease on `key` (only if `owner` has it, when given). */
  #forget(key: string, owner?: string): void {
    if (owner === undefined || this.#held.get(key)?.owner === owner) this.#held.delete(key);
  }
}
