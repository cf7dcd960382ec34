import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readServerEnv } from '../src/server/env.js';
import { startServer, type RunningServer } from '../src/server/standalone.js';
import { runInput, uid, userMessage } from './support/agui.js';
import { startFaultProxy, type FaultMode, type FaultProxy } from './support/fault-proxy.js';
import { postRun, sseEvents } from './support/run.js';
import { startOwnRedis, type OwnRedis } from './support/redis-server.js';
import { http, silentLogger } from './support/server.js';
import { isolatedPostgres, isolatedRedisPrefix, POSTGRES_URL, REDIS_URL, type IsolatedPostgres, type IsolatedRedis } from './support/services.js';

/**
 * Storage and Redis failing under a running server, through TCP proxies the tests own: a request
 * that needs the dependency answers `503 UNAVAILABLE` with `Retry-After` within 3 s (never a 500,
 * never a hang, never an address), and the server heals by itself within 5 s of the dependency
 * answering again. Bounds, not benchmarks: the numbers are printed too.
 */
const ANSWER_WITHIN_MS = 3000;
const HEAL_WITHIN_MS = 5000;

const RESOURCE = 'outage-user';

interface Setup {
  server: RunningServer;
  origin: string;
  proxy: FaultProxy;
}

/** One steering request, timed. */
async function steer(s: Setup, threadId: string) {
  const started = performance.now();
  const answer = await http(`${s.server.url}/threads/${threadId}/send-message`, { body: { resourceId: RESOURCE, message: 'hello there' } });
  return { ...answer, ms: performance.now() - started };
}

/** Asserts the outage answer: 503, Retry-After, the contract's code, nothing about where the dependency lives. */
function expectOutage(answer: { status: number; body: any; headers: Headers; ms?: number }, proxy: FaultProxy) {
  expect(answer.status).toBe(503);
  expect(answer.body.code).toBe('UNAVAILABLE');
  expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
  const text = JSON.stringify(answer.body);
  for (const internal of [String(proxy.port), '127.0.0.1', 'ECONNREFUSED']) expect(text).not.toContain(internal);
  if (answer.ms !== undefined) expect(answer.ms).toBeLessThan(ANSWER_WITHIN_MS);
}

/** Waits until readiness is back and a steering request is answered; answers how long it took. */
async function healTime(s: Setup, threadId: string): Promise<number> {
  const started = performance.now();
  await expect
    .poll(async () => (await http(`${s.origin}/readyz`)).status === 200 && (await steer(s, threadId)).status === 202, {
      timeout: HEAL_WITHIN_MS * 2,
      interval: 100,
    })
    .toBe(true);
  return performance.now() - started;
}

/** A `/run` that cannot start is a 503 before any event. */
async function expectRunRefused(s: Setup) {
  const started = performance.now();
  const res = await postRun(
    `${s.server.url}/run`,
    runInput({ threadId: uid('outage-run'), messages: [userMessage('hi')], forwardedProps: { resourceId: RESOURCE } }),
  );
  expect(res.status).toBe(503);
  expect(res.headers.get('content-type')).toContain('application/json');
  expectOutage({ status: res.status, body: await res.json(), headers: res.headers, ms: performance.now() - started }, s.proxy);
}

/** Every fault mode in turn: the request during it, then the heal after it. */
function faultCases(label: string, s: Setup) {
  it.each<FaultMode>(['refuse', 'hang'])(`${label} %s: 503 within 3 s, readiness 503, healed within 5 s`, async (mode) => {
    const threadId = uid(`outage-${mode}`);
    expect((await steer(s, threadId)).status).toBe(202);
    s.proxy.mode(mode);
    expectOutage(await steer(s, threadId), s.proxy);
    await expectRunRefused(s);
    expect((await http(`${s.origin}/readyz`)).status).toBe(503);
    s.proxy.mode('forward');
    const healed = await healTime(s, threadId);
    console.info(`${label} ${mode}: healed ${Math.round(healed)} ms after it answered again`);
    expect(healed).toBeLessThan(HEAL_WITHIN_MS);
  });
}

/**
 * A standalone server whose dependency `url` is reached through a fault proxy; `env` gets the
 * proxied URL and gives the server's environment. Started before the tests, stopped after.
 */
