import { AgentCapabilitiesSchema, EventSchemas, MessageSchema } from '@ag-ui/core/schemas';
import { z } from 'zod';
import type { AgentInfo } from '../agents/agent-provider.js';
import type { SignalDecision } from '../mastra/index.js';
import type { PendingApproval } from '../signals/thread-approvals.js';
import type { ThreadInfo } from '../threads/thread-store.js';
import type { ThreadMessage } from '../translate/thread-message.js';

// What the routes answer, as zod schemas: the handlers' answers are typed by them and the OpenAPI
// document describes them (on their input side: what goes over the wire). Each `satisfies` keeps a
// schema and the type the service returns from drifting apart.

/** A date: a `Date` in the service, its ISO string on the wire. */
const wireDate = z.codec(z.iso.datetime(), z.date(), { decode: (text) => new Date(text), encode: (date) => date.toISOString() });

export const ThreadInfoSchema = z.object({
  id: z.string(),
  resourceId: z.string(),
  title: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  metadata: z.record(z.string(), z.unknown()).optional(),
}) satisfies z.ZodType<ThreadInfo>;

export const AgentInfoSchema = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(['agent', 'workflow']),
  description: z.string().optional(),
  model: z.object({ provider: z.string(), name: z.string() }).optional(),
  default: z.boolean(),
  capabilities: AgentCapabilitiesSchema,
}) satisfies z.ZodType<AgentInfo>;

export const ThreadMessageSchema = z.object({
  id: z.string(),
  role: z.string(),
  content: z.unknown(),
  createdAt: z.string(),
  threadId: z.string(),
}) satisfies z.ZodType<ThreadMessage>;

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
    createdAt: wireDate,
    updatedAt: wireDate,
  })
  .loose();

/** `POST …/notifications`: the record, what the delivery policy decided, and the run it woke. */
export const NotificationAnswerSchema = z.object({
  record: NotificationRecordSchema,
  decision: z.object({ action: z.enum(['deliver', 'queue', 'defer', 'summarize', 'persist', 'discard']), reason: z.string().optional() }).loose(),
  runId: z.string().optional(),
});

export const PendingApprovalSchema = z.object({
  runId: z.string(),
  toolCallId: z.string(),
  toolName: z.string(),
  args: z.unknown(),
}) satisfies z.ZodType<PendingApproval>;

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
