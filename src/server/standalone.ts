import { appendFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Mastra } from '@mastra/core';
import type { MastraCompositeStore } from '@mastra/core/storage';
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import { createBridge, type Bridge } from '../bridge.js';
import type { BridgeConfig, CorsOptions, ResolveResourceId } from '../config.js';
import type { LimitsOptions } from '../limits/limits.js';
import { createDemoAgent } from '../demo/agent.js';
import { createDemoWorkflow, DEMO_WORKFLOW_ID } from '../demo/workflow.js';
import { authFromEnv, exposureWarning } from './auth.js';
import { servePage } from './demo-page.js';
import { serveHealth } from './health.js';
import { hostCheck } from './host-check.js';
import type { ServerEnv } from './env.js';
import { serverLogger } from './server-logger.js';
import { serveMetrics } from './metrics-route.js';
import { pinoLogger } from '../observability/pino-logger.js';
import type { ScaleOut } from '../redis/scale-out.js';
import { createStorage, initStorage } from './storage.js';
import { mastraSpans, tracingWanted } from './tracing.js';
import { errorMessage } from '../text.js';
import { redactInternals } from '../translate/failure.js';

export interface RunningServer {
  url: string;
  bridge: Bridge;
  mastra: Mastra;
  /** The server's pino logger (the bridge logs through it too, unless `bridgeConfig.logger` was given). */
  log: Logger;
  /** Ends open runs with their terminal event, stops listening, closes storage. */
  close(): Promise<void>;
  /**
   * Drains, then closes (SIGTERM): readiness, new runs and steering get `503` (+ `Retry-After`) at
   * once; runs in flight get `SHUTDOWN_GRACE_MS`, `close()` then `CLOSE_WITHIN_MS`.
   */
  drainAndClose(): Promise<void>;
}

/**
 * How long closing may take after the grace (cutting what still runs, storing what it had, closing
 * connections): a runtime kills a process outliving its grace period, so this one is done within
 * `SHUTDOWN_GRACE_MS` + this, whatever hangs (what a cut run took stays in the durable inbox).
 */
export const CLOSE_WITHIN_MS = 1500;

/** The caps of `docs/security.md#limits` from the environment; `0` is no cap. */
function limitsFromEnv(env: ServerEnv): LimitsOptions {
  const cap = (value: number) => (value > 0 ? value : undefined);
  return {
    requestsPerMinute: cap(env.RATE_LIMIT_PER_MINUTE),
    streamsPerResource: cap(env.MAX_STREAMS_PER_RESOURCE),
    streams: cap(env.MAX_STREAMS),
    runsPerResource: cap(env.MAX_RUNS_PER_RESOURCE),
  };
}

/** CORS for frontends on `origins`: the headers the bridge reads, and those a page may read back. */
const corsFor = (origins: string[]): CorsOptions => ({
  origin: origins,
  allowHeaders: ['Authorization', 'Content-Type', 'Accept', 'Last-Event-ID', 'Idempotency-Key', 'X-Request-Id'],
  exposeHeaders: ['X-Request-Id', 'Retry-After', 'WWW-Authenticate'],
  maxAge: 600,
});

/**
 * Socket timeouts for streaming: `HEADERS_TIMEOUT_MS` for a client's headers and
 * `REQUEST_TIMEOUT_MS` for its whole request, so a slowloris cannot hold a socket; responses are
 * not timed (event streams live on). Node checks them every second here (default 30 s).
 */
const socketTimeouts = (env: ServerEnv) => ({
  headersTimeout: env.HEADERS_TIMEOUT_MS,
  requestTimeout: env.REQUEST_TIMEOUT_MS,
  keepAliveTimeout: env.KEEP_ALIVE_TIMEOUT_MS,
  connectionsCheckingInterval: 1000,
});

/** Answered whatever the `Host`: orchestrators probe, and Prometheus scrapes, by address. */
const UNGUARDED = new Set(['/healthz', '/readyz', '/metrics']);

type Fetch = Hono['fetch'];

/** `app.fetch` behind the `Host` check (`hostCheck`): a foreign `Host` is `403`, before any route. */
function guarded(app: Hono, env: ServerEnv): Fetch {
  const accepts = hostCheck({ bind: env.HOST, allowed: env.ALLOWED_HOSTS });
  if (!accepts) return app.fetch;
  return (request, ...rest) => {
    if (accepts(request.headers.get('host')) || UNGUARDED.has(new URL(request.url).pathname)) return app.fetch(request, ...rest);
    return Response.json({ error: 'This server does not answer to that Host (set ALLOWED_HOSTS to add it)', code: 'FORBIDDEN' }, { status: 403 });
  };
}

