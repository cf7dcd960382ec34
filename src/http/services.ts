import type { ServiceIdentifier } from 'inversify';
import { AgentProvider } from '../agents/agent-provider.js';
import type { ResolvedConfig } from '../config.js';
import { ThreadHub } from '../feed/thread-hub.js';
import type { IdempotencyStore } from '../idempotency/idempotency-store.js';
import { Limits } from '../limits/limits.js';
import { RunService } from '../runs/run-service.js';
import type { ToolProxy } from '../runs/tool-proxy.js';
import { ThreadSchedules } from '../schedules/thread-schedules.js';
import { SignalRouter } from '../signals/signal-router.js';
import { ThreadApprovals } from '../signals/thread-approvals.js';
import { ThreadStops } from '../signals/thread-stops.js';
import type { ThreadLocks } from '../threads/thread-locks.js';
import { ThreadStore } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';
import { WorkflowProvider } from '../workflows/workflow-provider.js';
import { WorkflowRunService } from '../workflows/workflow-run-service.js';
import { WorkflowThreads } from '../workflows/workflow-threads.js';
import { ResourceResolver } from './resource-resolver.js';
import type { UrlPolicy } from './url-policy.js';

declare const portType: unique symbol;

/** A port's token with the interface it is bound to: a symbol carries no type of its own. */
type Port<T> = symbol & { readonly [portType]?: T };
const port = <T>(token: symbol) => token as Port<T>;

/** What the container hands back for an identifier: a service's instance, or the port's interface. */
type Resolved<Id> = Id extends Port<infer T> ? T : Id extends ServiceIdentifier<infer T> ? T : never;

/**
 * What handlers may call, each by what the container resolves it by: a service by its class, a
 * port by its token. `createServices` resolves every entry once; a service the routes need is one
 * line here, and a route names the ones its handler calls (`RouteSpec.uses`). What runs beside the
 * routes (recovery, the webhook sender, the thread control's start) is the `Lifecycle`'s.
 */
export const HANDLER_SERVICES = {
  agents: AgentProvider,
  workflows: WorkflowProvider,
  runs: RunService,
  workflowRuns: WorkflowRunService,
  /** A workflow's thread as followers and readers see it: its state, what it waits on, its feed. */
  workflowThreads: WorkflowThreads,
  threads: ThreadStore,
  proxy: port<ToolProxy>(TOKENS.ToolProxy),
  resources: ResourceResolver,
  signals: SignalRouter,
  /** Tool calls waiting for approval, and their answers. */
  approvals: ThreadApprovals,
  /** A thread's run stopped, or a queued message cancelled. */
  stops: ThreadStops,
  hub: ThreadHub,
  /** Per-key sections: two requests with one `Idempotency-Key` never run at once (in this process). */
  locks: port<ThreadLocks>(TOKENS.ThreadLocks),
  /** The answers kept for `Idempotency-Key` retries. */
  idempotency: port<IdempotencyStore>(TOKENS.IdempotencyStore),
  /** Mastra's cron on the caller's threads. */
  schedules: ThreadSchedules,
  /** Caps on callers: requests per minute, open streams, runs at once (`config.limits`). */
  limits: Limits,
};

/** The services `HANDLER_SERVICES` names, resolved. */
export type HandlerServices = { [K in keyof typeof HANDLER_SERVICES]: Resolved<(typeof HANDLER_SERVICES)[K]> };

/** What handlers may call: the services, resolved once by the container, and what is built from the config. */
export type Services = HandlerServices & {
  config: ResolvedConfig;
  /** Which URLs in input messages the server may fetch (`config.allowedUrlHosts`), built once. */
  urlPolicy: UrlPolicy;
};
