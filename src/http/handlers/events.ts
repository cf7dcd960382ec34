import type { Context } from 'hono';
import { z } from 'zod';
import { encoderFor, EventStream } from '../../sse/event-stream.js';
import { parseInput } from '../request.js';
import { IdSchema } from '../../id.js';
import type { Services } from '../services.js';
import { threadScope } from './threads.js';

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

/**
 * `GET /threads/:threadId/events`: the thread's runs as AG-UI events, for as long as the client
 * stays. Resumes after `Last-Event-ID` (header, or `lastEventId` for a reloaded page).
 */
export async function threadEvents(c: Context, s: Services): Promise<Response> {
  const q = parseInput(EventsQuerySchema, c.req.query(), 'query');
  const header = c.req.header('last-event-id');
  const lastEventId = header ? parseInput(seqId, header.trim(), 'header', 'header.last-event-id') : q.lastEventId;
  const scope = await threadScope(c, s, q);
  const { agent } = await s.agents.withMemory(scope.agentId);
  await s.threads.assertNotForeign({ ...scope, agentId: agent.id });
  // A stream slot of the resource until the client goes (`limits.streamsPerResource`, `limits.streams`).
  const release = s.limits.openStream(scope.resourceId);
  const out = new EventStream(encoderFor(c.req.header('accept')), { Connection: 'keep-alive' });
  out.onCancel(release);
  out.raw(`retry: ${s.config.retryMs}\n: connected\n\n`);
  await s.hub.attach({ ...scope, agent }, out, { lastEventId, snapshot: q.snapshot === '1' || q.snapshot === 'true' }).catch((error: unknown) => {
    release();
    throw error;
  });
  return out.response;
}
