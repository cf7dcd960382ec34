import { EventSchemas, MessageSchema } from '@ag-ui/core/schemas';
import { z } from 'zod';
import type { SignalDecision } from '../mastra/index.js';
import { ThreadMessageSchema } from '../translate/thread-message.js';

// What the routes answer, as zod schemas: the handlers' answers are typed by them and the OpenAPI
// document describes them (on their input side: what goes over the wire). A service's own answer
// is declared beside the service, its type `z.infer` of its schema (`ThreadInfoSchema`,
// `AgentInfoSchema`, `ThreadMessageSchema`, `PendingApprovalSchema`); Mastra's, here, kept in step
// with Mastra's type by `satisfies`.

/** A date: a `Date` in the service, its ISO string on the wire. */
const wireDate = z.codec(z.iso.datetime(), z.date(), { decode: (text) => new Date(text), encode: (date) => date.toISOString() });

/** `GET …/messages`: stored rows (`format=mastra`) or AG-UI messages (`format=agui`). */
export const HistorySchema = z.union([z.array(ThreadMessageSchema), z.array(MessageSchema)]);

/** Mastra's routing decision: what every signal route answers. */
export const SignalDecisionSchema = z.object({
  action: z.enum(['wake', 'deliver', 'persist', 'discard', 'blocked']),
  runId: z.string().optional(),
  signalId: z.string(),
}) satisfies z.ZodType<SignalDecision>;

export const StateSkippedSchema = z.object({ skipped: z.literal(true), reason: z.string() });

/** A notification as Mastra's notifications domain keeps it (the fields a client reads; others pass through). */
export const NotificationRecordSchema = z
  .object({
    id: z.string(),
    threadId: z.string(),
    source: z.string(),
    kind: z.string(),
    priority: z.enum(['low', 'medium', 'high', 'urgent']),
    status: z.enum(['pending', 'delivered', 'seen', 'dismissed', 'archived', 'discarded', 'failed']),
    summary: z.string(),
    payload: z.unknown().optional(),
    resourceId: z.string().optional(),
    agentId: z.string().optional(),
    dedupeKey: z.string().optional(),
    coalesceKey: z.string().optional(),
    coalescedCount: z.number().optional(),
    // Mastra's attributes may hold `undefined`, which JSON leaves out.
    attributes: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]).optional()).optional(),
    createdAt: wireDate,
    updatedAt: wireDate,
    deliveredAt: wireDate.optional(),
    deliveryReason: z.string().optional(),
    deliveredSignalId: z.string().optional(),
  })
  .loose();

/** `POST …/notifications`: the record, what the delivery policy decided, and the run it woke. */
export const NotificationAnswerSchema = z.object({
  record: NotificationRecordSchema,
  decision: z.object({ action: z.enum(['deliver', 'queue', 'defer', 'summarize', 'persist', 'discard']), reason: z.string().optional() }).loose(),
  runId: z.string().optional(),
});

export const ApprovalAnswerSchema = z.object({ runId: z.string(), toolCallId: z.string() });
export const AbortAnswerSchema = z.object({ aborted: z.boolean() });
export const CancelAnswerSchema = z.object({ cancelled: z.array(z.string()) });
export const AcceptedSchema = z.object({ accepted: z.literal(true) });

/** One frame's `data:` on `POST /run`: an AG-UI event of the one run it streams (`@ag-ui/core`'s own schemas). */
export const RunEventSchema = EventSchemas.meta({
  description: 'One AG-UI event of the run: `RUN_STARTED` first, exactly one `RUN_FINISHED` or `RUN_ERROR` last.',
});

/** One frame's `data:` on a thread's events stream: an AG-UI event of one of the thread's runs, each frame numbered by its SSE `id:`. */
export const ThreadEventSchema = EventSchemas.meta({
  description:
    'One AG-UI event of a run on the thread, inside its `RUN_STARTED … RUN_FINISHED|RUN_ERROR` bracket; the frame carries `id: <n>` (resume with `Last-Event-ID`).',
});
