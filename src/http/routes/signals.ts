import { z } from 'zod';
import {
  NotificationQuerySchema,
  NotificationSchema,
  SendMessageSchema,
  SignalSchema,
  StateSignalSchema,
  TargetQuerySchema,
  TargetSchema,
  ToolApprovalSchema,
} from '../../signals/schemas.js';
import { invalidInput } from '../../errors.js';
import {
  AbortAnswerSchema,
  ApprovalAnswerSchema,
  CancelAnswerSchema,
  NotificationAnswerSchema,
  NotificationRecordSchema,
  SignalDecisionSchema,
  StateSkippedSchema,
} from '../answers.js';
import { PendingApprovalSchema } from '../../signals/thread-approvals.js';
import { answer, route } from '../route.js';
import type { Services } from '../services.js';
import { contentsUrlDetails } from '../url-policy.js';

type Contents = Parameters<typeof contentsUrlDetails>[0];

/** Refuses file parts whose URL the server would fetch and may not (`allowedUrlHosts`), before anything is sent. */
function assertFetchable(s: Pick<Services, 'urlPolicy'>, contents: Contents, at: string): void {
  const details = contentsUrlDetails(contents, at, s.urlPolicy);
  if (details.length > 0) throw invalidInput('File parts name URLs the server may not fetch', details);
}

/** Where a send-message body keeps its contents: `message` itself, or `message.contents`. */
const messageContents = (message: Contents | { contents: Contents }): [Contents, string] =>
  typeof message === 'object' && 'contents' in message ? [message.contents, 'message.contents'] : [message, 'message'];

const DECISION = { description: "`{ action, runId?, signalId }`: Mastra's routing decision", schema: SignalDecisionSchema };

/**
 * A message route: `message` checked for URLs the server may not fetch, then the router's `send`
 * answers Mastra's decision. `send-message` and `queue-message` differ only in what they call.
 */
function messageRoute(operationId: 'sendMessage' | 'queueMessage', path: `/threads/:threadId/${string}`, summary: string) {
  return route({
    operationId,
    method: 'POST',
    path,
    summary,
    tag: 'signals',
    body: SendMessageSchema,
    example: { message: 'What is the weather in Oslo?' },
    ok: { 202: DECISION },
    errors: ['AGENT_NOT_FOUND', 'THREAD_NOT_FOUND', 'MEMORY_NOT_CONFIGURED', 'CONFLICT'],
    limited: true,
    startsWork: true,
    idempotent: true,
    uses: ['signals', 'urlPolicy'],
    handle: async ({ scope, body }, s) => {
      assertFetchable(s, ...messageContents(body.message));
      return answer(202, await s.signals[operationId](scope, body));
    },
  });
}

export const sendMessage = messageRoute('sendMessage', '/threads/:threadId/send-message', 'Send a message now (wakes an idle thread or joins the active run)');

export const queueMessage = messageRoute('queueMessage', '/threads/:threadId/queue-message', 'Queue a message for the next run');

export const sendSignal = route({
  operationId: 'sendSignal',
  method: 'POST',
  path: '/threads/:threadId/signals',
  summary: 'Send a notification, reactive or user signal',
  tag: 'signals',
  body: SignalSchema,
  example: { type: 'notification', contents: 'Build #7 passed', attributes: { source: 'ci' } },
  ok: { 202: DECISION },
  errors: ['AGENT_NOT_FOUND', 'THREAD_NOT_FOUND', 'MEMORY_NOT_CONFIGURED', 'CONFLICT'],
  limited: true,
  startsWork: true,
  idempotent: true,
  uses: ['signals', 'urlPolicy'],
  handle: async ({ scope, body }, s) => {
    assertFetchable(s, body.contents, 'contents');
    return answer(202, await s.signals.signal(scope, body));
  },
});

/** `POST /threads/:threadId/state`: `200 { skipped }` when the cacheKey is unchanged. */
export const sendState = route({
  operationId: 'sendState',
  method: 'POST',
  path: '/threads/:threadId/state',
  summary: 'Push application state',
  tag: 'signals',
  body: StateSignalSchema,
  example: { id: 'cart', cacheKey: 'v1', contents: 'The cart holds 2 items' },
  ok: { 202: DECISION, 200: { description: '`{ skipped: true, reason: "unchanged" }`: the `cacheKey` did not change', schema: StateSkippedSchema } },
  errors: ['AGENT_NOT_FOUND', 'THREAD_NOT_FOUND', 'MEMORY_NOT_CONFIGURED', 'CONFLICT'],
  limited: true,
  startsWork: true,
  uses: ['signals', 'urlPolicy'],
  handle: async ({ scope, body }, s) => {
    assertFetchable(s, body.contents, 'contents');
    const result = await s.signals.state(scope, body);
    return 'skipped' in result ? answer(200, result) : answer(202, result);
  },
});

