import { z } from 'zod';
import { IdSchema } from '../id.js';
import { MAX_JSON_DEPTH, nestingExceeds } from './json-depth.js';
import { jsonSchemaProblem } from './json-schema-check.js';

/** An id as every route takes it (`IdSchema`). */
const id = IdSchema;

/**
 * `RunAgentInput` fields that become ids in Mastra's storage and on the wire (`RUN_STARTED`): AG-UI's
 * own schema leaves them unbounded, so a 900,000-character `threadId` would create a thread no
 * route can reach. Checked after `RunAgentInputSchema`, so only the limits are added here.
 */
export const RunIdsSchema = z
  .object({
    threadId: id,
    runId: id,
    parentRunId: id.optional(),
    messages: z.array(
      z
        .object({
          id,
          toolCallId: id.optional(),
          toolCalls: z.array(z.object({ id }).loose()).optional(),
        })
        .loose(),
    ),
    resume: z.array(z.object({ interruptId: id }).loose()).optional(),
  })
  .loose();

/**
 * Mastra's `MemoryConfig` keys a run may set, with their types: a wrong type fails inside Mastra
 * after the stream opened, so it is refused here. Keys Mastra may add later pass through.
 */
const MemoryOptionsSchema = z
  .object({
    readOnly: z.boolean(),
    lastMessages: z.union([z.number().int().min(0).max(1_000_000), z.literal(false)]),
    semanticRecall: z.union([z.boolean(), z.record(z.string(), z.unknown())]),
    workingMemory: z.record(z.string(), z.unknown()),
    observationalMemory: z.union([z.boolean(), z.record(z.string(), z.unknown())]),
    generateTitle: z.union([z.boolean(), z.record(z.string(), z.unknown())]),
    filterIncompleteToolCalls: z.boolean(),
    retainFullInput: z.boolean(),
    messageHistory: z.record(z.string(), z.unknown()),
    threads: z.record(z.string(), z.unknown()),
  })
  .partial()
  .loose();

/** How large a `structuredOutput` schema may be, as JSON text: it is sent to the model on every step. */
export const MAX_STRUCTURED_OUTPUT_CHARS = 64 * 1024;

/** What a `/run` does on a thread that is already running (`forwardedProps.multitask`). */
export const MULTITASK_MODES = ['enqueue', 'reject', 'interrupt'] as const;

/** What `RunAgentInput.forwardedProps` may carry for the bridge; other keys are left alone. */
export const ForwardedPropsSchema = z
  .object({
    agentId: id.optional(),
    resourceId: id.optional(),
    memoryOptions: MemoryOptionsSchema.optional(),
    // One transform rather than a union of object | string: a failed union answers a bare
    // "Invalid input", and the client would never see what structuredOutput should be.
    structuredOutput: z
      .unknown()
      .transform((value, ctx): Record<string, unknown> => {
        let parsed = value;
        // JSON text escapes the body's nesting limit: the same limits apply to it before it is parsed.
        if (typeof value === 'string' && (value.length > MAX_STRUCTURED_OUTPUT_CHARS || nestingExceeds(value, MAX_JSON_DEPTH))) {
          ctx.addIssue({
            code: 'custom',
            message: `structuredOutput JSON text must be at most ${MAX_STRUCTURED_OUTPUT_CHARS} characters, nested at most ${MAX_JSON_DEPTH} levels`,
          });
          return z.NEVER;
        }
        if (typeof value === 'string') {
          try {
            parsed = JSON.parse(value);
          } catch {
            parsed = undefined;
          }
        }
        if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
          ctx.addIssue({ code: 'custom', message: 'structuredOutput must be a JSON Schema object or its JSON text' });
          return z.NEVER;
        }
        const problem = structuredOutputProblem(parsed);
        if (problem) {
          ctx.addIssue({ code: 'custom', path: problem.path, message: `structuredOutput is not a usable JSON Schema: ${problem.message}` });
          return z.NEVER;
        }
        return parsed as Record<string, unknown>;
      })
      .optional(),
    frontendToolMode: z.enum(['proxy', 'return']).optional(),
    multitask: z.enum(MULTITASK_MODES).optional(),
    /** A workflow run's input data (docs/workflows.md); else it is read from the last user message. */
    input: z.unknown().optional(),
  })
  .loose();

