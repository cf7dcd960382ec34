/**
 * Wire types of the bridge's HTTP routes, as a browser or Node client sees them (JSON: dates are
 * ISO 8601 strings). Declared here rather than imported from the server so the client never pulls
 * server code (zod schemas, Mastra) into a browser bundle. `test/client-types.test-d.ts` (a
 * type-level test) checks that they stay equal to the server's zod schemas and answer types.
 */

import type { AgentCapabilities } from '@ag-ui/core';

/** Attribute values Mastra renders into a signal's XML tag. Names must be XML-safe. */
export type Attributes = Record<string, string | number | boolean | null>;

/** A text part or a file part (base64 `data`) of signal contents. */
export type ContentPart = { type: 'text'; text: string } | { type: 'file'; data: string; mediaType: string; filename?: string };

/** Signal contents: non-empty text, or text and file parts. */
export type Contents = string | ContentPart[];

/** What Mastra does with a signal while the thread runs: join the run, store it, or drop it. */
export interface IfActive {
  behavior?: 'deliver' | 'persist' | 'discard';
  attributes?: Attributes;
}

/** What Mastra does with a signal while the thread is idle: start a run, store it, or drop it. */
export interface IfIdle {
  behavior?: 'wake' | 'persist' | 'discard';
  attributes?: Attributes;
}

/** Routing options every message and signal route takes. */
export interface RoutingOptions {
  ifActive?: IfActive;
  ifIdle?: IfIdle;
}

/** A user message: its contents, or contents with attributes. */
export type MessageInput = Contents | { contents: Contents; attributes?: Attributes };

/** Body of `POST /threads/:threadId/signals` (without `resourceId`/`agentId`, which the client adds). */
export interface SignalInput extends RoutingOptions {
  type: 'notification' | 'reactive' | 'user';
  contents: Contents;
  tagName?: string;
  attributes?: Attributes;
  transient?: boolean;
}

/** Body of `POST /threads/:threadId/state`. An unchanged `cacheKey` is skipped. */
export interface StateSignalInput extends RoutingOptions {
  id: string;
  cacheKey: string;
  contents: Contents;
  mode?: 'snapshot' | 'delta';
  value?: unknown;
  delta?: unknown;
}

export type NotificationPriority = 'low' | 'medium' | 'high' | 'urgent';
export type NotificationStatus = 'pending' | 'delivered' | 'seen' | 'dismissed' | 'archived' | 'discarded' | 'failed';

/** Body of `POST /threads/:threadId/notifications`. */
export interface NotificationInput {
  source: string;
  kind: string;
  summary: string;
  priority?: NotificationPriority;
  payload?: unknown;
  dedupeKey?: string;
  coalesceKey?: string;
  attributes?: Attributes;
}

/** Mastra's routing decision for a signal. */
export type SignalAction = 'wake' | 'deliver' | 'persist' | 'discard' | 'blocked';

/** The answer of the message and signal routes: `202 { action, runId?, signalId }`. */
export interface SignalDecision {
  action: SignalAction;
  /** The run that was woken or joined, when there is one. */
  runId?: string;
  signalId: string;
}

/** The answer of `POST /state` when the `cacheKey` did not change: `200`. */
export interface StateSkipped {
  skipped: true;
  reason: string;
}

/** A stored notification (Mastra's `NotificationRecord`, dates as ISO strings). */
export interface NotificationRecord {
  id: string;
  threadId: string;
  source: string;
  kind: string;
  priority: NotificationPriority;
  status: NotificationStatus;
  summary: string;
  payload?: unknown;
  resourceId?: string;
  agentId?: string;
  dedupeKey?: string;
  coalesceKey?: string;
  coalescedCount?: number;
  attributes?: Record<string, string | number | boolean | null>;
  createdAt: string;
  updatedAt: string;
  deliveredAt?: string;
  deliveryReason?: string;
  deliveredSignalId?: string;
  [field: string]: unknown;
}

/** The answer of `POST /notifications`: the stored record and Mastra's delivery decision. */
export interface NotificationAnswer {
  record: NotificationRecord;
  decision: { action: string; reason?: string; [field: string]: unknown };
  runId?: string;
}

/** A tool call that waits for approval (`GET /pending-approvals`). */
export interface PendingApproval {
  runId: string;
  toolCallId: string;
  toolName: string;
  args: unknown;
}

/** The answer of `POST /tool-approval`: the run that resumes. */
export interface ToolApprovalAnswer {
  runId: string;
  toolCallId: string;
}

/** A thread (`ThreadInfo`). */
export interface ThreadInfo {
  id: string;
  resourceId: string;
  title?: string;
  createdAt: string;
  updatedAt: string;
  metadata?: Record<string, unknown>;
}

/** A stored message in Mastra form (`GET /messages`, the default format). */
export interface ThreadMessage {
  id: string;
  role: string;
  content: unknown;
  createdAt: string;
  threadId: string;
}

/** An agent the bridge serves (`GET /agents`). */
export interface AgentInfo {
  id: string;
  name: string;
  /** An agent, or a Mastra workflow served as one (`POST /run` runs either). */
  kind: 'agent' | 'workflow';
  description?: string;
  model?: { provider: string; name: string };
  /** Whether a run that names no agent runs this one. */
  default: boolean;
  /** AG-UI's capabilities: what the bridge does for this agent. */
  capabilities: AgentCapabilities;
}

/** One problem with a request field. */
export interface ErrorDetail {
  path: string;
  message: string;
}

/** The body of every error answer. */
export interface ErrorBody {
  error: string;
  code: string;
  details?: ErrorDetail[];
}

/** A `fetch` the client can use instead of the global one (same signature). */
export type FetchFn = (url: string, init: RequestInit) => Promise<Response>;
