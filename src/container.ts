import 'reflect-metadata';
import type { Mastra } from '@mastra/core';
import { Container, ContainerModule, type ServiceIdentifier } from 'inversify';
import { AgentProvider } from './agents/agent-provider.js';
import type { ResolvedConfig } from './config.js';
import type { ThreadEventLogs } from './feed/event-log.js';
import { InProcessEventLogs } from './feed/in-process-event-log.js';
import { FeedFactory } from './feed/feed-factory.js';
import { ThreadHub } from './feed/thread-hub.js';
import { ResourceResolver } from './http/resource-resolver.js';
import { HANDLER_SERVICES, type HandlerServices, type Services } from './http/services.js';
import { createUrlPolicy } from './http/url-policy.js';
import { MastraIdempotencyStore, type IdempotencyStore } from './idempotency/idempotency-store.js';
import { InProcessRunAnnouncements, type RunAnnouncements } from './runs/run-announcements.js';
import { RunAdmission } from './runs/run-admission.js';
import { RunHistory } from './runs/run-history.js';
import { RunReader } from './runs/run-reader.js';
import { RunService } from './runs/run-service.js';
import { RunStreamer } from './runs/run-streamer.js';
import { InProcessToolProxy, type ToolProxy } from './runs/tool-proxy.js';
import { MastraInbox, type DurableInbox } from './threads/inbox.js';
import { InboxRecovery } from './signals/inbox-recovery.js';
import { RunTracker, type RunEndListener } from './observability/run-tracker.js';
import { WebhookOutbox } from './webhooks/webhook-outbox.js';
import { RunEndRecords } from './runs/run-end-records.js';
import { WebhookSender } from './webhooks/webhook-sender.js';
import { RecoveryGate } from './threads/recovery-gate.js';
import { RunEndings } from './threads/run-endings.js';
import { PendingInterrupts } from './threads/pending-interrupts.js';
import { SignalRouter } from './signals/signal-router.js';
import { AcceptedSignals } from './signals/accepted-signals.js';
import { ThreadApprovals } from './signals/thread-approvals.js';
import { ThreadOwnership } from './signals/thread-ownership.js';
import { ThreadStops } from './signals/thread-stops.js';
import { RecoveryRuns } from './signals/recovery-runs.js';
import { InProcessThreadControl, type ThreadControl } from './threads/thread-control.js';
import { LocalResumer, type Resumer } from './runs/resume.js';
import { InProcessThreadLocks, type ThreadLocks } from './threads/thread-locks.js';
import { ThreadStore } from './threads/thread-store.js';
import { assertDistinctIds, WorkflowProvider } from './workflows/workflow-provider.js';
import { WorkflowRunService } from './workflows/workflow-run-service.js';
import { WorkflowStarts } from './workflows/workflow-starts.js';
import { WorkflowStreamer } from './workflows/workflow-streamer.js';
import { WorkflowThreads } from './workflows/workflow-threads.js';
import { TOKENS } from './tokens.js';
import { Limits } from './limits/limits.js';
import { TokenBucketLimiter, type RateLimiter } from './limits/rate-limiter.js';
import type { BridgeMetrics } from './observability/metrics.js';

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
 * The services, bound once whatever the ports are: durable state in Mastra's storage
 * (`IdempotencyStore`, `Inbox`), the limits, and the services the handlers call.
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
  bind(AgentProvider).toSelf();
  bind(WorkflowProvider).toSelf();
  bind(WorkflowRunService).toSelf();
  // The parts of a workflow /run, injected by class.
  bind(WorkflowStarts).toSelf();
  bind(WorkflowStreamer).toSelf();
  bind(WorkflowThreads).toSelf();
  bind(ThreadStore).toSelf();
  bind(ResourceResolver).toSelf();
  bind(RunService).toSelf();
  // The parts of a /run, each injected where it is used (by class, no token: nothing rebinds them).
  bind(RunAdmission).toSelf();
  bind(RunHistory).toSelf();
  bind(RunReader).toSelf();
  bind(RunStreamer).toSelf();
  bind(SignalRouter).toSelf();
  // The parts of the signal routes, injected by class like the parts of a /run.
  bind(ThreadOwnership).toSelf();
  bind(AcceptedSignals).toSelf();
  bind(ThreadApprovals).toSelf();
  bind(ThreadStops).toSelf();
  bind(InboxRecovery).toSelf();
  bind(RecoveryRuns).toSelf();
  bind(TOKENS.InboxCuts).toService(InboxRecovery);
  bind(RecoveryGate).toSelf();
  bind(RunEndings).toSelf();
  bind(PendingInterrupts).toSelf();
  bind(ThreadHub).toSelf();
  bind(FeedFactory).toSelf();
  bind(RunTracker).toSelf();
  bind(RunEndRecords).toSelf();
  bind<RunEndListener>(TOKENS.RunEndListener).toService(RunEndRecords);
  bind(WebhookOutbox).toSelf();
});

/** With `config.webhooks`: every run's end goes to the outbox, and this process sends from it. */
const webhooks = new ContainerModule(({ bind }) => {
  bind(WebhookSender).toSelf();
  bind<RunEndListener>(TOKENS.RunEndListener).toService(WebhookSender);
});

/**
 * Wires the bridge for one Mastra instance, every service a singleton: the in-process ports, or
 * the shared ones of `config.scaleOut` (whose code is loaded only then), then the host's own
 * `config.modules`, which may rebind any port. Handlers get the resolved `Services`.
 *
 * `metrics` is the bridge's, shared by every Mastra instance it serves (one registry per bridge).
 */
export function createServices(config: ResolvedConfig, mastra: Mastra, metrics: BridgeMetrics): Services {
  const container = new Container({ defaultScope: 'Singleton' });
  container.bind(TOKENS.Config).toConstantValue(config);
  container.bind(TOKENS.Mastra).toConstantValue(mastra);
  container.bind(TOKENS.Metrics).toConstantValue(metrics);
  container.load(config.scaleOut?.bindings ?? inProcessBindings, services, ...(config.webhooks ? [webhooks] : []), ...config.modules);
  const ids: Array<[string, ServiceIdentifier]> = Object.entries(HANDLER_SERVICES);
  // Typed by the table it is built from, entry by entry (`HandlerServices`): what `fromEntries` cannot say.
  const handlers = Object.fromEntries(ids.map(([name, id]) => [name, container.get(id)])) as unknown as HandlerServices;
  assertDistinctIds(handlers.agents.entries(), handlers.workflows.entries());
  return {
    ...handlers,
    config,
    urlPolicy: createUrlPolicy(config.allowedUrlHosts),
    ...(config.webhooks && { webhooks: container.get(WebhookSender) }),
  };
}
