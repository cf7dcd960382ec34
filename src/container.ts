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
import { MastraIdempotencyStore, type IdempotencyStore } from './idempotency/idempotency-store.js';
import { InProcessRunAnnouncements, type RunAnnouncements } from './runs/run-announcements.js';
import { RunService } from './runs/run-service.js';
import { InProcessToolProxy, type ToolProxy } from './runs/tool-proxy.js';
import { MastraInbox, type DurableInbox } from './threads/inbox.js';
import { InboxRecovery } from './signals/inbox-recovery.js';
import { SignalRouter } from './signals/signal-router.js';
import { InProcessThreadControl, type ThreadControl } from './signals/thread-control.js';
import { InProcessThreadLocks, type ThreadLocks } from './threads/thread-locks.js';
import { ThreadStore } from './threads/thread-store.js';
import { TOKENS } from './tokens.js';

/**
 * Wires the bridge for one Mastra instance: every binding in one place, every service a singleton.
 * The state that lives in one process (thread event logs, frontend calls waiting for their answer,
 * thread locks, run announcements) is bound to its in-process implementation here; a deployment
 * over shared stores binds other implementations of the same interfaces, and nothing else changes.
 * The container stays private; handlers get the resolved `Services`.
 */
export function createServices(config: ResolvedConfig, mastra: Mastra): Services {
  const container = new Container({ defaultScope: 'Singleton' });
  container.bind(TOKENS.Config).toConstantValue(config);
  container.bind(TOKENS.Mastra).toConstantValue(mastra);

  // Process-local state, behind interfaces.
  container.bind<ThreadEventLogs>(TOKENS.EventLogs).to(InProcessEventLogs);
  container.bind<ToolProxy>(TOKENS.ToolProxy).to(InProcessToolProxy);
  container.bind<ThreadLocks>(TOKENS.ThreadLocks).to(InProcessThreadLocks);
  container.bind<RunAnnouncements>(TOKENS.RunAnnouncements).to(InProcessRunAnnouncements);
  container.bind<DurableInbox>(TOKENS.Inbox).to(MastraInbox);
  container.bind<ThreadControl>(TOKENS.ThreadControl).to(InProcessThreadControl);
  // Shared through Mastra's storage already: the answers kept for `Idempotency-Key` retries.
  container.bind<IdempotencyStore>(TOKENS.IdempotencyStore).to(MastraIdempotencyStore);

  // Services.
  container.bind(TOKENS.AgentProvider).to(AgentProvider);
  container.bind(TOKENS.ThreadStore).to(ThreadStore);
  container.bind(TOKENS.ResourceResolver).to(ResourceResolver);
  container.bind(TOKENS.RunService).to(RunService);
  container.bind(TOKENS.SignalRouter).to(SignalRouter);
  container.bind(TOKENS.InboxRecovery).to(InboxRecovery);
  container.bind(TOKENS.ThreadHub).to(ThreadHub);
  return {
    config,
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
  };
}