/** Size first (cheap, and it bounds the walk), then the JSON Schema keywords. */
function structuredOutputProblem(schema: object): { path: PropertyKey[]; message: string } | undefined {
  const size = JSON.stringify(schema).length;
  if (size > MAX_STRUCTURED_OUTPUT_CHARS) return { path: [], message: `${size} characters of JSON, at most ${MAX_STRUCTURED_OUTPUT_CHARS}` };
  return jsonSchemaProblem(schema);
}

export const ToolResultBodySchema = z
  .object({ content: z.unknown(), isError: z.boolean().optional() })
  .strict()
  .refine((b) => 'content' in b, {
    message: 'content is required',
    path: ['content'],
  });

export const AgentQuerySchema = z.object({ agentId: id.optional(), resourceId: id.optional() }).loose();

/**
 * Where Mastra keeps a thread-scoped working memory in the thread's metadata. That is the agent's
 * state, written only by a `/run`'s `RunAgentInput.state`, where it is checked against the
 * working-memory schema and reaches followers as a `STATE_SNAPSHOT`: thread metadata may not carry it.
 */
const WORKING_MEMORY_KEY = 'workingMemory';

const metadata = z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
  if (Object.hasOwn(value, WORKING_MEMORY_KEY)) {
    ctx.addIssue({
      code: 'custom',
      path: [WORKING_MEMORY_KEY],
      message: "The thread's working memory is its agent state: send it as RunAgentInput.state on /run",
    });
  }
});

export const CreateThreadSchema = z
  .object({ resourceId: id.optional(), title: z.string().max(1000).optional(), metadata: metadata.optional(), threadId: id.optional(), agentId: id.optional() })
  .strict();

export const UpdateThreadSchema = z
  .object({ title: z.string().max(1000).optional(), metadata: metadata.optional(), resourceId: id.optional(), agentId: id.optional() })
  .strict();

/**
 * How many items a page may skip (`offset` pages of `limit`): Mastra's stores refuse more
 * (`page * perPage > MAX_SAFE_INTEGER / 2`, an `Error`, hence a 500). No store holds that many.
 */
export const MAX_SKIPPED_ITEMS = Math.floor(Number.MAX_SAFE_INTEGER / 2);

/** At most 16 digits before `Number()`: longer digit strings lose precision (and cannot be served). */
const intParam = (min: number) =>
  z
    .string()
    .regex(/^\d{1,16}$/, 'must be a whole number of at most 16 digits')
    .transform(Number)
    .pipe(z.number().int().min(min).max(Number.MAX_SAFE_INTEGER));

/** `offset` counts pages of `limit`: refused when the items it skips are more than a store can skip. */
function pageInRange(q: { limit?: number; offset?: number }, ctx: z.RefinementCtx): void {
  if (q.limit === undefined || q.offset === undefined || q.limit * q.offset <= MAX_SKIPPED_ITEMS) return;
  ctx.addIssue({ code: 'custom', path: ['offset'], message: `offset × limit must be at most ${MAX_SKIPPED_ITEMS} (the items skipped)` });
}

export const ListThreadsQuerySchema = z
  .object({
    // Optional, as on every other route: without it (and without a resolveResourceId hook), `default`.
    resourceId: id.optional(),
    agentId: id.optional(),
    limit: intParam(1).optional(),
    offset: intParam(0).optional(),
  })
  .superRefine(pageInRange);

export const MessagesQuerySchema = z
  .object({
    resourceId: id.optional(),
    agentId: id.optional(),
    limit: intParam(1).optional(),
    offset: intParam(0).optional(),
    format: z.enum(['mastra', 'agui']).default('mastra'),
  })
  .superRefine(pageInRange);
