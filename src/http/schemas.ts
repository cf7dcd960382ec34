import { z } from 'zod';

const id = z.string().min(1).max(512);

/** What `RunAgentInput.forwardedProps` may carry for the bridge; other keys are left alone. */
export const ForwardedPropsSchema = z
  .object({
    agentId: id.optional(),
    resourceId: id.optional(),
    memoryOptions: z.record(z.string(), z.unknown()).optional(),
    // One transform rather than a union of object | string: a failed union answers a bare
    // "Invalid input", and the client would never see what structuredOutput should be.
    structuredOutput: z
      .unknown()
      .transform((value, ctx): Record<string, unknown> => {
        let parsed = value;
        if (typeof value === 'string') {
          try {
            parsed = JSON.parse(value);
          } catch {
            parsed = undefined;
          }
        }
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
        ctx.addIssue({ code: 'custom', message: 'structuredOutput must be a JSON Schema object or its JSON text' });
        return z.NEVER;
      })
      .optional(),
    frontendToolMode: z.enum(['proxy', 'return']).optional(),
  })
  .loose();

export const ToolResultBodySchema = z.object({ content: z.unknown(), isError: z.boolean().optional() }).strict().refine((b) => 'content' in b, {
  message: 'content is required',
  path: ['content'],
});

export const AgentQuerySchema = z.object({ agentId: id.optional(), resourceId: id.optional() }).loose();

const metadata = z.record(z.string(), z.unknown());

export const CreateThreadSchema = z
  .object({ resourceId: id.optional(), title: z.string().max(1000).optional(), metadata: metadata.optional(), threadId: id.optional(), agentId: id.optional() })
  .strict();

export const UpdateThreadSchema = z
  .object({ title: z.string().max(1000).optional(), metadata: metadata.optional(), resourceId: id.optional(), agentId: id.optional() })
  .strict();

const intParam = (min: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(Number.MAX_SAFE_INTEGER));

export const ListThreadsQuerySchema = z.object({
  resourceId: id,
  agentId: id.optional(),
  limit: intParam(1).optional(),
  offset: intParam(0).optional(),
});

export const MessagesQuerySchema = z.object({
  resourceId: id.optional(),
  agentId: id.optional(),
  limit: intParam(1).optional(),
  offset: intParam(0).optional(),
  format: z.enum(['mastra', 'agui']).default('mastra'),
});

export const PathIdSchema = id;
