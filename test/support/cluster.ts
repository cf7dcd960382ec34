import { expect } from 'vitest';
import { runInput, userMessage } from './agui.js';
import { killIfRunning, startServerProcess, type ServerProcess } from './process.js';
import { postRun, sseEvents } from './run.js';
import { http } from './server.js';
import { isolatedPostgres, isolatedRedisPrefix, type IsolatedPostgres, type IsolatedRedis } from './services.js';
import { openSse, type AnyEvent } from './sse.js';

// Several real bridge processes on one Redis prefix and one PostgreSQL schema of their own, and
// the helpers the scale-out tests steer and read them with.

/** The resource every scale-out test acts as. */
export const RESOURCE = 'scale-user';

/** A message the demo model answers word after word: with `DEMO_DELAY_MS`, a run that lasts. */
export const LONG_MESSAGE = 'a long answer that streams for a while, word after word after word';

export interface Cluster {
  db: IsolatedPostgres;
  redis: IsolatedRedis;
  /** The environment every process of the cluster shares, with `extra` on top. */
  env(extra?: Record<string, string>): Record<string, string>;
  /** Starts one more process of the cluster (killed by `close()` if still running). */
  start(extra?: Record<string, string>): Promise<ServerProcess>;
  /** `kill -9` and waits until the process is gone. */
  kill(server: ServerProcess): Promise<void>;
  /** Kills every process still running, then drops the schema and the keys. */
  close(): Promise<void>;
}

/**
 * An isolated PostgreSQL schema and Redis prefix, and the processes started on them. Start the
 * first process alone (`await cluster.start()`): it creates the schema's tables.
 *
 * @example
 * const cluster = await createCluster('scale', { DEMO_DELAY_MS: '20' });
 * const a = await cluster.start();
 * const b = await cluster.start();
 * // …
 * await cluster.close();
 */
export async function createCluster(label: string, base: Record<string, string> = {}): Promise<Cluster> {
  const [db, redis] = await Promise.all([isolatedPostgres(label), isolatedRedisPrefix(label)]);
  const started: ServerProcess[] = [];
  const env = (extra: Record<string, string> = {}) => ({ DATABASE_URL: db.url, REDIS_URL: redis.url, REDIS_PREFIX: redis.prefix, ...base, ...extra });
  return {
    db,
    redis,
    env,
    start: async (extra) => {
      const server = await startServerProcess(env(extra));
      started.push(server);
      return server;
    },
    kill: async (server) => {
      killIfRunning(server);
      await server.exited;
    },
    close: async () => {
      for (const server of started) killIfRunning(server);
      await Promise.all(started.map((s) => s.exited));
      await Promise.all([db.cleanup(), redis.cleanup()]);
    },
  };
}

/** Follows a thread on `server` (`GET …/events`), resolved once the stream said `connected`. */
export async function follow(server: ServerProcess, threadId: string, headers: Record<string, string> = {}) {
  const reader = await openSse(`${server.url}/threads/${threadId}/events?resourceId=${RESOURCE}`, { headers });
  await reader.waitForComment('connected');
  return reader;
}

/** A JSON `POST` to `server` as `RESOURCE`. */
export const post = (server: ServerProcess, path: string, body: Record<string, unknown> = {}) =>
  http(`${server.url}${path}`, { body: { resourceId: RESOURCE, ...body } });

/** A stored message: `toolCalls` and `toolCallId` are only in the AG-UI format. */
export interface StoredMessage {
  id: string;
  role: string;
  content: unknown;
  toolCalls?: Array<{ id: string }>;
  toolCallId?: string;
}

/** The thread's stored history, as `GET …/messages` answers it: Mastra's rows, or AG-UI messages (`format=agui`). */
export const history = async (server: ServerProcess, threadId: string, format?: 'agui') =>
  (await http(`${server.url}/threads/${threadId}/messages?resourceId=${RESOURCE}${format ? `&format=${format}` : ''}`)).body as StoredMessage[];

/** The assistant text of some events. */
export const text = (events: AnyEvent[]) =>
  events
    .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
    .map((e) => e.delta as string)
    .join('');

/** Starts a `/run` on `server` and reads it until its first text or tool call; the rest is read on. */
export async function startRun(server: ServerProcess, threadId: string, content: string, extra: Record<string, unknown> = {}) {
  const input = runInput({ threadId, messages: [userMessage(content)], forwardedProps: { resourceId: RESOURCE }, ...extra });
  const res = await postRun(`${server.url}/run`, input);
  expect(res.status).toBe(200);
  const events: AnyEvent[] = [];
  const iterator = sseEvents(res.body!)[Symbol.asyncIterator]();
  for (;;) {
    const { value, done } = await iterator.next();
    if (done) break;
    events.push(value);
    if (value.type === 'TEXT_MESSAGE_CONTENT' || value.type === 'TOOL_CALL_END') break;
  }
  const rest = (async () => {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) events.push(next.value);
    return events;
  })();
  return { input, events, rest };
}
