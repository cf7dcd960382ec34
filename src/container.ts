import 'reflect-metadata';
import type { Mastra } from '@mastra/core';
import { Container } from 'inversify';
import { AgentProvider } from './agents/agent-provider.js';
import type { ResolvedConfig } from './config.js';
import type { ThreadEventLogs } from './feed/event-log.js';
import { InProcessEventLogs } from './feed/in-process-event-log.js';
import { ThreadHub } from './feed/thread-hub.js';
import { ResourceResolver } from './http/resource-resolver.js';
import type { Services } from './http/services.js';
import { createUrlPolicy } from './http/url-policy.js';
import { MastraIdempotencyStore, type IdempotencyStore } from './idempotency/idempotency-store.js';
import { InProcessRunAnnouncements, type RunAnnouncements } from './runs/run-announcements.js';
import { RunService } from './runs/run-service.js';
import { InProcessToolProxy, type ToolProxy } from './runs/tool-proxy.js';
import { MastraInbox, type DurableInbox } from './threads/inbox.js';
import { InboxRecovery } from './signals/inbox-recovery.js';
import { RecoveryGate } from './threads/recovery-gate.js';
import { SignalRouter } from './signals/signal-router.js';
import { InProcessThreadControl, type ThreadControl } from './signals/thread-control.js';
import { InProcessThreadLocks, type ThreadLocks } from './threads/thread-locks.js';
import { ThreadStore } from './threads/thread-store.js';
import { TOKENS } from './tokens.js';
import { Limits } from './limits/limits.js';
import { TokenBucketLimiter, type RateLimiter } from './limits/rate-limiter.js';
import { BridgeMetrics } from './observability/metrics.js';
import { RedisEventLogs } from './redis/event-log.js';
import { RedisRateLimiter } from './redis/rate-limiter.js';
import { RedisRunAnnouncements } from './redis/run-announcements.js';
import type { ScaleOut } from './redis/scale-out.js';
import { RedisThreadControl } from './redis/thread-control.js';
import { RedisThreadLocks } from './redis/thread-locks.js';
import { RedisToolProxy } from './redis/tool-proxy.js';

/**
 * Wires the bridge for one Mastra instance: every binding in one place, every service a singleton.
 * The state that lives in one process (thread event logs, frontend calls waiting for their answer,
 * thread locks, run announcements) is bound to its in-process implementation here; a deployment
 * over shared stores binds other implementations of the same interfaces, and nothing else changes.
 * The container stays private; handlers get the resolved `Services`.
 *
 * `metrics` is the bridge's, shared by every Mastra instance it serves (one registry per bridge);
 * without it the container makes its own.
 */
