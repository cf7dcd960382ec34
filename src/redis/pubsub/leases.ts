import type { LeaseProvider } from '@mastra/core/events';
import { LuaScript, type ScriptRunner } from './lua.js';

// Each lease is one key, its value the owner and its TTL the lease's, changed only by scripts that
// check the owner: an owner that lost its lease can never release, renew or hand over the next
// owner's. A released lease leaves a marker for the rest of its TTL (`released:<owner>`, free to
// take), so a missing key means Redis lost it (restarted empty), for its holder to take back, not
// that another process let go of it (having resumed and ended the run).

/** The value a released lease keeps until it would have expired. */
const RELEASED = 'released:';

// With a heartbeat (`LeaseHolding`), each lease names its instance in a key beside it (`holder`,
// same TTL), and each change refreshes that instance's heartbeat: a lease whose holder's heartbeat
// is gone is free to take at once, not at its own TTL. Scripts taking or keeping a lease end their
// ARGV with: instance (`''`: no heartbeat, none recorded), heartbeat key prefix, heartbeat TTL ms.
const HOLDER = `
local function recordHolder(holder, ttl, instance, alivePrefix, aliveTtl)
  if instance == '' then
    redis.call('DEL', holder)
    return
  end
  redis.call('SET', holder, instance, 'PX', ttl)
  redis.call('SET', alivePrefix .. instance, '1', 'PX', aliveTtl)
end`;

/**
 * Claims the lease if it is free (no key, a released one, or one whose holder's instance is gone);
 * when its owner already holds it, refreshes the TTL. KEYS: lease, holder. ARGV: owner, ttl ms,
 * released prefix, instance, heartbeat prefix, heartbeat ttl. Answers `{1, owner}` when held by the
 * caller now, else `{0, holder}`.
 */
const ACQUIRE = new LuaScript(`${HOLDER}
local holder = redis.call('GET', KEYS[1])
local free = not holder or string.sub(holder, 1, #ARGV[3]) == ARGV[3]
if not free and holder ~= ARGV[1] then
  local by = redis.call('GET', KEYS[2])
  free = by and redis.call('EXISTS', ARGV[5] .. by) == 0
end
if free then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
elseif holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
else
  return {0, holder}
end
recordHolder(KEYS[2], ARGV[2], ARGV[4], ARGV[5], ARGV[6])
return {1, ARGV[1]}
`);

/** KEYS: lease, holder. ARGV: from owner, to owner, ttl ms, instance, heartbeat prefix, heartbeat ttl. The key is never empty in between. */
const TRANSFER = new LuaScript(`${HOLDER}
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
recordHolder(KEYS[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
return 1
`);

/**
 * Extends the lease if `owner` holds it; with `retake` (the caller knows it held the lease until
 * now), also sets it again when the key is gone: Redis lost it (restarted empty), as a released
 * lease leaves its marker. KEYS: lease, holder. ARGV: owner, ttl ms, retake (`1` or `0`),
 * instance, heartbeat prefix, heartbeat ttl. Answers 1 when held by `owner` now.
 */
const RENEW = new LuaScript(`${HOLDER}
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
elseif not holder and ARGV[3] == '1' then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
else
  return 0
end
recordHolder(KEYS[2], ARGV[2], ARGV[4], ARGV[5], ARGV[6])
return 1
`);

/** Lets go of the lease if `owner` holds it, leaving the released marker for the rest of its TTL. KEYS: lease, holder. ARGV: owner, released prefix. */
const RELEASE = new LuaScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local left = redis.call('PTTL', KEYS[1])
if left > 0 then redis.call('SET', KEYS[1], ARGV[2] .. ARGV[1], 'PX', left) else redis.call('DEL', KEYS[1]) end
redis.call('DEL', KEYS[2])
return 1
`);

/**
 * For runs of an instance found gone: each lease still held by the run and recorded as that
 * instance's is let go (released marker), and each run is marked gone once. Nothing, if the
 * instance beats again. KEYS: its heartbeat key, then per run: lease, holder, gone-run marker.
 * ARGV: instance, released prefix, marker ttl ms, run ids… Answers the runs this call marked first.
 */
const RECLAIM = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return {} end
local first = {}
for i = 4, #ARGV do
  local at = (i - 4) * 3 + 2
  local run = ARGV[i]
  if redis.call('GET', KEYS[at]) == run and redis.call('GET', KEYS[at + 1]) == ARGV[1] then
    local left = redis.call('PTTL', KEYS[at])
    if left > 0 then redis.call('SET', KEYS[at], ARGV[2] .. run, 'PX', left) else redis.call('DEL', KEYS[at]) end
    redis.call('DEL', KEYS[at + 1])
  end
  if redis.call('SET', KEYS[at + 2], '1', 'NX', 'PX', ARGV[3]) then table.insert(first, run) end
end
return first
`);

export interface LeaseConnection extends ScriptRunner {
  get(key: string): Promise<string | null>;
  mGet(keys: string[]): Promise<Array<string | null>>;
}

/** The keys of the leases and of the heartbeats they are checked against (`pubsubKeys`). */
export interface LeaseKeys {
  lease(key: string): string;
  holder(key: string): string;
  alivePrefix: string;
  alive(instanceId: string): string;
  goneRun(runId: string): string;
}

/** This instance's heartbeat, when it has one: each lease it takes names it as the holder. */
export interface LeaseHolding {
  instanceId: string;
  /** How long a beat lasts (the heartbeat key's TTL). */
  aliveTtlMs: number;
  /** Called before each lease is recorded as this instance's: the heartbeat must run by then. */
  beating(): void;
}

