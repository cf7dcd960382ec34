/**
 * Injection tokens: one per service or shared concern, so the container (and only the container)
 * decides what is bound. The ports (`EventLogs`, `ToolProxy`, `ThreadLocks`, `RunAnnouncements`,
 * `ThreadControl`, `RateLimiter`) are interfaces with an in-process implementation and a Redis one;
 * `IdempotencyStore` and `Inbox` are bound to Mastra's storage. Rebind one with a `ContainerModule`
 * of your own (`createBridge({ modules })`, docs/architecture.md).
 *
 * @example
 * new ContainerModule(({ rebind }) => rebind(TOKENS.EventLogs).to(NatsEventLogs));
 */
export const TOKENS = {
  Config: Symbol.for('mastra-agui-bridge.Config'),
  Mastra: Symbol.for('mastra-agui-bridge.Mastra'),
  AgentProvider: Symbol.for('mastra-agui-bridge.AgentProvider'),
  /** The Mastra workflows served as agents (`WorkflowProvider`). */
  WorkflowProvider: Symbol.for('mastra-agui-bridge.WorkflowProvider'),
  WorkflowRunService: Symbol.for('mastra-agui-bridge.WorkflowRunService'),
  RunService: Symbol.for('mastra-agui-bridge.RunService'),
  RunAnnouncements: Symbol.for('mastra-agui-bridge.RunAnnouncements'),
  ThreadStore: Symbol.for('mastra-agui-bridge.ThreadStore'),
  ThreadLocks: Symbol.for('mastra-agui-bridge.ThreadLocks'),
  ToolProxy: Symbol.for('mastra-agui-bridge.ToolProxy'),
  ResourceResolver: Symbol.for('mastra-agui-bridge.ResourceResolver'),
  SignalRouter: Symbol.for('mastra-agui-bridge.SignalRouter'),
  ThreadHub: Symbol.for('mastra-agui-bridge.ThreadHub'),
  EventLogs: Symbol.for('mastra-agui-bridge.EventLogs'),
  Inbox: Symbol.for('mastra-agui-bridge.Inbox'),
  InboxRecovery: Symbol.for('mastra-agui-bridge.InboxRecovery'),
  /** What cutting a thread's run does to its acknowledged messages (`InboxCuts`, implemented by `InboxRecovery`). */
  InboxCuts: Symbol.for('mastra-agui-bridge.InboxCuts'),
  /** New input on a thread waits behind what recovery answers there (`RecoveryGate`). */
  RecoveryGate: Symbol.for('mastra-agui-bridge.RecoveryGate'),
  IdempotencyStore: Symbol.for('mastra-agui-bridge.IdempotencyStore'),
  ThreadControl: Symbol.for('mastra-agui-bridge.ThreadControl'),
  /** When this process's runs have wound down, their answers stored (`RunEndings`). */
  RunEndings: Symbol.for('mastra-agui-bridge.RunEndings'),
  /** Where a stopped call is resumed (`Resumer`): here, or where its run stopped. */
  Resumer: Symbol.for('mastra-agui-bridge.Resumer'),
  /** What the thread's stopped runs wait on, and new input superseding it (`PendingInterrupts`). */
  PendingInterrupts: Symbol.for('mastra-agui-bridge.PendingInterrupts'),
  /** Requests per minute per resource, counted in this process or for all (`RateLimiter`). */
  RateLimiter: Symbol.for('mastra-agui-bridge.RateLimiter'),
  /** Scale-out only: the Redis connections of the bridge's shared state (`RedisConnection`). */
  Redis: Symbol.for('mastra-agui-bridge.Redis'),
  /** Scale-out only: which thread leases runs of this process hold (`LocalLeases`, Mastra's pub/sub). */
  Leases: Symbol.for('mastra-agui-bridge.Leases'),
  /** Scale-out only: which threads have a run in this process (`LocalThreadRuns`, told by Mastra's pub/sub). */
  ThreadRuns: Symbol.for('mastra-agui-bridge.ThreadRuns'),
  /** Scale-out only: when the process holding a thread lease dies (`HolderWatch`, from the processes' heartbeats). */
  HolderWatch: Symbol.for('mastra-agui-bridge.HolderWatch'),
  /** Caps on callers (`Limits`). */
  Limits: Symbol.for('mastra-agui-bridge.Limits'),
  /** Where every run starts and ends (`RunTracker`): its span, the metrics, the `RunEndListener`s. */
  RunTracker: Symbol.for('mastra-agui-bridge.RunTracker'),
  /** Told of every run's end (`RunEndListener`, any number bound): the webhook outbox is one. */
  RunEndListener: Symbol.for('mastra-agui-bridge.RunEndListener'),
  /** How a thread's cancelled and failed runs ended, kept for its history (`RunEndRecords`, a `RunEndListener` too). */
  RunEndRecords: Symbol.for('mastra-agui-bridge.RunEndRecords'),
  /** The webhooks not yet delivered (`WebhookOutbox`, in Mastra's storage). */
  WebhookOutbox: Symbol.for('mastra-agui-bridge.WebhookOutbox'),
  /** Sends the outbox's webhooks (`WebhookSender`), bound with `config.webhooks` only. */
  WebhookSender: Symbol.for('mastra-agui-bridge.WebhookSender'),
  /** The bridge's Prometheus metrics (`BridgeMetrics`): one registry per bridge. */
  Metrics: Symbol.for('mastra-agui-bridge.Metrics'),
} as const;
