import type { Context } from 'hono';
import { getAgent, listAgents } from './handlers/agents.js';
import { runAgent } from './handlers/run.js';
import { createThread, deleteThread, getThread, listMessages, listThreads, updateThread } from './handlers/threads.js';
import { threadEvents } from './handlers/events.js';
import {
  abortThread,
  cancelQueued,
  listNotifications,
  pendingApprovals,
  queueMessage,
  sendMessage,
  sendNotification,
  sendSignal,
  sendState,
  toolApproval,
} from './handlers/signals.js';
import { postToolResult } from './handlers/tool-results.js';
import type { Services } from './services.js';

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** One route of the contract: method, path below the prefix, handler. */
export interface RouteDef {
  method: Method;
  path: string;
  handler: (c: Context, services: Services) => Promise<Response>;
  /** Counted against the caller's requests per minute (`limits.requestsPerMinute`): the routes that run or steer agents. */
  limited?: true;
}

/** Every route of the bridge, in one table (paths are relative to the configured prefix). */
export const ROUTES: readonly RouteDef[] = [
  { method: 'POST', path: '/run', handler: runAgent, limited: true },
  { method: 'POST', path: '/runs/:runId/tool-calls/:toolCallId/result', handler: postToolResult, limited: true },
  { method: 'GET', path: '/agents', handler: listAgents },
  { method: 'GET', path: '/agents/:agentId', handler: getAgent },
  { method: 'POST', path: '/threads', handler: createThread },
  { method: 'GET', path: '/threads', handler: listThreads },
  { method: 'GET', path: '/threads/:threadId', handler: getThread },
  { method: 'PATCH', path: '/threads/:threadId', handler: updateThread },
  { method: 'DELETE', path: '/threads/:threadId', handler: deleteThread },
  { method: 'GET', path: '/threads/:threadId/messages', handler: listMessages },
  { method: 'GET', path: '/threads/:threadId/events', handler: threadEvents },
  { method: 'POST', path: '/threads/:threadId/send-message', handler: sendMessage, limited: true },
  { method: 'POST', path: '/threads/:threadId/queue-message', handler: queueMessage, limited: true },
  { method: 'POST', path: '/threads/:threadId/signals', handler: sendSignal, limited: true },
  { method: 'POST', path: '/threads/:threadId/state', handler: sendState, limited: true },
  { method: 'POST', path: '/threads/:threadId/notifications', handler: sendNotification, limited: true },
  { method: 'GET', path: '/threads/:threadId/notifications', handler: listNotifications },
  { method: 'POST', path: '/threads/:threadId/tool-approval', handler: toolApproval, limited: true },
  { method: 'GET', path: '/threads/:threadId/pending-approvals', handler: pendingApprovals },
  { method: 'POST', path: '/threads/:threadId/abort', handler: abortThread, limited: true },
  { method: 'DELETE', path: '/threads/:threadId/queue/:signalId', handler: cancelQueued, limited: true },
];
