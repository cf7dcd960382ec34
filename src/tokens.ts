/**
 * Injection tokens: one per port or shared value, so the container (and only the container) decides
 * what is bound; a service has no token, it is bound and injected by its class. The ports (`EventLogs`, `ToolProxy`, `ThreadLocks`, `RunAnnouncements`,
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
  RunAnnouncements: Symbol.for('mastra-agui-bridge.RunAnnouncements'),
  ThreadLocks: Symbol.for('mastra-agui-bridge.ThreadLocks'),
  ToolProxy: Symbol.for('mastra-agui-bridge.ToolProxy'),
  EventLogs: Symbol.for('mastra-agui-bridge.EventLogs'),
  Inbox: Symbol.for('mastra-agui-bridge.Inbox'),
  /** What cutting a thread's run does to its acknowledged messages (`InboxCuts`, implemented by `InboxRecovery`). */
  InboxCuts: Symbol.for('mastra-agui-bridge.InboxCuts'),
  IdempotencyStore: Symbol.for('mastra-agui-bridge.IdempotencyStore'),
  ThreadControl: Symbol.for('mastra-agui-bridge.ThreadControl'),
  /** Where a stopped call is resumed (`Resumer`): here, or where its run stopped. */
  Resumer: Symbol.for('mastra-agui-bridge.Resumer'),
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
  /** Told of every run's end (`RunEndListener`, any number bound): the webhook outbox is one. */
  RunEndListener: Symbol.for('mastra-agui-bridge.RunEndListener'),
  /** The bridge's Prometheus metrics (`BridgeMetrics`): one registry per bridge. */
  Metrics: Symbol.for('mastra-agui-bridge.Metrics'),
} as const;
