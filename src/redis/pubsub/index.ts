/**
 * A Redis Streams pubsub and lease provider for Mastra.
 *
 * @example
 * import { RedisPubSub } from './redis/pubsub/index.js';
 * const mastra = new Mastra({ agents, storage, pubsub: new RedisPubSub({ url: process.env.REDIS_URL! }) });
 */
export { RedisPubSub, type RedisPubSubOptions, type PublishedEvent } from './redis-pubsub.js';
export type { PubSubLogger } from './delivery.js';
export { serialize, deserialize } from './codec.js';
