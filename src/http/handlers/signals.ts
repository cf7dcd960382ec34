import type { Context } from 'hono';
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
import { idempotent, type Answer } from '../idempotency.js';
import { parseBody, parseInput, pathParam } from '../request.js';
import type { Services } from '../services.js';
import { contentsUrlDetails } from '../url-policy.js';
import { threadScope } from './threads.js';

type Contents = Parameters<typeof contentsUrlDetails>[0];

/** Refuses file parts whose URL the server would fetch and may not (`allowedUrlHosts`), before anything is sent. */
function assertFetchable(s: Services, contents: Contents, at: string): void {
  const details = contentsUrlDetails(contents, at, s.urlPolicy);
  if (details.length > 0) throw invalidInput('File parts name URLs the server may not fetch', details);
}

/** Where a send-message body keeps its contents: `message` itself, or `message.contents`. */
const messageContents = (message: Contents | { contents: Contents }): [Contents, string] =>
  typeof message === 'object' && 'contents' in message ? [message.contents, 'message.contents'] : [message, 'message'];

/** Reads a body with `schema` and resolves the caller's scope on the thread. */
async function scoped<T extends { resourceId?: string; agentId?: string }>(c: Context, s: Services, body: T) {
  return { body, scope: await threadScope(c, s, body) };
}

/** `202` with the answer of a steering route. */
const accepted = (body: unknown): Answer => ({ status: 202, body });

/** `POST /threads/:threadId/send-message` (`Idempotency-Key` honoured) */
export function sendMessage(c: Context, s: Services): Promise<Response> {
  return idempotent(c, s, 'send-message', SendMessageSchema, async (body, scope) => {
    assertFetchable(s, ...messageContents(body.message));
    return accepted(await s.signals.sendMessage(scope, body));
  });
}

/** `POST /threads/:threadId/queue-message` (`Idempotency-Key` honoured) */
export function queueMessage(c: Context, s: Services): Promise<Response> {
  return idempotent(c, s, 'queue-message', SendMessageSchema, async (body, scope) => {
    assertFetchable(s, ...messageContents(body.message));
    return accepted(await s.signals.queueMessage(scope, body));
  });
}

/** `POST /threads/:threadId/signals` (`Idempotency-Key` honoured) */
export function sendSignal(c: Context, s: Services): Promise<Response> {
  return idempotent(c, s, 'signals', SignalSchema, async (body, scope) => {
    assertFetchable(s, body.contents, 'contents');
    return accepted(await s.signals.signal(scope, body));
  });
}

/** `POST /threads/:threadId/state`: `200 { skipped }` when the cacheKey is unchanged. */
export async function sendState(c: Context, s: Services): Promise<Response> {
  const { body, scope } = await scoped(c, s, await parseBody(c, StateSignalSchema, s.config.maxBodyBytes));
  assertFetchable(s, body.contents, 'contents');
  const result = await s.signals.state(scope, body);
  return 'skipped' in result ? c.json(result, 200) : c.json(result, 202);
}

/** `POST /threads/:threadId/notifications` (`Idempotency-Key` honoured) */
export function sendNotification(c: Context, s: Services): Promise<Response> {
  return idempotent(c, s, 'notifications', NotificationSchema, async (body, scope) => accepted(await s.signals.notify(scope, body)));
}

/** `GET /threads/:threadId/notifications?status=` */
export async function listNotifications(c: Context, s: Services): Promise<Response> {
  const q = parseInput(NotificationQuerySchema, c.req.query(), 'query');
  return c.json(await s.signals.listNotifications(await threadScope(c, s, q), q.status));
}

/** `POST /threads/:threadId/tool-approval` (`Idempotency-Key` honoured) */
export function toolApproval(c: Context, s: Services): Promise<Response> {
  return idempotent(c, s, 'tool-approval', ToolApprovalSchema, async (body, scope) => accepted(await s.signals.toolApproval(scope, body)));
}

/** `GET /threads/:threadId/pending-approvals` */
export async function pendingApprovals(c: Context, s: Services): Promise<Response> {
  const q = parseInput(TargetQuerySchema, c.req.query(), 'query');
  return c.json(await s.signals.pendingApprovals(await threadScope(c, s, q)));
}

/** `POST /threads/:threadId/abort` */
export async function abortThread(c: Context, s: Services): Promise<Response> {
  const { scope } = await scoped(c, s, await parseBody(c, TargetSchema, s.config.maxBodyBytes));
  return c.json(await s.signals.abort(scope));
}

/** `DELETE /threads/:threadId/queue/:signalId` */
export async function cancelQueued(c: Context, s: Services): Promise<Response> {
  const signalId = pathParam(c, 'signalId');
  const q = parseInput(TargetQuerySchema, c.req.query(), 'query');
  return c.json(await s.signals.cancelQueued(await threadScope(c, s, q), signalId));
}