export function createServices(config: ResolvedConfig, mastra: Mastra, metrics?: BridgeMetrics): Services {
  const container = new Container({ defaultScope: 'Singleton' });
  container.bind(TOKENS.Config).toConstantValue(config);
  container.bind(TOKENS.Mastra).toConstantValue(mastra);
  if (metrics) container.bind(TOKENS.Metrics).toConstantValue(metrics);
  else container.bind(TOKENS.Metrics).to(BridgeMetrics);

  // The state that is per process unless shared: behind interfaces.
  if (config.scaleOut) bindShared(container, config.scaleOut, config);
  else bindInProcess(container);
  container.bind<DurableInbox>(TOKENS.Inbox).to(MastraInbox);
  // Shared through Mastra's storage already: the answers kept for `Idempotency-Key` retries.
  container.bind<IdempotencyStore>(TOKENS.IdempotencyStore).to(MastraIdempotencyStore);

  container
    .bind(TOKENS.Limits)
    .toDynamicValue((context) => new Limits(config.limits, rateLimiter(config), (limit) => context.get<BridgeMetrics>(TOKENS.Metrics).limitRefused(limit)));

  // Services.
  container.bind(TOKENS.AgentProvider).to(AgentProvider);
  container.bind(TOKENS.ThreadStore).to(ThreadStore);
  container.bind(TOKENS.ResourceResolver).to(ResourceResolver);
  container.bind(TOKENS.RunService).to(RunService);
  container.bind(TOKENS.SignalRouter).to(SignalRouter);
  container.bind(TOKENS.InboxRecovery).to(InboxRecovery);
  container.bind(TOKENS.RecoveryGate).to(RecoveryGate);
  container.bind(TOKENS.ThreadHub).to(ThreadHub);
  return {
    config,
    control: container.get<ThreadControl>(TOKENS.ThreadControl),
    agents: container.get<AgentProvider>(TOKENS.AgentProvider),
    runs: container.get<RunService>(TOKENS.RunService),
    threads: container.get<ThreadStore>(TOKENS.ThreadStore),
    proxy: container.get<ToolProxy>(TOKENS.ToolProxy),
    resources: container.get<ResourceResolver>(TOKENS.ResourceResolver),
    signals: container.get<SignalRouter>(TOKENS.SignalRouter),
    recovery: container.get<InboxRecovery>(TOKENS.InboxRecovery),
    hub: container.get<ThreadHub>(TOKENS.ThreadHub),
    locks: container.get<ThreadLocks>(TOKENS.ThreadLocks),
    idempotency: container.get<IdempotencyStore>(TOKENS.IdempotencyStore),
    limits: container.get<Limits>(TOKENS.Limits),
    urlPolicy: createUrlPolicy(config.allowedUrlHosts),
  };
}

/** Requests per minute counted in this process, or in Redis for every process of a deployment. */
function rateLimiter({ limits, scaleOut }: ResolvedConfig): RateLimiter | undefined {
  const perMinute = limits.requestsPerMinute;
  if (perMinute === undefined) return undefined;
  return scaleOut ? new RedisRateLimiter(scaleOut.redis, perMinute) : new TokenBucketLimiter(perMinute);
}

function bindInProcess(container: Container): void {
  container.bind<ThreadEventLogs>(TOKENS.EventLogs).to(InProcessEventLogs);
  container.bind<ToolProxy>(TOKENS.ToolProxy).to(InProcessToolProxy);
  container.bind<ThreadLocks>(TOKENS.ThreadLocks).to(InProcessThreadLocks);
  container.bind<RunAnnouncements>(TOKENS.RunAnnouncements).to(InProcessRunAnnouncements);
  container.bind<ThreadControl>(TOKENS.ThreadControl).to(InProcessThreadControl);
}

/** Several processes on one Redis: the same interfaces, shared. */
function bindShared(container: Container, { redis, pubsub }: ScaleOut, config: ResolvedConfig): void {
  const { logger, replayBufferSize } = config;
  const logs = { replayBufferSize, retainedEvents: Math.max(10 * replayBufferSize, 10_000), idleTtlMs: SHARED_LOG_IDLE_MS, writerLeaseMs: SHARED_LOG_WRITER_LEASE_MS, logger };
  container.bind<ThreadEventLogs>(TOKENS.EventLogs).toConstantValue(new RedisEventLogs(redis, logs));
  container.bind<ToolProxy>(TOKENS.ToolProxy).toConstantValue(new RedisToolProxy(redis, config));
  container.bind<ThreadLocks>(TOKENS.ThreadLocks).toConstantValue(new RedisThreadLocks(redis, config));
  container.bind<RunAnnouncements>(TOKENS.RunAnnouncements).toConstantValue(new RedisRunAnnouncements(redis, config));
  container
    .bind<ThreadControl>(TOKENS.ThreadControl)
    .toDynamicValue((context) => new RedisThreadControl(redis, pubsub, (id) => context.get<AgentProvider>(TOKENS.AgentProvider).get(id), logger));
}

/** A thread's shared log is dropped a day after its last event. */
const SHARED_LOG_IDLE_MS = 24 * 3600 * 1000;
/** How soon another process takes over writing a thread's log when its writer's process dies. */
const SHARED_LOG_WRITER_LEASE_MS = 5000;
