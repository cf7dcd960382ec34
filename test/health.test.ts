import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../src/server/standalone.js';
import { readServerEnv } from '../src/server/env.js';
import { http, silentLogger } from './support/server.js';
import { useStandaloneServer } from './support/standalone.js';
import { isolatedPostgres, isolatedRedisPrefix, POSTGRES_URL, REDIS_URL, type IsolatedPostgres, type IsolatedRedis } from './support/services.js';

const API_KEY = 'svc-key-0123456789abcdef';

/** A TCP proxy to `target` (PostgreSQL, Redis) that the test can cut (every connection dropped, new ones refused) and restore. */
async function cuttableProxy(target: URL, defaultPort: number) {
  const sockets = new Set<net.Socket>();
  let open = true;
  const server = net.createServer((client) => {
    if (!open) return void client.destroy();
    const upstream = net.connect(Number(target.port || defaultPort), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    cut: () => {
      open = false;
      for (const s of sockets) s.destroy();
    },
    restore: () => void (open = true),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

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
  let proxy: Awaited<ReturnType<typeof cuttableProxy>>;
  let server: RunningServer;
  let origin: string;
  beforeAll(async () => {
    db = await isolatedPostgres('readyz');
    const target = new URL(POSTGRES_URL);
    proxy = await cuttableProxy(target, 5432);
    const url = new URL(db.url);
    url.port = String(proxy.port);
    server = await startServer(readServerEnv({ PORT: '0', DATABASE_URL: url.toString(), DEMO_DELAY_MS: '0' }), { logger: silentLogger });
    origin = new URL(server.url).origin;
  }, 60_000);
  afterAll(async () => {
    proxy?.restore();
    await server?.close();
    await proxy?.close();
    await db?.cleanup();
  });

  it('503 UNAVAILABLE with Retry-After while PostgreSQL cannot be reached, 200 again once it can; /healthz stays 200', async () => {
    expect((await http(`${origin}/readyz`)).status).toBe(200);
    proxy.cut();
    const down = await http(`${origin}/readyz`);
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ error: 'Not ready: storage', code: 'UNAVAILABLE', details: [{ path: 'storage', message: expect.any(String) }] });
    expect(down.headers.get('retry-after')).toBe('5');
    expect(JSON.stringify(down.body)).not.toContain(String(proxy.port));
    expect((await http(`${origin}/healthz`)).status).toBe(200);
    proxy.restore();
    await expect.poll(async () => (await http(`${origin}/readyz`)).status, { timeout: 10_000, interval: 100 }).toBe(200);
  });
});

describe('readiness follows Redis when REDIS_URL is set', () => {
  let redis: IsolatedRedis;
  let db: IsolatedPostgres;
  let proxy: Awaited<ReturnType<typeof cuttableProxy>>;
  let server: RunningServer;
  let origin: string;
  beforeAll(async () => {
    [redis, db] = await Promise.all([isolatedRedisPrefix('readyz'), isolatedPostgres('readyz-redis')]);
    proxy = await cuttableProxy(new URL(REDIS_URL), 6379);
    const url = new URL(REDIS_URL);
    url.port = String(proxy.port);
    server = await startServer(readServerEnv({ PORT: '0', DATABASE_URL: db.url, REDIS_URL: url.toString(), REDIS_PREFIX: redis.prefix, DEMO_DELAY_MS: '0' }), { logger: silentLogger });
    origin = new URL(server.url).origin;
  }, 60_000);
  afterAll(async () => {
    proxy?.restore();
    await server?.close();
    await proxy?.close();
    await Promise.all([db?.cleanup(), redis?.cleanup()]);
  });

  it('503 naming redis while Redis cannot be reached, 200 again once it can', async () => {
    expect((await http(`${origin}/readyz`)).status).toBe(200);
    proxy.cut();
    const down = await http(`${origin}/readyz`);
    expect(down.status).toBe(503);
    expect(down.body.details).toEqual([{ path: 'redis', message: expect.any(String) }]);
    proxy.restore();
    await expect.poll(async () => (await http(`${origin}/readyz`)).status, { timeout: 15_000, interval: 100 }).toBe(200);
  });
});
