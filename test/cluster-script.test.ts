import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uid } from './support/agui.js';
import { REPO_ROOT } from './support/process.js';
import { http } from './support/server.js';
import { isolatedPostgres, isolatedRedisPrefix, type IsolatedPostgres, type IsolatedRedis } from './support/services.js';
import { openSse } from './support/sse.js';

// `npm run cluster`: two instances behind one round-robin port. A thread followed through the
// port (one instance) is steered through the port (the other) and the follower sees the run.

let db: IsolatedPostgres;
let redis: IsolatedRedis;
let cluster: ReturnType<typeof spawn>;
let base: string;

beforeAll(async () => {
  [db, redis] = await Promise.all([isolatedPostgres('cluster'), isolatedRedisPrefix('cluster')]);
  // Below Linux's ephemeral range (32768+), where other tests' sockets take their ports from: the
  // script listens on this port and the next two.
  const port = 10_000 + Math.floor(Math.random() * 20_000);
  cluster = spawn(process.execPath, ['--import', 'tsx', 'scripts/cluster.ts'], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: String(port), REDIS_URL: redis.url, REDIS_PREFIX: redis.prefix, DATABASE_URL: db.url, DEMO_DELAY_MS: '5' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  base = await new Promise<string>((resolve, reject) => {
    let out = '';
    cluster.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = /cluster listening on (\S+)/.exec(out);
      if (match) resolve(match[1]);
    });
    let err = '';
    cluster.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    cluster.once('exit', (code) => reject(new Error(`cluster exited (${code}): ${out}\n${err}`)));
  });
}, 60_000);
afterAll(async () => {
  cluster?.kill('SIGTERM');
  await Promise.all([db?.cleanup(), redis?.cleanup()]);
});

describe('npm run cluster', () => {
  it('serves a thread followed through one instance and steered through the other', async () => {
    const threadId = uid('cluster');
    const follower = await openSse(`${base}/threads/${threadId}/events?resourceId=cluster-user`);
    await follower.waitForComment('connected');
    const sent = await http(`${base}/threads/${threadId}/send-message`, { body: { resourceId: 'cluster-user', message: 'through the port' } });
    expect(sent.status).toBe(202);
    await follower.waitForEvent((e) => e.type === 'RUN_FINISHED');
    const text = follower.events
      .filter((e) => e.event.type === 'TEXT_MESSAGE_CONTENT')
      .map((e) => e.event.delta as string)
      .join('');
    expect(text).toContain('through the port');
    await follower.close();
  });

  it('stops its instances on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => cluster.once('exit', resolve));
    cluster.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
