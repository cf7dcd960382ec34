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
import { parseBody, parseInput, pathParam } from '../request.js';
import type { Services } from '../services.js';
import { threadScope } from './threads.js';

/** Reads a body with `schema` and resolves the caller's scope on the thread. */
async function scoped<T extends { resourceId?: string; agentId?: string }>(c: Context, s: Services, body: T) {
  return { body, scope: await threadScope(c, s, body) };
}

/** `POST /threads/:threadId/send-message` */
export async function sendMessage(c: Context, s: Services): Promise<Response> {
  const { body, scope } = await scoped(c, s, await parseBody(c, SendMessageSchema, s.config.maxBodyBytes));
  return c.json(await s.signals.sendMessage(scope, body), 202);
}

/** `POST /threads/:threadId/queue-message` */
export async function queueMessage(c: Context, s: Services): Promise<Response> {
  const { body, scope } = await scoped(c, s, await parseBody(c, SendMessageSchema, s.config.maxBodyBytes));
  return c.json(await s.signals.queueMessage(scope, body), 202);
}

/** `POST /threads/:threadId/signals` */
export async function sendSignal(c: Context, s: Services): Promise<Response> {
  const { body, scope } = await scoped(c, s, await parseBody(c, SignalSchema, s.config.maxBodyBytes));
  return c.json(await s.signals.signal(scope, body), 202);
}

/** `POST /threads/:threadId/state`: `200 { skipped }` when the cacheKey is unchanged. */
export async function sendState(c: Context, s: Services): Promise<Response> {
  const { body, scope } = await scoped(c, s, await parseBody(c, StateSignalSchema, s.config.maxBodyBytes));
  const result = await s.signals.state(scope, body);
  return 'skipped' in result ? c.json(result, 200) : c.json(result, 202);
}

/** `POST /threads/:threadId/notifications` */
export async function sendNotification(c: Context, s: Services): Promise<Response> {
  const { body, scope } = await scoped(c, s, await parseBody(c, NotificationSchema, s.config.maxBodyBytes));
  return c.json(await s.signals.notify(scope, body), 202);
}

/** `GET /threads/:threadId/notifications?status=` */
export async function listNotifications(c: Context, s: Services): Promise<Response> {
  const q = parseInput(NotificationQuerySchema, c.req.query(), 'query');
  return c.json(await s.signals.listNotifications(await threadScope(c, s, q), q.status));
}

/** `POST /threads/:threadId/tool-approval` */
export async function toolApproval(c: Context, s: Services): Promise<Response> {
  const { body, scope } = await scoped(c, s, await parseBody(c, ToolApprovalSchema, s.config.maxBodyBytes));
  return c.json(await s.signals.toolApproval(scope, body), 202);
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
