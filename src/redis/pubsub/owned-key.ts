import { LuaScript } from './lua.js';

// A key whose value names its owner (a lease, a lock, a log's writer): every change checks the
// owner in the same script that makes it, so an owner that lost the key (expired, taken) can never
// renew or delete the next owner's.

/** Extends the key's TTL if `owner` still holds it. KEYS: key. ARGV: owner, ttl ms. Answers 1 when extended. */
export const RENEW_IF_OWNER = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`);

/**
 * Deletes the key if `owner` still holds it and, when a channel is given, publishes `notice` on it
 * (waiters take their turn at once). KEYS: key. ARGV: owner, channel (`''`: none), notice.
 * Answers 1 when deleted.
 *
 * @example
 * await RELEASE_IF_OWNER.run(client, [lockKey], [token, lockKey, 'released']);
 */
export const RELEASE_IF_OWNER = new LuaScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
if ARGV[2] ~= '' then redis.call('PUBLISH', ARGV[2], ARGV[3]) end
return 1
`);