export interface StartOptions {
  /** Where the server logs; default: pino at `LOG_LEVEL`, JSON lines on stdout. */
  log?: Logger;
}

/**
 * Starts the bridge standalone: the storage `DATABASE_URL` names, the demo agent, background tasks
 * on, the demo page at `/`, and `GET /metrics` (behind `METRICS_TOKEN` when set). The bridge logs
 * to `options.log` (else `serverLogger(env)`) unless `bridgeConfig.logger` is given.
 */
export async function startServer(env: ServerEnv, bridgeConfig: BridgeConfig = {}, options: StartOptions = {}): Promise<RunningServer> {
  const log = options.log ?? serverLogger(env);
  const storage = await createStorage(env.DATABASE_URL, {
    timeoutMs: env.DATABASE_TIMEOUT_MS,
    onPoolError: (error) => log.warn(`storage: a connection was lost (${redactInternals(errorMessage(error))}); the pool opens another`),
  });
  await initStorage(storage);
  const logger = bridgeConfig.logger ?? pinoLogger(log);
  // Loaded only then: the embedded default runs without the Redis code.
  const scaleOut = env.REDIS_URL
    ? await (await import('../redis/scale-out.js')).createScaleOut({ url: env.REDIS_URL, prefix: env.REDIS_PREFIX, logger })
    : undefined;
  const resolveResourceId = authFromEnv(env);
  const warning = exposureWarning(env, resolveResourceId !== undefined);
  if (warning) log.warn(`warning: ${warning}`);
  const bridge = createBridge({ ...bridgeConfigOf(env, resolveResourceId, scaleOut), logger, ...bridgeConfig });
  const mastra = await embeddedMastra(env, storage, scaleOut, bridge);
  const app = bridge.app(mastra);
  let closing = false;
  serveBeside(app, bridge, env, { storage, scaleOut, closing: () => closing, tokens: resolveResourceId !== undefined });
  const server = await listenOrClose(app, env, [storage, scaleOut]);
  const { port } = server.address() as AddressInfo;
  const host = env.HOST.includes(':') ? `[${env.HOST}]` : env.HOST;
  await mastra.startWorkers();
  // What a crash left acknowledged and unanswered is sent again now that the server listens.
  bridge.recover(mastra).then(
    (resent) => resent > 0 && log.info({ resent }, `recovered ${resent} acknowledged message(s) left unanswered by the last run of the server`),
    (error: unknown) => log.error({ err: error }, `recovery failed: ${(error as Error)?.message ?? error}`),
  );
  const close = async (windDownMs?: number) => {
    closing = true;
    await bridge.shutdown(windDownMs);
    await closeServer(server);
    await mastra.shutdown().catch(() => {
      // shutting down: what did not close goes with the process
    });
    await scaleOut?.close().catch(() => {
      // shutting down: what did not close goes with the process
    });
    await storage.close().catch(() => {
      // shutting down: what did not close goes with the process
    });
  };
  return {
    url: `http://${host}:${port}${env.AGUI_PREFIX}`,
    bridge,
    mastra,
    log,
    close: () => close(),
    drainAndClose: async () => {
      closing = true;
      // A draining process fires nothing more: the other processes' schedulers take its schedules.
      await mastra.stopWorkers().catch((error: unknown) => log.warn(`shutdown: Mastra's workers did not stop: ${errorMessage(error)}`));
      const drained = await bridge.drain(env.SHUTDOWN_GRACE_MS);
      if (!drained) log.warn(`shutdown: runs still in flight after SHUTDOWN_GRACE_MS=${env.SHUTDOWN_GRACE_MS}; cancelling them`);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WITHIN_MS)));
      await Promise.race([close(CLOSE_WITHIN_MS / 2), late.then(() => log.warn(`shutdown: closing took over ${CLOSE_WITHIN_MS} ms; exiting anyway`))]);
      clearTimeout(timer);
    },
  };
}

