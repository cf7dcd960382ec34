import { z } from 'zod';
import { IdSchema } from '../id.js';

/** Ids as on every route: no control characters or lone surrogates either. */
const id = IdSchema;
/** XML-safe names: Mastra renders tags and attributes into the prompt as XML. */
const xmlName = z
  .string()
  .max(128)
  .regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/, 'must be XML-safe: start with a letter or "_", then letters, digits, "_", "." or "-"');

const attributes = z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).superRefine((value, ctx) => {
  for (const key of Object.keys(value)) {
    if (!xmlName.safeParse(key).success) ctx.addIssue({ code: 'custom', path: [key], message: `attribute name "${key}" is not XML-safe` });
  }
});

const contentPart = z.union([
  z.object({ type: z.literal('text'), text: z.string() }).strict(),
  z.object({ type: z.literal('file'), data: z.string().min(1), mediaType: z.string().min(1), filename: z.string().optional() }).strict(),
]);

/** Signal contents: non-empty text, or text and file parts. */
export const ContentsSchema = z.union([z.string().min(1, 'contents must not be empty'), z.array(contentPart).min(1)]);

const ifActive = z.object({ behavior: z.enum(['deliver', 'persist', 'discard']).optional(), attributes: attributes.optional() }).strict();
const ifIdle = z.object({ behavior: z.enum(['wake', 'persist', 'discard']).optional(), attributes: attributes.optional() }).strict();

/** Who and where: every signal route takes these in its body. */
const target = { resourceId: id.optional(), agentId: id.optional() };
const routing = { ...target, ifActive: ifActive.optional(), ifIdle: ifIdle.optional() };

export const SendMessageSchema = z
  .object({
    ...routing,
    message: z.union([ContentsSchema, z.object({ contents: ContentsSchema, attributes: attributes.optional() }).strict()]),
  })
  .strict();

export const SignalSchema = z
  .object({
    ...routing,
    type: z.enum(['notification', 'reactive', 'user']),
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
