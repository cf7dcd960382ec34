import { randomUUID } from 'node:crypto';
import { LuaScript, RELEASE_IF_OWNER, RENEW_IF_OWNER } from './pubsub/index.js';
import { inject, injectable, unmanaged } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import type { BridgeLogger } from '../logger.js';
import { InProcessThreadLocks, type ThreadLocks } from '../threads/thread-locks.js';
import { TOKENS } from '../tokens.js';
import { errorMessage } from '../text.js';
import type { RedisConnection } from './connection.js';
import { redisKeys, type RedisKeys } from './keys.js';

const TAKEN = -1;

/**
 * Takes the lock if it is free and nobody is ahead in line; otherwise gets (or keeps) a place in
 * line. Waiters that stopped trying (their process died) are dropped first, so a dead waiter
 * holds up the line for one TTL at most. KEYS: lock, queue, alive. ARGV: token, ttl.
 * Answers -1 when taken, else the holder's PTTL (-2: free, someone else is first).
 */
const TAKE = new LuaScript(`
local t = redis.call('TIME')
local micros = tonumber(t[1]) * 1000000 + tonumber(t[2])
local now = math.floor(micros / 1000)
local ttl = tonumber(ARGV[2])
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)) do
  redis.call('ZREM', KEYS[2], gone)
  redis.call('ZREM', KEYS[3], gone)
end
local first = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
if redis.call('EXISTS', KEYS[1]) == 0 and (not first or first == ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('ZREM', KEYS[3], ARGV[1])
  return -1
end
redis.call('ZADD', KEYS[2], 'NX', string.format('%.0f', micros), ARGV[1])
redis.call('ZADD', KEYS[3], string.format('%.0f', now + ttl), ARGV[1])
redis.call('PEXPIRE', KEYS[2], 2 * ttl)
redis.call('PEXPIRE', KEYS[3], 2 * ttl)
return redis.call('PTTL', KEYS[1])
`);

/** What a release publishes on the lock's own name: waiters try again at once. */
const RELEASED = 'released';

export interface RedisThreadLocksOptions {
  /** How long a lock outlives its holder's last renewal, i.e. how soon a dead process's lock frees up. Renewed every third of it. Default 5000. */
  ttlMs?: number;
  /** Longest a waiter goes without trying again when it hears no release (a lost message, a holder that died). Default a third of `ttlMs`, at most half of it. */
  retryMs?: number;
}

/**
 * `ThreadLocks` shared by every process on one Redis. A process's own tasks take turns first
 * (`InProcessThreadLocks`), so only one at a time contends in Redis, where the lock is a key
 * holding its holder's token (`SET NX PX`), renewed while the task runs, compare-and-deleted when
 * it settles; a dead process's lock expires after `ttlMs`. Waiters stand in a first-come line,
 * asleep until a release is published on the lock's channel, the holder's TTL would run out, or
 * `retryMs`: no hot spinning, and a process with many tasks cannot starve another.
 */
@injectable()
export class RedisThreadLocks implements ThreadLocks {
  private readonly local = new InProcessThreadLocks();
  private readonly keys: RedisKeys;
  private readonly ttlMs: number;
  private readonly retryMs: number;
  private readonly logger: BridgeLogger;

  constructor(
    @inject(TOKENS.Redis) private readonly redis: RedisConnection,
    @inject(TOKENS.Config) config: ResolvedConfig,
    @unmanaged() options: RedisThreadLocksOptions = {},
  ) {
    this.keys = redisKeys(redis.prefix);
    this.ttlMs = options.ttlMs ?? 5000;
    // A waiter's place in line lapses one TTL after its last try: it must try again well before.
    this.retryMs = Math.min(options.retryMs ?? this.ttlMs / 3, this.ttlMs / 2);
    this.logger = config.logger;
  }

  exclusive<T>(threadId: string, task: () => Promise<T>): Promise<T> {
    return this.local.exclusive(threadId, async () => {
      const token = await this.acquire(threadId);
      return this.holding(threadId, token, task);
    });
  }

  private async acquire(id: string): Promise<string> {
    const token = randomUUID();
    if ((await this.tryTake(id, token)) === TAKEN) return token;
    // Subscribed before the next try, so a release between the two tries is not missed.
    const bell = new Doorbell();
    const channel = this.keys.lock(id);
    await this.redis.subscriber.subscribe(channel, bell.ring);
    try {
      for (;;) {
        const holderTtl = await this.tryTake(id, token);
        if (holderTtl === TAKEN) return token;
        await bell.wait(this.nextTryIn(holderTtl));
      }
    } finally {
      this.redis.subscriber.unsubscribe(channel, bell.ring).catch(() => {
        // closing: a subscription left behind goes with its connection
      });
    }
  }

  private async tryTake(id: string, token: string): Promise<number> {
    const keys = [this.keys.lock(id), this.keys.lockQueue(id), this.keys.lockAlive(id)];
    return Number(await TAKE.run(this.redis.client, keys, [token, String(this.ttlMs)]));
  }

  /** A holder that died frees the lock when its TTL runs out, without any release to hear. */
  private nextTryIn(holderTtl: number): number {
    return holderTtl > 0 ? Math.min(holderTtl + 5, this.retryMs) : this.retryMs;
  }

  private async holding<T>(id: string, token: string, task: () => Promise<T>): Promise<T> {
    const key = this.keys.lock(id);
    const stopRenewing = this.renewWhileHeld(key, token);
    try {
      return await task();
    } finally {
      stopRenewing();
      await this.release(key, token);
    }
  }

  /** Renews every third of the TTL (each renewal scheduled after the last one answered), until stopped or lost. */
  private renewWhileHeld(key: string, token: string): () => void {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const renew = async () => {
      try {
        const held = Number(await RENEW_IF_OWNER.run(this.redis.client, [key], [token, String(this.ttlMs)])) === 1;
        if (!held) {
          // Nothing to stop the task with: say so, and leave the lock to whoever holds it now.
          this.logger.warn(`Lock ${key} expired while its task was still running; another process may have taken it`);
          return;
        }
      } catch (error) {
        this.logger.warn(`Lock ${key}: renewal failed (tried again in ${Math.round(this.ttlMs / 3)} ms): ${errorMessage(error)}`);
      }
      schedule();
    };
    const schedule = () => {
      if (stopped) return;
      timer = setTimeout(() => void renew(), this.ttlMs / 3);
      timer.unref();
    };
    schedule();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }

  /** The task's outcome stands even when Redis cannot be told: the lock then expires by itself. */
  private async release(key: string, token: string): Promise<void> {
    try {
      await RELEASE_IF_OWNER.run(this.redis.client, [key], [token, key, RELEASED]);
    } catch (error) {
      this.logger.warn(`Lock ${key}: release failed (it expires within ${this.ttlMs} ms): ${errorMessage(error)}`);
    }
  }
}

/** Wakes one sleeper early; a ring while nobody sleeps makes the next sleep end at once. */
class Doorbell {
  private rung = false;
  private wake?: () => void;

  readonly ring = (): void => {
    this.rung = true;
    this.wake?.();
  };

  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        this.rung = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
      if (this.rung) done();
    });
  }
}
