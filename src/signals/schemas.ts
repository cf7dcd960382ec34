import { z } from 'zod';
import { IdSchema } from '../id.js';
import { AttributesSchema as attributes, ContentsSchema, MessageSchema, RoutingSchema, SignalTypeSchema, XmlNameSchema as xmlName } from '../signal-shapes.js';

/** Ids as on every route: no control characters or lone surrogates either. */
const id = IdSchema;

/** Who and where: every signal route takes these in its body. */
const target = { resourceId: id.optional(), agentId: id.optional() };
const routing = { ...target, ...RoutingSchema.shape };

export const SendMessageSchema = z
  .object({
    ...routing,
    message: MessageSchema,
  })
  .strict();

export const SignalSchema = z
  .object({
    ...routing,
    type: SignalTypeSchema,
    contents: ContentsSchema,
    tagName: xmlName.optional(),
    attributes: attributes.optional(),
    transient: z.boolean().optional(),
  })
  .strict();

export const StateSignalSchema = z
  .object({
    ...routing,
    id,
    cacheKey: z.string().min(1).max(512),
    contents: ContentsSchema,
    mode: z.enum(['snapshot', 'delta']).optional(),
    value: z.unknown().optional(),
    delta: z.unknown().optional(),
  })
  .strict();

export const NotificationSchema = z
  .object({
    ...target,
    source: z.string().min(1).max(256),
    kind: z.string().min(1).max(256),
    summary: z.string().min(1).max(10_000),
    priority: z.enum(['low', 'medium', 'high', 'urgent']).optional(),
    payload: z.unknown().optional(),
    dedupeKey: z.string().min(1).max(512).optional(),
    coalesceKey: z.string().min(1).max(512).optional(),
    attributes: attributes.optional(),
  })
  .strict();

export const NotificationQuerySchema = z.object({
  ...target,
  status: z.enum(['pending', 'delivered', 'seen', 'dismissed', 'archived', 'discarded', 'failed']).optional(),
});

export const ToolApprovalSchema = z
  .object({ ...target, toolCallId: id, approved: z.boolean(), reason: z.string().max(10_000).optional(), resumeData: z.unknown().optional() })
  .strict();

/** Bodies that carry only the target (abort, cancel) and queries of GET routes. */
export const TargetSchema = z.object(target).strict();
export const TargetQuerySchema = z.object({ ...target });
