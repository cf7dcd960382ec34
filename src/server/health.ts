import type { MastraStorage } from '@mastra/core/storage';
import type { Context, Hono } from 'hono';
import type { BridgeLogger } from '../logger.js';
import type { RedisClient } from '../redis/connection.js';
import { errorMessage } from '../text.js';

/** What `/readyz` checks, each given this long to answer. */
const CHECK_TIMEOUT_MS = 2000;
const RETRY_AFTER_SEC = '5';

/** The services a standalone server depends on: storage always, Redis in the shared mode. */
export interface Dependencies {
  storage: MastraStorage;
  redis?: RedisClient;
  /** True once the server is shutting down: not ready any more. */
  closing(): boolean;
  /** Where a failed check's cause goes (the answer only names the service). */
  logger: BridgeLogger;
}

/**
 * `GET /healthz` (liveness: the process serves, and can heal) and `GET /readyz` (readiness: storage
 * answers a query, and Redis a `PING` when configured; `503 UNAVAILABLE` with `Retry-After` when
 * one does not, or while shutting down). Both at the server root, without credentials, for load
 * balancers and orchestrators. A failed check names the service, not its address or credentials.
 */
export function serveHealth(app: Hono, deps: Dependencies): void {
  // Liveness fails only for what a restart mends, a Redis client closed for good; a dependency down
  // is readiness's business (restarting every process would heal nothing and add a cold start).
  app.get('/healthz', (c) =>
    deps.redis && !deps.redis.isOpen && !deps.closing()
      ? c.json({ error: 'Not live: the Redis client is closed and will not reconnect', code: 'UNAVAILABLE' }, 503)
      : c.json({ status: 'ok' }),
  );
  app.get('/readyz', async (c) => {
    if (deps.closing()) return unavailable(c, [{ path: 'server', message: 'shutting down' }]);
    const failed = (await Promise.all(checksOf(deps).map((check) => runCheck(check, deps.logger)))).filter((f) => f !== undefined);
    return failed.length === 0 ? c.json({ status: 'ready' }) : unavailable(c, failed);
  });
}

type Check = { name: string; run: () => Promise<unknown> };

function checksOf(deps: Dependencies): Check[] {
  const checks: Check[] = [
    // A read of one row by key: a round trip to the database, nothing written.
    { name: 'storage', run: async () => (await deps.storage.getStore('memory'))?.getThreadById({ threadId: 'readyz-probe' }) },
  ];
  const { redis } = deps;
  if (redis) checks.push({ name: 'redis', run: () => redis.ping() });
  return checks;
}

class Late extends Error {}

/** `undefined` when the check passed in time, else what to report. */
async function runCheck(check: Check, logger: BridgeLogger): Promise<{ path: string; message: string } | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Late(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([check.run(), late]);
    return undefined;
  } catch (error) {
    logger.warn(`readyz: ${check.name} check failed: ${errorMessage(error)}`);
    return { path: check.name, message: error instanceof Late ? error.message : 'unreachable' };
  } finally {
    clearTimeout(timer);
  }
}

function unavailable(c: Context, details: Array<{ path: string; message: string }>) {
  const names = details.map((d) => d.path).join(', ');
  return c.json({ error: `Not ready: ${names}`, code: 'UNAVAILABLE', details }, 503, { 'Retry-After': RETRY_AFTER_SEC });
}
