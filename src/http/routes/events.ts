import { z } from 'zod';
import { encoderFor, EventStream, nodeResponseOf } from '../../sse/event-stream.js';
import { IdSchema } from '../../id.js';
import { ThreadEventSchema } from '../answers.js';
import { route } from '../route.js';

/**
 * An event id as a client sends it back: a decimal integer that is exact as a JS number. Ids are
 * 16 digits today (see `feedBase`); any such id is valid, and one the thread cannot replay gets a
 * snapshot, so only what cannot be an id at all is refused.
 */
export const seqId = z
  .string()
  .regex(/^\d{1,16}$/, 'must be a decimal integer (digits only, at most 16)')
  .transform(Number)
  .refine(Number.isSafeInteger, `must be at most ${Number.MAX_SAFE_INTEGER}`);

export const EventsQuerySchema = z.object({
  resourceId: IdSchema.optional(),
  agentId: IdSchema.optional(),
  snapshot: z.enum(['0', '1', 'true', 'false']).optional(),
  lastEventId: seqId.optional(),
});

/** `Last-Event-ID`, checked by the same rule as the `lastEventId` query parameter (which it wins over). */
const EventsHeaderSchema = z.object({ 'last-event-id': seqId.optional() });

/**
 * `GET /threads/:threadId/events`: the thread's runs as AG-UI events, for as long as the client
 * stays. Resumes after `Last-Event-ID` (header, or `lastEventId` for a reloaded page).
 */
export const threadEvents = route({
  operationId: 'threadEvents',
  method: 'GET',
  path: '/threads/:threadId/events',
  summary: "Follow a thread's runs as one event stream",
  tag: 'signals',
  query: EventsQuerySchema,
  headers: EventsHeaderSchema,
  ok: {
    200: {
      description: 'Every run on the thread, one `RUN_STARTED … RUN_FINISHED|RUN_ERROR` bracket each; every frame has an `id:`; open until the client leaves.',
      events: { name: 'ThreadEvent', schema: ThreadEventSchema },
    },
  },
  // The open-stream caps (`limits.streamsPerResource`, `limits.streams`).
  errors: ['AGENT_NOT_FOUND', 'MEMORY_NOT_CONFIGURED', 'RATE_LIMITED'],
  uses: ['config', 'hub', 'limits', 'threads', 'workflowThreads', 'workflows'],
  handle: async ({ c, query, headers, scope }, s) => {
    const lastEventId = headers['last-event-id'] ?? query.lastEventId;
    // Another resource's thread is followed as one not stored yet: nothing of it is read, nothing tells it exists.
    const { agent } = await s.threads.own(scope, 'follow');
    // A workflow's thread: its runs are written to the workflow's own feed (docs/workflows.md).
    const workflow = s.workflows.find(scope.agentId);
    const target = workflow ? s.workflowThreads.followTarget(workflow, scope, agent) : { ...scope, agent };
    // A stream slot of the resource until the client goes (`limits.streamsPerResource`, `limits.streams`).
    const release = s.limits.openStream(scope.resourceId);
    const out = new EventStream(encoderFor(c.req.header('accept')), { Connection: 'keep-alive' }, nodeResponseOf(c.env));
    out.onCancel(release);
    out.raw(`retry: ${s.config.retryMs}\n: connected\n\n`);
    await s.hub.attach(target, out, { lastEventId, snapshot: query.snapshot === '1' || query.snapshot === 'true' }).catch((error: unknown) => {
      release();
      throw error;
    });
    return out.response;
  },
});