function useProxiedServer(label: string, url: string, env: (proxied: string, db: IsolatedPostgres, redis: IsolatedRedis) => Record<string, string>): Setup {
  let db: IsolatedPostgres;
  let redis: IsolatedRedis;
  const s = {} as Setup;
  beforeAll(async () => {
    [db, redis] = await Promise.all([isolatedPostgres(label), isolatedRedisPrefix(label)]);
    s.proxy = await startFaultProxy(url);
    const proxied = s.proxy.urlFor(url === POSTGRES_URL ? db.url : url);
    s.server = await startServer(readServerEnv({ PORT: '0', DEMO_DELAY_MS: '0', ...env(proxied, db, redis) }), { logger: silentLogger });
    s.origin = new URL(s.server.url).origin;
  }, 60_000);
  afterAll(async () => {
    s.proxy?.mode('forward');
    await s.server?.close();
    await s.proxy?.close();
    await Promise.all([db?.cleanup(), redis?.cleanup()]);
  });
  return s;
}

describe('PostgreSQL refusing or hanging', { timeout: 60_000 }, () => {
  const s = useProxiedServer('outage-pg', POSTGRES_URL, (proxied) => ({ DATABASE_URL: proxied }));

  faultCases('PostgreSQL', s);

  it('a run cut by the database ends RUN_ERROR UNAVAILABLE, naming no address', async () => {
    const res = await postRun(
      `${s.server.url}/run`,
      runInput({ messages: [userMessage(`tell ${'word '.repeat(30)}`)], forwardedProps: { resourceId: RESOURCE } }),
    );
    const events: Array<Record<string, any>> = [];
    let cut = false;
    for await (const event of sseEvents(res.body!)) {
      events.push(event);
      if (!cut && event.type === 'RUN_STARTED') {
        cut = true;
        s.proxy.mode('refuse');
      }
    }
    s.proxy.mode('forward');
    const terminal = events.at(-1)!;
    expect(terminal.type).toBe('RUN_ERROR');
    expect(terminal.code).toBe('UNAVAILABLE');
    expect(JSON.stringify(terminal)).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|\d{4,5}\b/);
  });
});

describe('Redis refusing or hanging', { timeout: 60_000 }, () => {
  const s = useProxiedServer('outage-redis', REDIS_URL, (proxied, db, redis) => ({ DATABASE_URL: db.url, REDIS_URL: proxied, REDIS_PREFIX: redis.prefix }));

  faultCases('Redis', s);
});

describe.each([
  { persist: true, label: 'with its data' },
  { persist: false, label: 'empty' },
])('Redis restarted $label', { timeout: 60_000 }, ({ persist }) => {
  let db: IsolatedPostgres;
  let redis: OwnRedis;
  let server: RunningServer;
  beforeAll(async () => {
    [db, redis] = await Promise.all([isolatedPostgres('outage-restart'), startOwnRedis({ persist })]);
    server = await startServer(readServerEnv({ PORT: '0', DATABASE_URL: db.url, REDIS_URL: redis.url, DEMO_DELAY_MS: '0' }), { logger: silentLogger });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await Promise.all([db?.cleanup(), redis?.cleanup()]);
  });

  it('503 while it is down; within 5 s of its start, steering, runs and followers work again', async () => {
    const origin = new URL(server.url).origin;
    const threadId = uid('restart');
    const send = () => http(`${server.url}/threads/${threadId}/send-message`, { body: { resourceId: RESOURCE, message: 'hello' } });
    expect((await send()).status).toBe(202);
    await redis.stop();
    const down = await send();
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).not.toBeNull();
    await redis.start();
    const started = performance.now();
    await expect
      .poll(async () => (await http(`${origin}/readyz`)).status === 200 && (await send()).status === 202, { timeout: 10_000, interval: 100 })
      .toBe(true);
    const healed = performance.now() - started;
    console.info(`Redis restarted (persist: ${persist}): healed ${Math.round(healed)} ms after it started`);
    expect(healed).toBeLessThan(HEAL_WITHIN_MS);

    // A follower and a run on a new thread: the consumer groups, leases and logs they need are made again.
    const other = uid('after-restart');
    const follower = await fetch(`${server.url}/threads/${other}/events?resourceId=${RESOURCE}`);
    const followed = sseEvents(follower.body!);
    const run = await postRun(
      `${server.url}/run`,
      runInput({ threadId: other, messages: [userMessage('back again')], forwardedProps: { resourceId: RESOURCE } }),
    );
    const events = [];
    for await (const event of sseEvents(run.body!)) events.push(event);
    expect(events.at(-1)!.type).toBe('RUN_FINISHED');
    const seen: string[] = [];
    for (let next = await followed.next(); !next.done; next = await followed.next()) {
      seen.push(next.value.type);
      if (next.value.type === 'RUN_FINISHED') break;
    }
    expect(seen[0]).toBe('RUN_STARTED');
    await followed.return(undefined);
  });
});
