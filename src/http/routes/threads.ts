import { z } from 'zod';
import { ThreadInfoSchema } from '../../threads/thread-metadata.js';
import { HistorySchema } from '../answers.js';
import { answer, route } from '../route.js';
import { AgentQuerySchema, CreateThreadSchema, ListThreadsQuerySchema, MessagesQuerySchema, UpdateThreadSchema } from '../schemas.js';

export const createThread = route({
  operationId: 'createThread',
  method: 'POST',
  path: '/threads',
  summary: 'Create a thread',
  tag: 'threads',
  body: CreateThreadSchema,
  example: { threadId: 't1', title: 'Trip to Oslo', metadata: { color: 'red' } },
  ok: { 201: { description: '`ThreadInfo`', schema: ThreadInfoSchema } },
  errors: ['AGENT_NOT_FOUND', 'MEMORY_NOT_CONFIGURED', 'CONFLICT'],
  uses: ['threads'],
  handle: async ({ body, resourceId }, s) => answer(201, await s.threads.create({ ...body, resourceId })),
});

export const listThreads = route({
  operationId: 'listThreads',
  method: 'GET',
  path: '/threads',
  summary: "List the resource's threads",
  tag: 'threads',
  query: ListThreadsQuerySchema,
  ok: { 200: { description: '`ThreadInfo[]`', schema: z.array(ThreadInfoSchema) } },
  errors: ['AGENT_NOT_FOUND', 'MEMORY_NOT_CONFIGURED'],
  uses: ['threads'],
  handle: async ({ query, resourceId }, s) => answer(200, await s.threads.list({ ...query, resourceId })),
});

export const getThread = route({
  operationId: 'getThread',
  method: 'GET',
  path: '/threads/:threadId',
  summary: 'Get a thread',
  tag: 'threads',
  query: AgentQuerySchema,
  ok: { 200: { description: '`ThreadInfo`', schema: ThreadInfoSchema } },
  errors: ['AGENT_NOT_FOUND', 'THREAD_NOT_FOUND', 'MEMORY_NOT_CONFIGURED'],
  uses: ['threads'],
  handle: async ({ scope }, s) => answer(200, await s.threads.get(scope)),
});

/** `PATCH /threads/:threadId`: title replaced, metadata merged (caller and agent from the body, else the query). */
export const updateThread = route({
  operationId: 'updateThread',
  method: 'PATCH',
  path: '/threads/:threadId',
  summary: "Replace a thread's title, merge its metadata",
  tag: 'threads',
  query: AgentQuerySchema,
  body: UpdateThreadSchema,
  example: { title: 'Trip to Bergen' },
  ok: { 200: { description: '`ThreadInfo`', schema: ThreadInfoSchema } },
  errors: ['AGENT_NOT_FOUND', 'THREAD_NOT_FOUND', 'MEMORY_NOT_CONFIGURED'],
  uses: ['threads'],
  handle: async ({ scope, body }, s) => answer(200, await s.threads.update(scope, { title: body.title, metadata: body.metadata })),
});

export const deleteThread = route({
  operationId: 'deleteThread',
  method: 'DELETE',
  path: '/threads/:threadId',
  summary: 'Delete a thread',
  tag: 'threads',
  query: AgentQuerySchema,
  ok: { 204: { description: 'Deleted', empty: true } },
  errors: ['AGENT_NOT_FOUND', 'THREAD_NOT_FOUND', 'MEMORY_NOT_CONFIGURED'],
  uses: ['threads'],
  handle: async ({ scope }, s) => {
    await s.threads.delete(scope);
    return { status: 204 as const };
  },
});

export const getState = route({
  operationId: 'getState',
  method: 'GET',
  path: '/threads/:threadId/state',
  summary: "A thread's state: the agent's working memory, or the latest state of a workflow's run",
  tag: 'threads',
  query: AgentQuerySchema,
  ok: { 200: { description: '`{ state }`: `{}` when the thread has none', schema: z.object({ state: z.record(z.string(), z.unknown()) }) } },
  errors: ['AGENT_NOT_FOUND', 'THREAD_NOT_FOUND', 'MEMORY_NOT_CONFIGURED'],
  uses: ['threads', 'workflowThreads', 'workflows'],
  handle: async ({ scope }, s) => {
    const workflow = s.workflows.find(scope.agentId);
    return answer(200, { state: await (workflow ? s.workflowThreads.state(workflow, scope) : s.threads.state(scope)) });
  },
});

export const listMessages = route({
  operationId: 'listMessages',
  method: 'GET',
  path: '/threads/:threadId/messages',
  summary: "A thread's history",
  tag: 'threads',
  query: MessagesQuerySchema,
  ok: { 200: { description: '`ThreadMessage[]`, or AG-UI `Message[]` with `format=agui`', schema: HistorySchema } },
  errors: ['AGENT_NOT_FOUND', 'THREAD_NOT_FOUND', 'MEMORY_NOT_CONFIGURED'],
  uses: ['threads'],
  handle: async ({ scope, query }, s) => {
    const page = { limit: query.limit, offset: query.offset };
    const body = query.format === 'agui' ? await s.threads.messages(scope, page, 'agui') : await s.threads.messages(scope, page, 'mastra');
    return answer(200, body);
  },
});
