import type { AgentProvider } from '../agents/agent-provider.js';
import type { RunService } from '../runs/run-service.js';
import type { WorkflowProvider } from '../workflows/workflow-provider.js';
import type { WorkflowRunService } from '../workflows/workflow-run-service.js';
import type { WorkflowThreads } from '../workflows/workflow-threads.js';
import type { ResolvedConfig } from '../config.js';
import type { InboxRecovery } from '../signals/inbox-recovery.js';
import type { SignalRouter } from '../signals/signal-router.js';
import type { ThreadApprovals } from '../signals/thread-approvals.js';
import type { ThreadStops } from '../signals/thread-stops.js';
import type { ThreadHub } from '../feed/thread-hub.js';
import type { IdempotencyStore } from '../idempotency/idempotency-store.js';
import type { ThreadLocks } from '../threads/thread-locks.js';
import type { ThreadStore } from '../threads/thread-store.js';
import type { ThreadControl } from '../threads/thread-control.js';
import type { ToolProxy } from '../runs/tool-proxy.js';
import type { Limits } from '../limits/limits.js';
import type { ResourceResolver } from './resource-resolver.js';
import type { UrlPolicy } from './url-policy.js';
import type { WebhookSender } from '../webhooks/webhook-sender.js';

/** What handlers may call: the services, resolved once by the container. */
export interface Services {
  config: ResolvedConfig;
  agents: AgentProvider;
  workflows: WorkflowProvider;
  runs: RunService;
  workflowRuns: WorkflowRunService;
  /** A workflow's thread as followers and readers see it: its state, what it waits on, its feed. */
  workflowThreads: WorkflowThreads;
  threads: ThreadStore;
  proxy: ToolProxy;
  resources: ResourceResolver;
  signals: SignalRouter;
  /** Tool calls waiting for approval, and their answers. */
  approvals: ThreadApprovals;
  /** A thread's run stopped, or a queued message cancelled. */
  stops: ThreadStops;
  /** Sends again what a crash left unanswered, and sweeps out what is answered. */
  recovery: InboxRecovery;
  hub: ThreadHub;
  /** Per-key sections: two requests with one `Idempotency-Key` never run at once (in this process). */
  locks: ThreadLocks;
  /** The answers kept for `Idempotency-Key` retries. */
  idempotency: IdempotencyStore;
  /** Abort, queue and cancel-queued wherever the thread's run runs; started with the bridge. */
  control: ThreadControl;
  /** Caps on callers: requests per minute, open streams, runs at once (`config.limits`). */
  limits: Limits;
  /** Which URLs in input messages the server may fetch (`config.allowedUrlHosts`), built once. */
  urlPolicy: UrlPolicy;
  /** With `config.webhooks`: sends the outbox's webhooks; started with the bridge. */
  webhooks?: WebhookSender;
}
