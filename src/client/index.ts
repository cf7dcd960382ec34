/**
 * `mastra-agui-bridge/client`: a browser- and Node-friendly client for the bridge. It imports no
 * server code; its only peers are `@ag-ui/client` and `rxjs`.
 *
 * - `BridgeAgent`: an AG-UI `HttpAgent` whose `connectAgent()` follows a thread across runs.
 * - `BridgeClient`: typed helpers for the thread and signal routes.
 * - `followThreadEvents` / `SseParser`: the stream follower and SSE parser underneath.
 *
 * @example
 * import { BridgeAgent, BridgeClient } from 'mastra-agui-bridge/client';
 */
export { BridgeAgent, type BridgeAgentConfig, type BridgeRunParameters } from './agent.js';
export { BridgeClient, type BridgeClientConfig, type Idempotent, type PageOptions } from './client.js';
export { BridgeRequestError } from './errors.js';
export {
  followThreadEvents,
  type ConnectionState,
  type ConnectionStatus,
  type ReconnectOptions,
  type ThreadEventFrame,
  type ThreadEventsOptions,
} from './follow.js';
export { SseParser, type SseChunkResult, type SseMessage } from './sse.js';
export type * from './types.js';