export const sendNotification = route({
  operationId: 'sendNotification',
  method: 'POST',
  path: '/threads/:threadId/notifications',
  summary: "Record a notification for Mastra's delivery policy",
  tag: 'signals',
  body: NotificationSchema,
  example: { source: 'ci', kind: 'build', summary: 'Build #7 passed', priority: 'low' },
  ok: { 202: { description: '`{ record, decision, runId? }`', schema: NotificationAnswerSchema } },
  errors: ['AGENT_NOT_FOUND', 'THREAD_NOT_FOUND', 'MEMORY_NOT_CONFIGURED', 'CONFLICT'],
  limited: true,
  startsWork: true,
  idempotent: true,
  uses: ['signals'],
  handle: async ({ scope, body }, s) => answer(202, await s.signals.notify(scope, body)),
});

export const listNotifications = route({
  operationId: 'listNotifications',
  method: 'GET',
  path: '/threads/:threadId/notifications',
  summary: "List a thread's notifications",
  tag: 'signals',
  query: NotificationQuerySchema,
  ok: { 200: { description: '`NotificationRecord[]`', schema: z.array(NotificationRecordSchema) } },
  errors: ['AGENT_NOT_FOUND', 'THREAD_NOT_FOUND', 'MEMORY_NOT_CONFIGURED'],
  uses: ['signals'],
  handle: async ({ scope, query }, s) => answer(200, await s.signals.listNotifications(scope, query.status)),
});

export const toolApproval = route({
  operationId: 'toolApproval',
  method: 'POST',
  path: '/threads/:threadId/tool-approval',
  summary: 'Approve or decline a tool call waiting on the thread',
  tag: 'signals',
  body: ToolApprovalSchema,
  example: { toolCallId: 'call-1', approved: true },
  ok: { 202: { description: '`{ runId, toolCallId }`', schema: ApprovalAnswerSchema } },
  errors: ['AGENT_NOT_FOUND', 'THREAD_NOT_FOUND', 'MEMORY_NOT_CONFIGURED', 'TOOL_CALL_NOT_FOUND', 'CONFLICT'],
  limited: true,
  startsWork: true,
  idempotent: true,
  uses: ['approvals'],
  handle: async ({ scope, body }, s) => answer(202, await s.approvals.toolApproval(scope, body)),
});

export const pendingApprovals = route({
  operationId: 'pendingApprovals',
  method: 'GET',
  path: '/threads/:threadId/pending-approvals',
  summary: 'Tool calls waiting for approval',
  tag: 'signals',
  query: TargetQuerySchema,
  ok: { 200: { description: '`[{ runId, toolCallId, toolName, args }]`', schema: z.array(PendingApprovalSchema) } },
  errors: ['AGENT_NOT_FOUND', 'THREAD_NOT_FOUND', 'MEMORY_NOT_CONFIGURED'],
  uses: ['approvals'],
  handle: async ({ scope }, s) => answer(200, await s.approvals.pendingApprovals(scope)),
});

export const abortThread = route({
  operationId: 'abortThread',
  method: 'POST',
  path: '/threads/:threadId/abort',
  summary: "Abort the thread's active run",
  tag: 'signals',
  body: TargetSchema,
  example: {},
  ok: { 200: { description: '`{ aborted: boolean }`', schema: AbortAnswerSchema } },
  errors: ['AGENT_NOT_FOUND', 'THREAD_NOT_FOUND', 'MEMORY_NOT_CONFIGURED'],
  limited: true,
  startsWork: true,
  uses: ['stops', 'workflowRuns', 'workflows'],
  handle: async ({ scope }, s) => {
    const workflow = s.workflows.find(scope.agentId);
    return answer(200, await (workflow ? s.workflowRuns.abort(scope) : s.stops.abort(scope)));
  },
});

export const cancelQueued = route({
  operationId: 'cancelQueued',
  method: 'DELETE',
  path: '/threads/:threadId/queue/:signalId',
  summary: 'Cancel a queued message',
  tag: 'signals',
  query: TargetQuerySchema,
  ok: { 200: { description: '`{ cancelled: string[] }`', schema: CancelAnswerSchema } },
  errors: ['AGENT_NOT_FOUND', 'THREAD_NOT_FOUND', 'MEMORY_NOT_CONFIGURED'],
  limited: true,
  startsWork: true,
  uses: ['stops'],
  handle: async ({ scope, params }, s) => answer(200, await s.stops.cancelQueued(scope, params.signalId)),
});
