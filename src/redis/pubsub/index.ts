/**
 * A Redis Streams pubsub and lease provider for Mastra, and the pieces its users build on
 * (owner-checked key scripts, the Lua runner, the reconnect strategy, the connection watchdog).
 * Reached only through this file, needing nothing outside its folder: it could be its own package.
 *
 * @example
 * import { RedisPubSub } from './redis/pubsub/index.js';
 * const mastra = new Mastra({ agents, storage, pubsub: new RedisPubSub({ url: process.env.REDIS_URL! }) });
 */
export { RedisPubSub, type RedisPubSubOptions, type PublishedEvent } from './redis-pubsub.js';
export type { PubSubLogger } from './delivery.js';
export { serialize, deserialize } from './codec.js';
export { HANDSHAKE_TIMEOUTS, loadRedis, REDIS_PEER, RedisNotInstalledError } from './connections.js';
export type { LeasedRun } from './leases.js';
export { LuaScript } from './lua.js';
export { RELEASE_IF_OWNER, RENEW_IF_OWNER } from './owned-key.js';
export { failFastThenReconnect } from './reconnect.js';
export { RepeatedFailures } from './repeated-failures.js';
export { watchConnection } from './watchdog.js';
