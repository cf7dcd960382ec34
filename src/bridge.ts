import type { Mastra } from '@mastra/core';
import type { ScheduleHooks } from '@mastra/core/schedules';
import type { ApiRoute } from '@mastra/core/server';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { apiRoute, storageReady } from './mastra/index.js';
import { authenticatorOf } from './auth/bearer-auth.js';
import { resolveConfig, type BridgeConfig, type ResolvedConfig } from './config.js';
import { createServices, type Served } from './container.js';
import { errorResponse } from './http/errors.js';
import { unavailable } from './errors.js';
import { ROUTES } from './http/routes/index.js';
import type { Route } from './http/route.js';
import { serveRoute } from './http/serve-route.js';
import type { Services } from './http/services.js';
import { httpMetrics } from './observability/http-metrics.js';
import { BridgeMetrics } from './observability/metrics.js';
import { requestLog } from './observability/request-log.js';
import { serverSpan } from './observability/server-span.js';
import { errorMessage } from './text.js';
import { WIND_DOWN_MS } from './threads/thread-control.js';
import { drained } from './lifecycle.js';

/** The bridge: its routes for a Mastra server, or a standalone Hono app. */
export interface Bridge {
  /** The resolved configuration (defaults filled in). */
  readonly config: ResolvedConfig;
  /** Routes for `new Mastra({ server: { apiRoutes: bridge.routes() } })`. */
  routes(): ApiRoute[];
  /** A standalone Hono app serving the bridge under `config.prefix`. */
  app(mastra: Mastra): Hono;
  /**
   * Mastra's schedule hooks, for the `Mastra` the bridge serves: each fire of a schedule is counted
   * (`schedule_fires_total`), and a run a fire woke is tracked as runs are (its span, its metrics,
   * its end as a webhook with `origin: "schedule"`). See docs/schedules.md.
   *
   * @example
   * const mastra = new Mastra({ agents, storage, schedules: bridge.scheduleHooks(), server: { apiRoutes: bridge.routes() } });
   */
  scheduleHooks(): ScheduleHooks<Mastra>;
  /**
   * Ends every open run and event stream, and resolves once they have ended (within a few
   * seconds): each run this process streams is cancelled, and what it had is stored (the
   * message that started it, its partial answer); each `/run` and each follower of its thread
   * gets `RUN_FINISHED { outcome: cancelled }`, closing whatever was open first, then the event
   * streams end. `windDownMs` (default 5 s) bounds the wait for the cut runs. Await it before
   * closing the server and the storage.
   */
  shutdown(windDownMs?: number): Promise<void>;
  /**
   * Drains the bridge for a replacement: from now on `/run` and the steering routes answer `503
   * UNAVAILABLE` with `Retry-After` (a balancer sends them to another process), while the runs in
   * flight go on, and so do the requests let in before the drain began; resolves `true` once none
   * is left, or `false` when `graceMs` ran out first. Then call `shutdown()`, which cancels what is
   * left.
   *
   * @example
   * process.on('SIGTERM', async () => {
   *   await bridge.drain(25_000);
   *   await bridge.shutdown();
   *   server.close();
   * });
   */
  drain(graceMs: number): Promise<boolean>;
  /** Threads followed right now (one Mastra subscription each), for health checks and metrics. */
  subscriptionCount(): number;
  /**
   * The bridge's Prometheus metrics (`agui_bridge_*`), on a registry of its own, shared by every
   * Mastra instance the bridge serves. See docs/operations.md.
   */
  readonly metrics: BridgeMetrics;
  /** The metrics in the Prometheus text format, for a `/metrics` route of your own (`metrics.contentType`). */
  metricsText(): Promise<string>;
  /**
   * Sends again the messages a crash left acknowledged and unanswered (the durable inbox), in
   * their order and under their ids; answers how many. Call once at start-up, after the server
   * listens. The standalone server does. On a new database it first waits for the storage's
   * tables, which another process starting at the same time may be creating.
   */
  recover(mastra: Mastra): Promise<number>;
}

/**
 * Creates the bridge. The config is validated here, once (a bad config throws `BridgeConfigError`).
 *
 * @example
 * const bridge = createBridge({ prefix: '/agui', defaultAgentId: 'demo' });
 * // inside a Mastra server:
 * const mastra = new Mastra({ agents, storage, server: { apiRoutes: bridge.routes() } });
 * // or standalone:
 * serve({ fetch: bridge.app(mastra).fetch, port: 4111 });
 */
