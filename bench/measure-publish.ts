/**
 * How fast a run's chunks can be published, one after the other as Mastra does (each publish
 * awaited before the next chunk is read): with `publish()` resolving when the XADD is queued
 * (RedisPubSub) against one that waits for Redis's reply to each XADD. Not a test: run it by hand,
 *
 *   npx tsx bench/measure-publish.ts [events=20000]
 *
 * against `REDIS_URL` (default the local Redis). Its keys are deleted afterwards.
 */
import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import type { RedisClient } from '../src/redis/pubsub/connections.js';
import { entryFields } from '../src/redis/pubsub/entry.js';
import { RedisPubSub } from '../src/redis/pubsub/redis-pubsub.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const count = Number(process.argv[2] ?? 20_000);
const prefix = `measure:${randomUUID()}`;
/** A chunk about the size of a text delta with its envelope. */
const chunk = (i: number) => ({
  type: 'stream-part',
  runId: 'run-1',
  data: { type: 'stream-part', part: { type: 'text-delta', payload: { id: 't1', text: `word ${i} `.repeat(8) } } },
});

type Publish = (i: number) => Promise<void>;

async function rate(label: string, publish: Publish, settle: () => Promise<void>, betweenChunks?: () => Promise<void>): Promise<void> {
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    await publish(i);
    if (betweenChunks) await betweenChunks();
  }
  const queued = performance.now() - started;
  await settle();
  const total = performance.now() - started;
  const perSecond = Math.round(count / (total / 1000));
  console.log(`${label.padEnd(58)} ${perSecond.toLocaleString('en').padStart(9)} events/s  (loop ${queued.toFixed(0)} ms, all written ${total.toFixed(0)} ms)`);
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function main(): Promise<void> {
  const client: RedisClient = createClient({ url });
  await client.connect();
  const pubsub = new RedisPubSub({ url, keyPrefix: prefix });
  await pubsub.publish('warm-up', chunk(0));
  await pubsub.flush();
  const full = (i: number) => ({ ...chunk(i), id: randomUUID(), createdAt: new Date() });

  console.log(`${count} events of ~${JSON.stringify(chunk(0)).length} bytes, Redis at ${url}`);
  await rate(
    'each XADD awaited (a publish that waits for the reply)',
    async (i) => void (await client.xAdd(`${prefix}:awaited`, '*', entryFields(full(i)))),
    async () => {},
  );
  await rate(
    'RedisPubSub.publish',
    (i) => pubsub.publish('queued', chunk(i)),
    () => pubsub.flush(),
  );
  await rate(
    'each XADD awaited, a macrotask between chunks',
    async (i) => void (await client.xAdd(`${prefix}:awaited-turn`, '*', entryFields(full(i)))),
    async () => {},
    nextTurn,
  );
  await rate(
    'RedisPubSub.publish, a macrotask between chunks',
    (i) => pubsub.publish('queued-turn', chunk(i)),
    () => pubsub.flush(),
    nextTurn,
  );

  await pubsub.close();
  for await (const keys of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 500 })) if (keys.length > 0) await client.unlink(keys);
  await client.close();
}

await main();
