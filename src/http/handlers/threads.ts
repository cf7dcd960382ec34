import type { Context } from 'hono';
import type { ThreadScope } from '../../threads/thread-store.js';
import { parseBody, parseInput, pathParam } from '../request.js';
import { AgentQuerySchema, CreateThreadSchema, ListThreadsQuerySchema, MessagesQuerySchema, UpdateThreadSchema } from '../schemas.js';
import type { Services } from '../services.js';

/** The caller's scope on `/threads/:threadId…`: path id, resolved resource, optional agent. */
export async function threadScope(c: Context, s: Services, claimed: { resourceId?: string; agentId?: string }): Promise<ThreadScope> {
  const threadId = pathParam(c, 'threadId');
  const resourceId = await s.resources.resolve(c, claimed.resourceId);
  return { threadId, resourceId, agentId: claimed.agentId };
}

const query = (c: Context) => parseInput(AgentQuerySchema, c.req.query(), 'query');

/** `POST /threads` */
export async function createThread(c: Context, s: Services): Promise<Response> {
  const body = await parseBody(c, CreateThreadSchema, s.config.maxBodyBytes);
  const resourceId = await s.resources.resolve(c, body.resourceId);
  return c.json(await s.threads.create({ ...body, resourceId }), 201);
}

/** `GET /threads?resourceId=` */
export async function listThreads(c: Context, s: Services): Promise<Response> {
  const q = parseInput(ListThreadsQuerySchema, c.req.query(), 'query');
  const resourceId = await s.resources.resolve(c, q.resourceId);
  return c.json(await s.threads.list({ ...q, resourceId }));
}

/** `GET /threads/:threadId` */
export async function getThread(c: Context, s: Services): Promise<Response> {
  return c.json(await s.threads.get(await threadScope(c, s, query(c))));
}

/** `PATCH /threads/:threadId`: title replaced, metadata merged. */
export async function updateThread(c: Context, s: Services): Promise<Response> {
  const body = await parseBody(c, UpdateThreadSchema, s.config.maxBodyBytes);
  const q = query(c);
  const scope = await threadScope(c, s, { resourceId: body.resourceId ?? q.resourceId, agentId: body.agentId ?? q.agentId });
  return c.json(await s.threads.update(scope, { title: body.title, metadata: body.metadata }));
}

/** `DELETE /threads/:threadId` */
export async function deleteThread(c: Context, s: Services): Promise<Response> {
  await s.threads.delete(await threadScope(c, s, query(c)));
  return c.body(null, 204);
}

/** `GET /threads/:threadId/messages?format=mastra|agui` */
export async function listMessages(c: Context, s: Services): Promise<Response> {
  const q = parseInput(MessagesQuerySchema, c.req.query(), 'query');
  const scope = await threadScope(c, s, q);
  const page = { limit: q.limit, offset: q.offset };
  return q.format === 'agui' ? c.json(await s.threads.messages(scope, page, 'agui')) : c.json(await s.threads.messages(scope, page, 'mastra'));
}
