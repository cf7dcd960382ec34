import { z } from 'zod';

/*
 * The shapes of what a signal carries, declared once as zod schemas: the signal routes check their
 * bodies with them (`signals/schemas.ts`), and the door into Mastra types its signal calls as their
 * `z.infer` (`mastra/signals.ts`). A root module, so that both may import it.
 */

/** The kinds of signal a client may send, or a schedule fire as. */
export const SignalTypeSchema = z.enum(['notification', 'reactive', 'user']);

/** XML-safe names: Mastra renders tags and attributes into the prompt as XML. */
export const XmlNameSchema = z
  .string()
  .max(128)
  .regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/, 'must be XML-safe: start with a letter or "_", then letters, digits, "_", "." or "-"');

/**
 * A signal's attributes: XML-safe names, plain values.
 */
export const AttributesSchema = z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).superRefine((value, ctx) => {
  for (const key of Object.keys(value)) {
    if (!XmlNameSchema.safeParse(key).success) ctx.addIssue({ code: 'custom', path: [key], message: `attribute name "${key}" is not XML-safe` });
  }
});

const contentPart = z.union([
  z.object({ type: z.literal('text'), text: z.string() }).strict(),
  z.object({ type: z.literal('file'), data: z.string().min(1), mediaType: z.string().min(1), filename: z.string().optional() }).strict(),
]);

/**
 * Signal contents: non-empty text, or text and file parts.
 */
export const ContentsSchema = z.union([z.string().min(1, 'contents must not be empty'), z.array(contentPart).min(1)]);

/**
 * Where a signal goes when the thread is running (`ifActive`) or idle (`ifIdle`).
 */
export const RoutingSchema = z.object({
  ifActive: z
    .object({ behavior: z.enum(['deliver', 'persist', 'discard']).optional(), attributes: AttributesSchema.optional() })
    .strict()
    .optional(),
  ifIdle: z
    .object({ behavior: z.enum(['wake', 'persist', 'discard']).optional(), attributes: AttributesSchema.optional() })
    .strict()
    .optional(),
});

/**
 * A message to send into a thread: its contents, or its contents with attributes.
 */
export const MessageSchema = z.union([ContentsSchema, z.object({ contents: ContentsSchema, attributes: AttributesSchema.optional() }).strict()]);