export function createBridge(config: BridgeConfig = {}): Bridge {
  const resolved = resolveConfig(config);
  const metrics = new BridgeMetrics();
  const services = servicesCache(resolved, metrics);
  const gate: Gate = { draining: false, shutDown: false, admitted: 0 };
  // Credentials first (with auth on): no validation, no lookup, for a caller who has none.
  const authenticate = authenticatorOf(resolved.resolveResourceId);
  const handle = routeHandler(resolved, gate, authenticate);
  const observe = observer(resolved, metrics);
  return {
    config: resolved,
    metrics,
    metricsText: () => metrics.text(),
    routes: () => [
      ...ROUTES.map((route) => {
        const pattern = `${resolved.prefix}${route.path}`;
        return apiRoute(pattern, {
          method: route.method,
          middleware: observe(pattern),
          createHandler: async ({ mastra }) => handle(route, services.of(mastra).services),
        });
      }),
    ],
    app: (mastra) => {
      const { services: s } = services.of(mastra);
      const app = new Hono();
      if (resolved.cors) app.use(`${resolved.prefix}/*`, cors(resolved.cors));
      for (const route of ROUTES) {
        const pattern = `${resolved.prefix}${route.path}`;
        app.on(route.method, pattern, ...observe(pattern), handle(route, s));
      }
      app.notFound((c) => c.json({ error: `No route ${c.req.method} ${c.req.path}`, code: 'NOT_FOUND' }, 404));
      app.onError((error, c) => errorResponse(c, error, resolved.logger));
      return app;
    },
    scheduleHooks: () => ({
      onFinish: (ctx) => services.of(ctx.mastra).fires.finished(ctx),
      onError: (ctx) => services.of(ctx.mastra).fires.failed(ctx),
      onAbort: (ctx) => services.of(ctx.mastra).fires.aborted(ctx),
    }),
    subscriptionCount: () => services.all().reduce((sum, { lifecycle }) => sum + lifecycle.subscriptionCount, 0),
    recover: async (mastra) => {
      // Several processes started at once on a new database: one of them creates the tables, the
      // others wait for it instead of failing their first read.
      await storageReady(mastra, {
        onRetry: (error, waitMs) => resolved.logger.warn(`storage is not ready (${errorMessage(error)}); trying again in ${waitMs} ms`),
      });
      return services.of(mastra).lifecycle.recover();
    },
    drain: (graceMs) => {
      gate.draining = true;
      return drained(
        () => services.all().map((served) => served.lifecycle),
        graceMs,
        () => gate.admitted === 0,
      );
    },
    shutdown: async (windDownMs = WIND_DOWN_MS) => {
      gate.shutDown = true;
      await Promise.all(services.all().map(({ lifecycle }) => lifecycle.shutdown(windDownMs)));
    },
  };
}

/** Checks a request's credentials (with auth on); throws `401`/`403`. */
type Authenticate = (c: Context) => Promise<unknown>;

/** Whether the process still takes work: draining, it refuses what starts work; shut down, everything. */
interface Gate {
  draining: boolean;
  shutDown: boolean;
  /**
   * Requests that start work, let in and not yet answered. A drain waits for them: one let in just
   * before the drain began is still being checked and stored, and takes its run slot only then.
   */
  admitted: number;
}

/** The services of each Mastra instance the bridge serves, created and started on first use. */
function servicesCache(resolved: ResolvedConfig, metrics: BridgeMetrics): { of: (mastra: Mastra) => Served; all: () => Served[] } {
  const served = new Map<Mastra, Served>();
  return {
    of: (mastra) => {
      let s = served.get(mastra);
      if (!s) {
        served.set(mastra, (s = createServices(resolved, mastra, metrics)));
        s.lifecycle.start();
      }
      return s;
    },
    all: () => [...served.values()],
  };
}

/** A route's handler: the gate, credentials, then the route's own steps (`serveRoute`); every error is an answer. */
function routeHandler(resolved: ResolvedConfig, gate: Gate, authenticate: Authenticate | undefined) {
  return (route: Route, s: Services) => {
    const serve = serveRoute(route, s);
    return async (c: Context) => {
      try {
        // Before credentials: a draining process answers the same to everyone, and checks nothing.
        // Draining, it still serves reads and event streams; shut down, nothing (it is going away).
        if ((gate.draining && route.startsWork) || gate.shutDown) throw unavailable('This server is shutting down; try again', 1);
        if (route.startsWork) gate.admitted++;
        try {
          await authenticate?.(c);
          return await serve(c);
        } finally {
          if (route.startsWork) gate.admitted--;
        }
      } catch (error) {
        return errorResponse(c, error, resolved.logger);
      }
    };
  };
}

/**
 * The middlewares of a route, per route so that they know its pattern (never the concrete path).
 * The server span comes first: the request's log lines and its run are inside it.
 */
function observer(resolved: ResolvedConfig, metrics: BridgeMetrics) {
  return (pattern: string): [MiddlewareHandler, MiddlewareHandler, MiddlewareHandler] => [
    serverSpan(pattern, resolved.tracerProvider),
    requestLog(resolved.logger, pattern),
    httpMetrics(metrics, pattern),
  ];
}
