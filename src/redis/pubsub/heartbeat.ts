import { createRequire } from 'node:module';
import { setTimeout as delay } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import type { PubSubLogger } from './delivery.js';

/** How long an instance counts as alive after its last beat. */
export const ALIVE_TTL_MS = 3000;
/** How often it beats: two beats may be lost before it counts as gone. */
const BEAT_EVERY_MS = 1000;
/** How long a stop waits for the beat's thread to delete its key (Redis may be hanging). */
const STOP_WAIT_MS = 3 * BEAT_EVERY_MS;

interface BeatSettings {
  url: string;
  key: string;
  ttlMs: number;
  everyMs: number;
}

/**
 * The beat, on a thread of its own with a connection of its own: a process whose main thread is
 * busy for seconds (a burst of work, a long GC) is alive, and must not count as gone. A process
 * that died takes this thread with it. Plain CommonJS, run by `eval` (no file to ship or resolve).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createClient } = require(workerData.redisPath);
const { url, key, ttlMs, everyMs } = workerData;
const client = createClient({ url, disableOfflineQueue: true, socket: { connectTimeout: everyMs, reconnectStrategy: () => everyMs } });
// Redis away: the main thread says so; a beat that fails is tried again at the next.
client.on('error', () => {});
const beat = () => client.isReady ? client.sendCommand(['SET', key, '1', 'PX', String(ttlMs)]).catch(() => {}) : undefined;
const connected = client.connect().then(() => true, () => false);
connected.then(beat);
const timer = setInterval(beat, everyMs);
// Stopped: the key goes now. Redis away or hanging gets one beat's time for it (then the key lapses).
const within = (promise) => Promise.race([promise, new Promise((resolve) => setTimeout(resolve, everyMs, false))]);
parentPort.on('message', async () => {
  clearInterval(timer);
  if (await within(connected)) await within(client.sendCommand(['DEL', key]).catch(() => {}));
  client.destroy();
  parentPort.postMessage('stopped');
});
`;

export interface Heartbeat {
  /** Stops beating and deletes the key: this instance is gone. */
  stop(): Promise<void>;
}

/**
 * Keeps `key` alive in Redis (`SET PX`, `ALIVE_TTL_MS`) every second while this process lives, so
 * that the others learn within seconds that it is gone (`kill -9`, a lost machine): the leases it
 * held are free at once, not when their own longer TTL lapses. Beats from a worker thread; if the
 * worker cannot start, from the main thread (a long stall of it may then count as gone).
 *
 * @example
 * const heartbeat = startHeartbeat('redis://127.0.0.1:6379', 'mastra:alive:7f3a…', logger);
 * // at close
 * await heartbeat.stop();
 */
export function startHeartbeat(url: string, key: string, logger: PubSubLogger): Heartbeat {
  const settings: BeatSettings = { url, key, ttlMs: ALIVE_TTL_MS, everyMs: BEAT_EVERY_MS };
  let worker: Worker | undefined;
  try {
    worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { ...settings, redisPath: createRequire(import.meta.url).resolve('redis') } });
  } catch (error) {
    logger.warn?.('[RedisPubSub] heartbeat thread could not start; beating from the main thread', error);
    return mainThreadBeat(settings);
  }
  worker.unref();
  let fallback: Heartbeat | undefined;
  worker.once('error', (error) => {
    logger.warn?.('[RedisPubSub] heartbeat thread failed; beating from the main thread', error);
    fallback ??= mainThreadBeat(settings);
  });
  const running = worker;
  return {
    stop: async () => {
      if (fallback) return fallback.stop();
      // Bounded: the thread is ended anyway (a beat that no longer comes lets the key lapse).
      let timer: NodeJS.Timeout | undefined;
      const stopped = new Promise<void>((resolve) => {
        running.once('message', () => resolve());
        running.once('exit', () => resolve());
        timer = setTimeout(resolve, STOP_WAIT_MS);
      });
      running.postMessage('stop');
      await stopped;
      clearTimeout(timer);
      await running.terminate();
    },
  };
}

/** The same beat on the main thread, on a connection of its own. */
function mainThreadBeat({ url, key, ttlMs, everyMs }: BeatSettings): Heartbeat {
  let client: import('redis').RedisClientType | undefined;
  const ready = import('redis').then(async ({ createClient }) => {
    client = createClient({ url, disableOfflineQueue: true, socket: { reconnectStrategy: () => everyMs } });
    // Redis away: the pub/sub's own connections say so.
    client.on('error', () => {});
    await client.connect();
    return client;
  });
  const beat = () =>
    void ready
      .then((c) => c.set(key, '1', { PX: ttlMs }))
      .catch(() => {
        // A beat that fails is tried again at the next.
      });
  beat();
  const timer = setInterval(beat, everyMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      // Not deleted (Redis away or hanging): it lapses within ALIVE_TTL_MS.
      const deleted = client?.del(key).catch(() => 0);
      await Promise.race([deleted, delay(STOP_WAIT_MS, undefined, { ref: false })]);
      client?.destroy();
    },
  };
}
