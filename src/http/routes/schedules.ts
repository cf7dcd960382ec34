import { z } from 'zod';
import { invalidInput } from '../../errors.js';
import {
  CreateScheduleSchema,
  FiredSchema,
  ListSchedulesQuerySchema,
  ScheduleQuerySchema,
  ScheduleSchema,
  ScheduleTargetSchema,
  ScheduleTriggerSchema,
  TriggersQuerySchema,
  UpdateScheduleSchema,
} from '../../schedules/schemas.js';
import { AgentQuerySchema } from '../schemas.js';
import { answer, route } from '../route.js';

/** What a schedule's own routes answer beyond every route's: only the caller's schedules exist for them. */
const OF_A_SCHEDULE = ['SCHEDULE_NOT_FOUND'] as const;
const SCHEDULE = { description: '`Schedule`', schema: ScheduleSchema };

/** `POST /threads/:threadId/schedules`: Mastra's cron on the caller's thread; each fire is a signal into it. */
export const createSchedule = route({
  operationId: 'createSchedule',
  method: 'POST',
  path: '/threads/:threadId/schedules',
  summary: 'Schedule a message into the thread on a cron',
  tag: 'schedules',
  body: CreateScheduleSchema,
  example: { cron: '0 9 * * *', prompt: 'Plan my day', timezone: 'Europe/Oslo', name: 'morning' },
  ok: { 201: SCHEDULE },
  errors: ['AGENT_NOT_FOUND', 'THREAD_NOT_FOUND', 'MEMORY_NOT_CONFIGURED', 'LIMIT_REACHED'],
  limited: true,
  uses: ['schedules', 'workflows'],
  handle: async ({ scope, body }, s) => {
    if (s.workflows.find(scope.agentId))
      throw invalidInput('A workflow cannot be scheduled on a thread', [{ path: 'agentId', message: `${scope.agentId} is a workflow` }]);
    return answer(201, await s.schedules.create(scope, body));
  },
});

export const threadSchedules = route({
  operationId: 'threadSchedules',
  method: 'GET',
  path: '/threads/:threadId/schedules',
  summary: "The thread's schedules",
  tag: 'schedules',
  query: AgentQuerySchema,
  ok: { 200: { description: '`Schedule[]`, oldest first', schema: z.array(ScheduleSchema) } },
  errors: ['AGENT_NOT_FOUND', 'THREAD_NOT_FOUND', 'MEMORY_NOT_CONFIGURED'],
  uses: ['schedules'],
  handle: async ({ scope }, s) => answer(200, await s.schedules.ofThread(scope)),
});

export const listSchedules = route({
  operationId: 'listSchedules',
  method: 'GET',
  path: '/schedules',
  summary: "The caller's schedules",
  tag: 'schedules',
  query: ListSchedulesQuerySchema,
  ok: { 200: { description: '`Schedule[]`, newest first', schema: z.array(ScheduleSchema) } },
  uses: ['schedules'],
  handle: async ({ query, resourceId }, s) => {
    const { agentId, threadId, status } = query;
    return answer(200, await s.schedules.ofResource(resourceId, { agentId, threadId, status }));
  },
});

export const getSchedule = route({
  operationId: 'getSchedule',
  method: 'GET',
  path: '/schedules/:scheduleId',
  summary: 'A schedule',
  tag: 'schedules',
  query: ScheduleQuerySchema,
  ok: { 200: SCHEDULE },
  errors: [...OF_A_SCHEDULE],
  uses: ['schedules'],
  handle: async ({ params, resourceId }, s) => answer(200, await s.schedules.get(resourceId, params.scheduleId)),
});

export const updateSchedule = route({
  operationId: 'updateSchedule',
  method: 'PATCH',
  path: '/schedules/:scheduleId',
  summary: 'Change a schedule',
  tag: 'schedules',
  body: UpdateScheduleSchema,
  example: { cron: '30 8 * * 1-5', prompt: 'Plan my working day' },
  ok: { 200: SCHEDULE },
  errors: [...OF_A_SCHEDULE],
  limited: true,
  uses: ['schedules'],
  handle: async ({ params, body, resourceId }, s) => {
    const { resourceId: _claimed, ...patch } = body;
    return answer(200, await s.schedules.update(resourceId, params.scheduleId, patch));
  },
});

export const deleteSchedule = route({
  operationId: 'deleteSchedule',
  method: 'DELETE',
  path: '/schedules/:scheduleId',
  summary: 'Delete a schedule',
  tag: 'schedules',
  query: ScheduleQuerySchema,
  ok: { 204: { description: 'Deleted', empty: true } },
  errors: [...OF_A_SCHEDULE],
  limited: true,
  uses: ['schedules'],
  handle: async ({ params, resourceId }, s) => {
    await s.schedules.delete(resourceId, params.scheduleId);
    return { status: 204 as const };
  },
});

/** `POST /schedules/:scheduleId/pause` and `/resume`. */
function statusRoute(operationId: 'pauseSchedule' | 'resumeSchedule', status: 'paused' | 'active') {
  return route({
    operationId,
    method: 'POST',
    path: `/schedules/:scheduleId/${status === 'paused' ? 'pause' : 'resume'}`,
    summary: status === 'paused' ? 'Pause a schedule: it does not fire until resumed' : 'Resume a paused schedule',
    tag: 'schedules',
    body: ScheduleTargetSchema,
    example: {},
    ok: { 200: SCHEDULE },
    errors: [...OF_A_SCHEDULE],
    limited: true,
    uses: ['schedules'],
    handle: async ({ params, resourceId }, s) => answer(200, await s.schedules.setStatus(resourceId, params.scheduleId, status)),
  });
}

export const pauseSchedule = statusRoute('pauseSchedule', 'paused');
export const resumeSchedule = statusRoute('resumeSchedule', 'active');

export const runSchedule = route({
  operationId: 'runSchedule',
  method: 'POST',
  path: '/schedules/:scheduleId/run',
  summary: 'Fire a schedule once, now, whatever its status',
  tag: 'schedules',
  body: ScheduleTargetSchema,
  example: {},
  ok: { 202: { description: '`{ scheduleId, triggeredAt }`', schema: FiredSchema } },
  errors: [...OF_A_SCHEDULE],
  limited: true,
  startsWork: true,
  uses: ['schedules'],
  handle: async ({ params, resourceId }, s) => answer(202, await s.schedules.run(resourceId, params.scheduleId)),
});

export const scheduleTriggers = route({
  operationId: 'scheduleTriggers',
  method: 'GET',
  path: '/schedules/:scheduleId/triggers',
  summary: "A schedule's fires, newest first",
  tag: 'schedules',
  query: TriggersQuerySchema,
  ok: { 200: { description: '`ScheduleTrigger[]`, newest first', schema: z.array(ScheduleTriggerSchema) } },
  errors: [...OF_A_SCHEDULE],
  uses: ['schedules'],
  handle: async ({ params, query, resourceId }, s) => answer(200, await s.schedules.triggers(resourceId, params.scheduleId, query.limit)),
});
