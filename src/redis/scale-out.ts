import type { LeaseProvider, PubSub } from '@mastra/core/events';
import type { RedisConnection } from './connection.js';
import type { LocalLeases } from './thread-control.js';

/**
 * What several bridge processes share on one Redis: Mastra's pub/sub and leases (`pubsub`, for
 * `new Mastra({ pubsub })`), and the bridge's own state (`redis`: thread event logs, frontend
 * tool calls, locks, run announcements, thread control). Made by `createScaleOut`; passed to
 * `createBridge({ scaleOut })`.
 *
 * @example
 * const scaleOut = await createScaleOut({ url: process.env.REDIS_URL });
 * const mastra = new Mastra({ agents, storage: new PostgresStore({ id: 'app', connectionString }), pubsub: scaleOut.pubsub });
 * const bridge = createBridge({ scaleOut });
 * // at shutdown, after the server closed:
 * await scaleOut.close();
 */
export interface ScaleOut {
  pubsub: PubSub & LeaseProvider & LocalLeases;
  redis: RedisConnection;
  close(): Promise<void>;
}
