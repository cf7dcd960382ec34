/**
 * Wire types of the bridge's HTTP routes, as a browser or Node client sees them (JSON: dates are
 * ISO 8601 strings). Each is the wire side (`z.input`) of the zod schema the server validates the
 * request with or answers with, so the two cannot drift. The schemas are imported as types only:
 * erased from the JavaScript, so no server code (zod schemas, Mastra) reaches a client bundle
 * (`test/architecture.test.ts` holds `client/` to that).
 */

import type { z } from 'zod';
import type { AgentInfoSchema } from '../agents/agent-provider.js';
import type { ApprovalAnswerSchema, NotificationAnswerSchema, NotificationRecordSchema, SignalDecisionSchema, StateSkippedSchema } from '../http/answers.js';
import type { ErrorBody as ServerErrorBody } from '../http/errors.js';
import type {
  CreateScheduleSchema,
  FiredSchema,
  ListSchedulesQuerySchema,
  ScheduleSchema,
  ScheduleTriggerSchema,
  UpdateScheduleSchema,
} from '../schedules/schemas.js';
import type { ContentsSchema } from '../signal-shapes.js';
import type { NotificationSchema, SendMessageSchema, SignalSchema, StateSignalSchema } from '../signals/schemas.js';
import type { PendingApprovalSchema } from '../signals/thread-approvals.js';
import type { ThreadInfoSchema } from '../threads/thread-metadata.js';
import type { ThreadMessageSchema } from '../translate/thread-message.js';

/** A route's body as the client sends it: `resourceId` and `agentId` are the client's own options. */
type Body<S extends z.ZodType> = Omit<z.input<S>, 'resourceId' | 'agentId'>;

/** Body of `POST /threads/:threadId/signals` (without `resourceId`/`agentId`, which the client adds). */
export type SignalInput = Body<typeof SignalSchema>;

/** Body of `POST /threads/:threadId/state`. An unchanged `cacheKey` is skipped. */
export type StateSignalInput = Body<typeof StateSignalSchema>;

/** Body of `POST /threads/:threadId/notifications`. */
export type NotificationInput = Body<typeof NotificationSchema>;

/** Signal contents: non-empty text, or text and file parts. */
export type Contents = z.input<typeof ContentsSchema>;

/** A text part or a file part (base64 `data`) of signal contents. */
export type ContentPart = Exclude<Contents, string>[number];

/** Attribute values Mastra renders into a signal's XML tag. Names must be XML-safe. */
export type Attributes = NonNullable<SignalInput['attributes']>;

/** Routing options every message and signal route takes. */
export type RoutingOptions = Pick<SignalInput, 'ifActive' | 'ifIdle'>;

/** What Mastra does with a signal while the thread runs: join the run, store it, or drop it. */
export type IfActive = NonNullable<RoutingOptions['ifActive']>;

/** What Mastra does with a signal while the thread is idle: start a run, store it, or drop it. */
export type IfIdle = NonNullable<RoutingOptions['ifIdle']>;

/** A user message: its contents, or contents with attributes. */
export type MessageInput = Body<typeof SendMessageSchema>['message'];

/** The answer of the message and signal routes: `202 { action, runId? (the run woken or joined), signalId }`. */
export type SignalDecision = z.input<typeof SignalDecisionSchema>;

/** Mastra's routing decision for a signal. */
export type SignalAction = SignalDecision['action'];

/** The answer of `POST /state` when the `cacheKey` did not change: `200`. */
export type StateSkipped = z.input<typeof StateSkippedSchema>;

/** A stored notification (Mastra's `NotificationRecord`, dates as ISO strings). */
export type NotificationRecord = z.input<typeof NotificationRecordSchema>;

export type NotificationPriority = NotificationRecord['priority'];
export type NotificationStatus = NotificationRecord['status'];

/** The answer of `POST /notifications`: the stored record and Mastra's delivery decision. */
export type NotificationAnswer = z.input<typeof NotificationAnswerSchema>;

/** A tool call that waits for approval (`GET /pending-approvals`). */
export type PendingApproval = z.input<typeof PendingApprovalSchema>;

/** The answer of `POST /tool-approval`: the run that resumes. */
export type ToolApprovalAnswer = z.input<typeof ApprovalAnswerSchema>;

/** A thread (`ThreadInfo`). */
export type ThreadInfo = z.input<typeof ThreadInfoSchema>;

/** A stored message in Mastra form (`GET /messages`, the default format). */
export type ThreadMessage = z.input<typeof ThreadMessageSchema>;

/** An agent the bridge serves (`GET /agents`): an agent, or a Mastra workflow served as one. */
export type AgentInfo = z.input<typeof AgentInfoSchema>;

/** Body of `POST /threads/:threadId/schedules` (docs/schedules.md). */
export type ScheduleInput = Body<typeof CreateScheduleSchema>;

/** Body of `PATCH /schedules/:scheduleId`: what changes. */
export type ScheduleChanges = Body<typeof UpdateScheduleSchema>;

/** A schedule on a thread (times as ISO strings). */
export type Schedule = z.input<typeof ScheduleSchema>;

/** One fire of a schedule (`GET /schedules/:scheduleId/triggers`). */
export type ScheduleTrigger = z.input<typeof ScheduleTriggerSchema>;

/** What `GET /schedules` narrows the caller's schedules to. */
export type ScheduleFilter = Omit<z.input<typeof ListSchedulesQuerySchema>, 'resourceId'>;

/** The answer of `POST /schedules/:scheduleId/run`. */
export type ScheduleFired = z.input<typeof FiredSchema>;

/** The body of every error answer. */
export type ErrorBody = ServerErrorBody;

/** One problem with a request field. */
export type ErrorDetail = NonNullable<ErrorBody['details']>[number];

/** A `fetch` the client can use instead of the global one (same signature). */
export type FetchFn = (url: string, init: RequestInit) => Promise<Response>;
