import { z } from 'zod';
import { IdSchema } from '../id.js';
import { RoutingSchema, SignalTypeSchema } from '../signal-shapes.js';

/** Who and which agent, as every route takes them. */
const target = { resourceId: IdSchema.optional(), agentId: IdSchema.optional() };

/** The schedule's message: what each fire sends into the thread. */
const prompt = z.string().min(1, 'prompt must not be empty').max(10_000, 'prompt must be at most 10,000 characters');
const cron = z.string().min(1).max(200);
const timezone = z.string().min(1).max(100);
const name = z.string().min(1).max(200);
const status = z.enum(['active', 'paused']);
const metadata = z.record(z.string(), z.unknown());

/** `POST /threads/:threadId/schedules`. */
export const CreateScheduleSchema = z
  .object({
    ...target,
    ...RoutingSchema.shape,
    cron,
    prompt,
    timezone: timezone.optional(),
    name: name.optional(),
    signalType: SignalTypeSchema.optional(),
    status: status.optional(),
    metadata: metadata.optional(),
  })
  .strict();

/** `PATCH /schedules/:scheduleId`: what changes; the rest stays. */
export const UpdateScheduleSchema = z
  .object({
    resourceId: IdSchema.optional(),
    ...RoutingSchema.shape,
    cron: cron.optional(),
    prompt: prompt.optional(),
    timezone: timezone.optional(),
    name: name.optional(),
    status: status.optional(),
    metadata: metadata.optional(),
  })
  .strict();

/** `GET /schedules`: the caller's, narrowed. */
export const ListSchedulesQuerySchema = z.object({
  resourceId: IdSchema.optional(),
  agentId: IdSchema.optional(),
  threadId: IdSchema.optional(),
  status: status.optional(),
});

/** The routes of one schedule: only the caller. */
export const ScheduleQuerySchema = z.object({ resourceId: IdSchema.optional() });
export const ScheduleTargetSchema = z.object({ resourceId: IdSchema.optional() }).strict();

/** `GET /schedules/:scheduleId/triggers`. */
export const TriggersQuerySchema = z.object({
  resourceId: IdSchema.optional(),
  limit: z
    .string()
    .regex(/^\d{1,3}$/, 'must be a whole number from 1 to 500')
    .transform(Number)
    .refine((n) => n >= 1 && n <= 500, 'must be from 1 to 500')
    .optional(),
});

const time = z.string().describe('ISO 8601');

/** A schedule as the routes answer it. */
export const ScheduleSchema = z.object({
  id: z.string(),
  agentId: z.string(),
  threadId: z.string(),
  resourceId: z.string(),
  name: z.string().optional(),
  prompt: z.string(),
  cron: z.string(),
  timezone: z.string().optional(),
  signalType: z.string().optional(),
  ifActive: RoutingSchema.shape.ifActive,
  ifIdle: RoutingSchema.shape.ifIdle,
  status,
  nextFireAt: time,
  lastFireAt: time.optional(),
  lastRunId: z.string().optional(),
  createdAt: time,
  updatedAt: time,
  metadata: metadata.optional(),
});

/** One fire, as the routes answer it. */
export const ScheduleTriggerSchema = z.object({
  id: z.string(),
  scheduleId: z.string(),
  runId: z.string().optional(),
  scheduledFireAt: time,
  firedAt: time,
  kind: z.enum(['schedule', 'manual']),
  outcome: z.string(),
  error: z.string().optional(),
});

/** `POST /schedules/:scheduleId/run`. */
export const FiredSchema = z.object({ scheduleId: z.string(), triggeredAt: time });

export type Schedule = z.output<typeof ScheduleSchema>;
export type ScheduleTrigger = z.output<typeof ScheduleTriggerSchema>;
