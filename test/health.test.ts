import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../src/server/standalone.js';
import { readServerEnv } from '../src/server/env.js';
import type { ScaleOut } from '../src/redis/scale-out.js';
import { http, silentLogger } from './support/server.js';
import { useStandaloneServer } from './support/standalone.js';
import { startFaultProxy, type FaultProxy } from './support/fault-proxy.js';
import { isolatedPostgres, isolatedRedisPrefix, POSTGRES_URL, REDIS_URL, type IsolatedPostgres, type IsolatedRedis } from './support/services.js';

const API_KEY = 'svc-key-0123456789abcdef';

describe('health and readiness of the standalone server', () => {
  // Auth on: the probes must still answer without credentials.
  const s = useStandaloneServer({ AUTH_API_KEYS: `${API_KEY}:ops` });

  it('GET /healthz and /readyz answer 200 without credentials; the bridge routes still want them', async () => {
    expect(await http(`${s.origin}/healthz`)).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await http(`${s.origin}/readyz`)).toMatchObject({ status: 200, body: { status: 'ready' } });
    expect((await http(`${s.server.url}/agents`)).status).toBe(401);
    expect((await http(`${s.server.url}/agents`, { headers: { authorization: `Bearer ${API_KEY}` } })).status).toBe(200);
  });
});

describe('readiness follows PostgreSQL', () => {
  let db: IsolatedPostgres;
  let proxy: FaultProxy;
  let server: RunningServer;
  let origin: string;
  beforeAll(async () => {
    db = await isolatedPostgres('readyz');
    proxy = await startFaultProxy(POSTGRES_URL);
    server = await startServer(readServerEnv({ PORT: '0', DATABASE_URL: proxy.urlFor(db.url), DEMO_DELAY_MS: '0' }), { logger: silentLogger });
    origin = new URL(server.url).origin;
  }, 60_000);
  afterAll(async () => {
    proxy?.mode('forward');
    await server?.close();
    await proxy?.close();
    await db?.cleanup();
  });

  it('503 UNAVAILABLE with Retry-After while PostgreSQL cannot be reached, 200 again once it can; /healthz stays 200', async () => {
    expect((await http(`${origin}/readyz`)).status).toBe(200);
    proxy.mode('refuse');
    const down = await http(`${origin}/readyz`);
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ error: 'Not ready: storage', code: 'UNAVAILABLE', details: [{ path: 'storage', message: expect.any(String) }] });
    expect(down.headers.get('retry-after')).toBe('5');
    expect(JSON.stringify(down.body)).not.toContain(String(proxy.port));
    expect((await http(`${origin}/healthz`)).status).toBe(200);
    proxy.mode('forward');
    await expect.poll(async () => (await http(`${origin}/readyz`)).status, { timeout: 10_000, interval: 100 }).toBe(200);
  });
});

describe('readiness follows Redis when REDIS_URL is set', () => {
  let redis: IsolatedRedis;
  let db: IsolatedPostgres;
  let proxy: FaultProxy;
  let server: RunningServer;
  let origin: string;
  beforeAll(async () => {
    [redis, db] = await Promise.all([isolatedRedisPrefix('readyz'), isolatedPostgres('readyz-redis')]);
    proxy = await startFaultProxy(REDIS_URL);
    server = await startServer(
      readServerEnv({ PORT: '0', DATABASE_URL: db.url, REDIS_URL: proxy.urlFor(REDIS_URL), REDIS_PREFIX: redis.prefix, DEMO_DELAY_MS: '0' }),
      { logger: silentLogger },
    );
    origin = new URL(server.url).origin;
  }, 60_000);
  afterAll(async () => {
    proxy?.mode('forward');
    await server?.close();
    await proxy?.close();
    await Promise.all([db?.cleanup(), redis?.cleanup()]);
  });

  it('503 naming redis while Redis cannot be reached, 200 again once it can', async () => {
    expect((await http(`${origin}/readyz`)).status).toBe(200);
    proxy.mode('refuse');
    const down = await http(`${origin}/readyz`);
    expect(down.status).toBe(503);
    expect(down.body.details).toEqual([{ path: 'redis', message: expect.any(String) }]);
    proxy.mode('forward');
    await expect.poll(async () => (await http(`${origin}/readyz`)).status, { timeout: 15_000, interval: 100 }).toBe(200);
  });

  it('/healthz stays 200 through an outage, and is 503 only once the Redis client is closed for good (a restart mends that)', async () => {
    proxy.mode('refuse');
    expect((await http(`${origin}/healthz`)).status).toBe(200);
    proxy.mode('forward');
    (server.bridge.config.scaleOut as ScaleOut).redis.client.destroy();
    const dead = await http(`${origin}/healthz`);
    expect(dead.status).toBe(503);
    expect(dead.body.code).toBe('UNAVAILABLE');
  });
});
