/**
 * mastra-agui-bridge: Mastra agents behind the AG-UI protocol, and Mastra's thread signals over
 * Server-Sent Events.
 *
 * This entry is the public API: `createBridge` and its configuration, the errors it answers with,
 * the wire types of its routes, the chunk → event translator for custom transports, and the
 * Redis scale-out (`createScaleOut`, and `RedisPubSub` for any Mastra app), and the container's
 * ports (`TOKENS` and their interfaces) for implementations of your own. The
 * browser/Node client is `mastra-agui-bridge/client`; the demo agent is `mastra-agui-bridge/demo`.
 *
 * @example
 * import { createBridge } from 'mastra-agui-bridge';
 *
 * const bridge = createBridge({ prefix: '/agui' });
 * const mastra = new Mastra({ agents, storage, server: { apiRoutes: bridge.routes() } });
 *
 * @module
 */
export { createBridge, type Bridge } from './bridge.js';
export {
  BridgeConfigSchema,
  consoleLogger,
  type BridgeConfig,
  type BridgeLogger,
  type CorsOptions,
  type ResolveResourceId,
  type ResolvedConfig,
} from './config.js';
export { BridgeConfigError, BridgeError, type ErrorCode, type ErrorDetail } from './errors.js';
export type { ErrorBody } from './http/errors.js';
export { pinoLogger } from './observability/pino-logger.js';
export type { BridgeMetrics, FollowerJoin, RunOrigin, RunOutcome } from './observability/metrics.js';
export type { RunEnd, RunEndListener, RunIdentity } from './observability/run-tracker.js';
export { traceLogFields } from './observability/trace-context.js';
export type { WebhookPayload, WebhookType } from './webhooks/payload.js';
export type { AgentInfo } from './agents/agent-provider.js';
export { AGUI_CONTEXT_KEY } from './runs/run-service.js';
export type { ThreadInfo } from './threads/thread-store.js';
export type { ThreadMessage } from './translate/thread-message.js';
export type { ToolCallAnswer } from './runs/tool-proxy.js';
export { TOKENS } from './tokens.js';
export { inProcessBindings } from './container.js';
export type { SharedBindings } from './config.js';
export type { NumberedEvent, NumberedListener, ThreadEventLog, ThreadEventLogs } from './feed/event-log.js';
export type { ToolProxy } from './runs/tool-proxy.js';
export type { RunAnnouncement, RunAnnouncements } from './runs/run-announcements.js';
export type { ThreadLocks } from './threads/thread-locks.js';
export type { ThreadControl } from './threads/thread-control.js';
export type { HolderWatch } from './threads/thread-lease.js';
export type { SignalDecision, ThreadTarget } from './mastra/index.js';
export type { RateDecision, RateLimiter } from './limits/rate-limiter.js';
export type { DurableInbox, InboxEntry } from './threads/inbox.js';
export type { IdempotencyRecord, IdempotencyStore } from './idempotency/idempotency-store.js';
export { RunTranslator, type RunTranslatorOptions } from './translate/run-translator.js';
export type { MastraChunk } from './translate/chunks.js';
export { createScaleOut, type ScaleOut, type ScaleOutOptions } from './redis/scale-out.js';
export { RedisPubSub, type RedisPubSubOptions } from './redis/pubsub/index.js';
export {
  apiKeyAuth,
  apiKeyVerifier,
  bearerAuth,
  jwtAuth,
  jwtVerifier,
  mastraAuthResource,
  type BearerAuth,
  type JwtOptions,
  type MastraAuthResourceOptions,
  type TokenVerifier,
} from './auth/index.js';
