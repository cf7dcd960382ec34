import 'reflect-metadata';
import type { Mastra } from '@mastra/core';
import { Container, ContainerModule, type ServiceIdentifier } from 'inversify';
import type { ResolvedConfig } from './config.js';
import type { ThreadEventLogs } from './feed/event-log.js';
import { InProcessEventLogs } from './feed/in-process-event-log.js';
import { HANDLER_SERVICES, type HandlerServices, type Services } from './http/services.js';
import { createUrlPolicy } from './http/url-policy.js';
import { MastraIdempotencyStore, type IdempotencyStore } from './idempotency/idempotency-store.js';
import { InProcessRunAnnouncements, type RunAnnouncements } from './runs/run-announcements.js';
import { InProcessToolProxy, type ToolProxy } from './runs/tool-proxy.js';
import { MastraInbox, type DurableInbox } from './threads/inbox.js';
import { InboxRecovery } from './signals/inbox-recovery.js';
import type { RunEndListener } from './observability/run-tracker.js';
import { RunEndRecords } from './runs/run-end-records.js';
import { WebhookSender } from './webhooks/webhook-sender.js';
import { lifecycleOf, type Lifecycle } from './lifecycle.js';
import { InProcessThreadControl, type ThreadControl } from './threads/thread-control.js';
import { LocalResumer, type Resumer } from './runs/resume.js';
import { InProcessThreadLocks, type ThreadLocks } from './threads/thread-locks.js';
import { assertDistinctIds } from './workflows/workflow-provider.js';
import { TOKENS } from './tokens.js';
import { Limits } from './limits/limits.js';
import { TokenBucketLimiter, type RateLimiter } from './limits/rate-limiter.js';
import type { BridgeMetrics } from './observability/metrics.js';
import { ScheduleFires } from './schedules/schedule-fires.js';

/**
 * The ports in one process: the default, and what a deployment over shared stores replaces as a
 * whole (`config.scaleOut.bindings`, e.g. `redis/bindings.ts`) or one by one (`config.modules`).
 */
export const inProcessBindings = new ContainerModule(({ bind }) => {
  bind<ThreadEventLogs>(TOKENS.EventLogs).to(InProcessEventLogs);
  bind<ToolProxy>(TOKENS.ToolProxy).to(InProcessToolProxy);
  bind<ThreadLocks>(TOKENS.ThreadLocks).to(InProcessThreadLocks);
  bind<RunAnnouncements>(TOKENS.RunAnnouncements).to(InProcessRunAnnouncements);
  bind<ThreadControl>(TOKENS.ThreadControl).to(InProcessThreadControl);
  bind<Resumer>(TOKENS.Resumer).to(LocalResumer);
  bind<RateLimiter>(TOKENS.RateLimiter).to(TokenBucketLimiter);
});

/**
 * What is bound once whatever the ports are: durable state in Mastra's storage (`IdempotencyStore`,
 * `Inbox`), the limits, and the services that stand behind a token (`InboxCuts`, the run-end
 * listeners).
 */
const services = new ContainerModule(({ bind }) => {
  bind<DurableInbox>(TOKENS.Inbox).to(MastraInbox);
  bind<IdempotencyStore>(TOKENS.IdempotencyStore).to(MastraIdempotencyStore);
  bind(Limits).toResolvedValue(
    (config: ResolvedConfig, rate: RateLimiter, metrics: BridgeMetrics) =>
      // The rate limiter is only asked (and its timer only started) when a rate is configured.
      new Limits(config.limits, config.limits.requestsPerMinute === undefined ? undefined : rate, (limit) => metrics.limitRefused(limit)),
    [TOKENS.Config, TOKENS.RateLimiter, TOKENS.Metrics],
  );
  // The services and their parts have no line here: each is injected by its class, and the
  // container binds a class the first time it is asked for one (`autobind`), a singleton.
  bind(TOKENS.InboxCuts).toService(InboxRecovery);
  bind<RunEndListener>(TOKENS.RunEndListener).toService(RunEndRecords);
});

/** With `config.webhooks`: every run's end goes to the outbox, and this process sends from it. */
const webhooks = new ContainerModule(({ bind }) => {
  bind<RunEndListener>(TOKENS.RunEndListener).toService(WebhookSender);
});

/** What the bridge serves one Mastra instance with: its routes' services, and what runs beside them. */
export interface Served {
  services: Services;
  lifecycle: Lifecycle;
  /** What Mastra's schedule hooks tell the bridge (`bridge.scheduleHooks()`). */
  fires: ScheduleFires;
}

/**
 * Wires the bridge for one Mastra instance, every service a singleton: the in-process ports, or
 * the shared ones of `config.scaleOut` (whose code is loaded only then), then the host's own
 * `config.modules`, which may rebind any port. Handlers get the resolved `Services`; start, drain
 * and shutdown go through the `Lifecycle`.
 *
 * `metrics` is the bridge's, shared by every Mastra instance it serves (one registry per bridge).
 */
export function createServices(config: ResolvedConfig, mastra: Mastra, metrics: BridgeMetrics): Served {
  const container = new Container({ autobind: true, defaultScope: 'Singleton' });
  container.bind(TOKENS.Config).toConstantValue(config);
  container.bind(TOKENS.Mastra).toConstantValue(mastra);
  container.bind(TOKENS.Metrics).toConstantValue(metrics);
  container.load(config.scaleOut?.bindings ?? inProcessBindings, services, ...(config.webhooks ? [webhooks] : []), ...config.modules);
  const ids: Array<[string, ServiceIdentifier]> = Object.entries(HANDLER_SERVICES);
  // Typed by the table it is built from, entry by entry (`HandlerServices`): what `fromEntries` cannot say.
  const handlers = Object.fromEntries(ids.map(([name, id]) => [name, container.get(id)])) as unknown as HandlerServices;
  assertDistinctIds(handlers.agents.entries(), handlers.workflows.entries());
  return {
    services: { ...handlers, config, urlPolicy: createUrlPolicy(config.allowedUrlHosts) },
    lifecycle: lifecycleOf(container, config),
    fires: container.get(ScheduleFires),
  };
}