/** A run that holds (or held) a thread's lease: the lease key and its owner. */
export interface LeasedRun {
  key: string;
  owner: string;
}

/** How long a run found gone stays marked so (`reclaimFromGone` marks it once). */
const GONE_RUN_MEMORY_MS = 10 * 60 * 1000;

/** A TTL Redis takes: a whole number of milliseconds, at least 1. */
const ttl = (ms: number) => String(Math.max(1, Math.ceil(ms)));

/**
 * Mastra's `LeaseProvider` on Redis keys (`keys.lease(key)`), atomic across processes; and, for
 * its caller, `holdsLease`: whether a lease is held by this instance, known without asking Redis.
 * With `holding`, each lease names this instance as its holder, and a lease whose holder's
 * heartbeat is gone is free to take (`acquireLease`) or to let go of (`reclaimFromGone`) at once.
 *
 * @example
 * const leases = new RedisLeases(() => connections.writer(), pubsubKeys('mastra'));
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
    private readonly keys: LeaseKeys,
    private readonly holding?: LeaseHolding,
  ) {}

  async acquireLease(key: string, owner: string, ttlMs: number): Promise<{ acquired: boolean; owner?: string }> {
    const expiresAt = Date.now() + ttlMs;
    const [won, holder] = (await ACQUIRE.run(await this.connection(), this.#leaseKeys(key), [owner, ttl(ttlMs), RELEASED, ...this.#holderArgs()])) as [
      number,
      string | null,
    ];
    if (won === 1) this.#held.set(key, { owner, expiresAt, ttlMs });
    else if (holder !== this.#held.get(key)?.owner) this.#forget(key); // held elsewhere now
    // The holder's key may expire between SET and GET: no holder to name then (rare, allowed).
    return { acquired: won === 1, owner: holder ?? undefined };
  }

  async getLeaseOwner(key: string): Promise<string | undefined> {
    const value = (await (await this.connection()).get(this.keys.lease(key))) ?? undefined;
    const owner = value?.startsWith(RELEASED) ? undefined : value;
    if (owner === undefined || owner !== this.#held.get(key)?.owner) this.#forget(key);
    return owner;
  }

  async releaseLease(key: string, owner: string): Promise<void> {
    this.#forget(key, owner);
    await RELEASE.run(await this.connection(), this.#leaseKeys(key), [owner, RELEASED]);
  }

  /**
   * Extends the lease while `owner` holds it. A lease this instance still holds by its own count
   * (renewed within its TTL) that Redis no longer has was lost with Redis's data, not expired:
   * it is taken again, or the other processes would settle a live run as lost.
   */
  async renewLease(key: string, owner: string, ttlMs: number): Promise<boolean> {
    const expiresAt = Date.now() + ttlMs;
    const retake = this.#holds(key, owner) ? '1' : '0';
    const renewed = (await RENEW.run(await this.connection(), this.#leaseKeys(key), [owner, ttl(ttlMs), retake, ...this.#holderArgs()])) === 1;
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
    const moved = (await TRANSFER.run(await this.connection(), this.#leaseKeys(key), [fromOwner, toOwner, ttl(ttlMs), ...this.#holderArgs()])) === 1;
    if (moved) this.#held.set(key, { owner: toOwner, expiresAt, ttlMs });
    else this.#forget(key, fromOwner);
    return moved;
  }

  /** Each run's lease holder: `undefined` if the run does not hold it, `null` if none is recorded. */
  async holdersOf(runs: readonly LeasedRun[]): Promise<Array<string | null | undefined>> {
    if (runs.length === 0) return [];
    const values = await (await this.connection()).mGet(runs.flatMap(({ key }) => [this.keys.lease(key), this.keys.holder(key)]));
    return runs.map(({ owner }, i) => (values[2 * i] === owner ? values[2 * i + 1] : undefined));
  }

  /** Those of `instanceIds` whose heartbeat is gone. */
  async gone(instanceIds: readonly string[]): Promise<string[]> {
    if (instanceIds.length === 0) return [];
    const beats = await (await this.connection()).mGet(instanceIds.map((id) => this.keys.alive(id)));
    return instanceIds.filter((_, i) => beats[i] === null);
  }

  /**
   * For runs of a gone `instanceId`: lets go of the leases they still hold there, and answers the
   * runs this call found gone first, of every process; nothing if the instance beats again.
   */
  async reclaimFromGone(instanceId: string, runs: readonly LeasedRun[]): Promise<string[]> {
    const keys = [this.keys.alive(instanceId), ...runs.flatMap(({ key, owner }) => [...this.#leaseKeys(key), this.keys.goneRun(owner)])];
    const args = [instanceId, RELEASED, String(GONE_RUN_MEMORY_MS), ...runs.map(({ owner }) => owner)];
    return (await RECLAIM.run(await this.connection(), keys, args)) as string[];
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

  #leaseKeys(key: string): [string, string] {
    return [this.keys.lease(key), this.keys.holder(key)];
  }

  /** ARGV of the scripts that record the holder: this instance and its heartbeat, or none. */
  #holderArgs(): [string, string, string] {
    if (!this.holding) return ['', '', '0'];
    this.holding.beating();
    return [this.holding.instanceId, this.keys.alivePrefix, String(this.holding.aliveTtlMs)];
  }

  #holds(key: string, owner: string): boolean {
    const held = this.#held.get(key);
    return held?.owner === owner && held.expiresAt > Date.now();
  }

  #forget(key: string, owner?: string): void {
    if (owner === undefined || this.#held.get(key)?.owner === owner) this.#held.delete(key);
  }
}