/** The embedded default's Mastra: the demo agent and workflow on `storage`, background tasks and schedules on (the bridge hears of each fire), Mastra's spans when tracing is on. */
async function embeddedMastra(env: ServerEnv, storage: MastraCompositeStore, scaleOut: ScaleOut | undefined, bridge: Bridge): Promise<Mastra> {
  const callLog = env.DEMO_CALL_LOG;
  const onModelCall = callLog ? (call: object) => appendFileSync(callLog, `${JSON.stringify(call)}\n`) : undefined;
  const demo = createDemoAgent({ storage, delayMs: env.DEMO_DELAY_MS, slowTaskMs: env.SLOW_TASK_MS, model: env.MODEL, onModelCall });
  const workflows = { [DEMO_WORKFLOW_ID]: createDemoWorkflow({ delayMs: env.DEMO_DELAY_MS }) };
  const observability = tracingWanted(process.env) ? await mastraSpans(env.MASTRA_SPANS) : undefined;
  return new Mastra({
    agents: { demo },
    workflows,
    storage,
    logger: false,
    backgroundTasks: { enabled: true },
    // Schedules fire once Mastra's workers run (`startServer` starts them), from every process: Mastra's compare-and-swap fires each once.
    scheduler: { enabled: true, tickIntervalMs: env.SCHEDULER_TICK_MS },
    schedules: bridge.scheduleHooks(),
    ...(scaleOut && { pubsub: scaleOut.pubsub }),
    ...(observability && { observability }),
  });
}

function bridgeConfigOf(env: ServerEnv, resolveResourceId: ResolveResourceId | undefined, scaleOut: ScaleOut | undefined): BridgeConfig {
  return {
    prefix: env.AGUI_PREFIX,
    limits: limitsFromEnv(env),
    allowedUrlHosts: env.ALLOWED_URL_HOSTS,
    ...(env.CORS_ORIGINS.length > 0 && { cors: corsFor(env.CORS_ORIGINS) }),
    ...(resolveResourceId && { resolveResourceId }),
    ...(env.IDEMPOTENCY_TTL_MS !== undefined && { idempotencyTtlMs: env.IDEMPOTENCY_TTL_MS }),
    ...(env.WEBHOOK_SECRET && { webhooks: { urls: env.WEBHOOK_URLS, secret: env.WEBHOOK_SECRET } }),
    schedules: { minIntervalSeconds: env.SCHEDULE_MIN_INTERVAL_S, maxPerResource: env.MAX_SCHEDULES_PER_RESOURCE },
    ...(scaleOut && { scaleOut }),
  };
}

/** What the server serves beside the bridge's routes: health and readiness, `/metrics`, the demo page. */
function serveBeside(
  app: Hono,
  bridge: Bridge,
  env: ServerEnv,
  { storage, scaleOut, closing, tokens }: { storage: MastraCompositeStore; scaleOut: ScaleOut | undefined; closing: () => boolean; tokens: boolean },
): void {
  serveHealth(app, { storage, redis: scaleOut?.redis.client, closing, logger: bridge.config.logger });
  // The process's own metrics (CPU, memory, event loop, GC) only here: a library bridge leaves
  // them to its host, which may collect them already.
  bridge.metrics.collectProcessMetrics();
  serveMetrics(app, bridge.metrics, env.METRICS_TOKEN);
  // The page asks for a token when the server wants one, and reads the resource from this claim.
  servePage(app, bridge.config.prefix, tokens ? `bearer:${env.AUTH_RESOURCE_CLAIM ?? 'sub'}` : 'none');
}

function listen(app: Hono, env: ServerEnv): Promise<ServerType> {
  return new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: guarded(app, env), hostname: env.HOST, port: env.PORT, serverOptions: socketTimeouts(env) }, () => {
      s.off('error', reject);
      resolve(s);
    });
    // A failed listen (EADDRINUSE, EACCES) is an 'error' event, not a throw: unheard, it crashes
    // the process with a raw stack instead of main's one-line message and exit code 1.
    s.once('error', reject);
  });
}

/** Listens, or closes what the start opened and throws: a start that failed leaves nothing open. */
async function listenOrClose(app: Hono, env: ServerEnv, opened: ReadonlyArray<{ close(): Promise<unknown> } | undefined>): Promise<ServerType> {
  try {
    return await listen(app, env);
  } catch (error) {
    for (const resource of opened) {
      await resource?.close().catch(() => {
        // the start failed already: that error is the one to report
      });
    }
    throw error;
  }
}

/** Stops listening: the cancelled streams write their terminal event, then idle keep-alive sockets are dropped. */
function closeServer(server: ServerType): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    setTimeout(() => (server as { closeAllConnections?: () => void }).closeAllConnections?.(), 200).unref();
  });
}
