import { z } from 'zod';
import { IdSchema } from '../id.js';

/**
 * How deep a JSON body may nest (arrays and objects). `JSON.parse` itself copes with any depth,
 * but what reads the value afterwards walks it recursively (zod, Mastra's storage and
 * serialisers, `JSON.stringify`), and a few thousand levels overflow the stack there: a
 * `POST /threads` with 5,000-level metadata answered 500 "Maximum call stack size exceeded". No real request
 * needs more than a few dozen levels (a JSON Schema in `structuredOutput`, application state),
 * and 100 keeps every recursive walk far from the stack limit.
 */
export const MAX_JSON_DEPTH = 100;

/**
 * Whether JSON text opens more than `max` arrays/objects at once. One pass over the text, without
 * recursion or parsing: brackets inside strings do not count, and escapes inside strings are
 * skipped. The text need not be valid JSON (a malformed body is refused by `JSON.parse` after).
 *
 * @example
 * nestingExceeds('{"a":[[1]]}', 2); // true (three levels)
 * nestingExceeds('{"a":"[[[["}', 1); // false (brackets in a string)
 */
export function nestingExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === BACKSLASH) i++;
      else if (ch === QUOTE) inString = false;
    } else if (ch === QUOTE) inString = true;
    else if (ch === OPEN_BRACKET || ch === OPEN_BRACE) {
      if (++depth > max) return true;
    } else if (ch === CLOSE_BRACKET || ch === CLOSE_BRACE) depth--;
  }
  return false;
}

const [QUOTE, BACKSLASH, OPEN_BRACKET, CLOSE_BRACKET, OPEN_BRACE, CLOSE_BRACE] = ['"', '\\', '[', ']', '{', '}'].map((c) => c.charCodeAt(0));

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
          ctx.addIssue({ code: 'custom', message: `structuredOutput JSON text must be at most ${MAX_STRUCTURED_OUTPUT_CHARS} characters, nested at most ${MAX_JSON_DEPTH} levels` });
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
  })
  .loose();

/** Size first (cheap, and it bounds the walk), then the JSON Schema keywords. */
function structuredOutputProblem(schema: object): { path: PropertyKey[]; message: string } | undefined {
  const size = JSON.stringify(schema).length;
  if (size > MAX_STRUCTURED_OUTPUT_CHARS) return { path: [], message: `${size} characters of JSON, at most ${MAX_STRUCTURED_OUTPUT_CHARS}` };
  return jsonSchemaProblem(schema);
}

const SCHEMA_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);
/** Keywords whose value is one schema, a map of schemas, or a list of schemas. */
const ONE_SCHEMA = ['additionalProperties', 'additionalItems', 'not', 'contains', 'propertyNames', 'if', 'then', 'else', 'unevaluatedProperties', 'unevaluatedItems'];
const SCHEMA_MAP = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const SCHEMA_LIST = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const isRecord = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * The first keyword of a JSON Schema whose value has the wrong type, by path, or `undefined`.
 * Not a full meta-schema check: the keywords that shape a schema (`type`, the subschema keywords,
 * `required`, `enum`, `pattern`), which Mastra and the model provider would otherwise fail on
 * after the stream opened. Iterative: the body's nesting limit already bounds the walk.
 */
export function jsonSchemaProblem(root: object): { path: PropertyKey[]; message: string } | undefined {
  const stack: Array<{ node: unknown; path: PropertyKey[] }> = [{ node: root, path: [] }];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const { node, path } = next;
    if (typeof node === 'boolean') continue;
    if (!isRecord(node)) return { path, message: 'a schema must be an object or a boolean' };
    const problem = keywordProblem(node);
    if (problem) return { path: [...path, problem.key], message: problem.message };
    for (const key of ONE_SCHEMA) if (key in node) stack.push({ node: node[key], path: [...path, key] });
    for (const key of SCHEMA_MAP) for (const [name, sub] of Object.entries(node[key] ?? {})) stack.push({ node: sub, path: [...path, key, name] });
    const items = Array.isArray(node.items) ? node.items : 'items' in node ? [node.items] : [];
    const lists = SCHEMA_LIST.flatMap((key) => ((node[key] as unknown[] | undefined) ?? []).map((sub, i) => ({ node: sub, path: [...path, key, i] })));
    stack.push(...items.map((sub, i) => ({ node: sub, path: Array.isArray(node.items) ? [...path, 'items', i] : [...path, 'items'] })), ...lists);
  }
  return undefined;
}

/** The shape of the keywords of one schema object (its subschemas are checked by the caller). */
function keywordProblem(node: Record<string, unknown>): { key: string; message: string } | undefined {
  const types = Array.isArray(node.type) ? node.type : node.type === undefined ? [] : [node.type];
  if (types.some((t) => typeof t !== 'string' || !SCHEMA_TYPES.has(t))) return { key: 'type', message: `must be one of ${[...SCHEMA_TYPES].join(', ')}` };
  for (const key of SCHEMA_MAP) if (key in node && !isRecord(node[key])) return { key, message: 'must be an object of schemas' };
  for (const key of SCHEMA_LIST) if (key in node && !(Array.isArray(node[key]) && (node[key] as unknown[]).length > 0)) return { key, message: 'must be a non-empty array of schemas' };
  if ('required' in node && !(Array.isArray(node.required) && node.required.every((r) => typeof r === 'string'))) return { key: 'required', message: 'must be an array of strings' };
  if ('enum' in node && !Array.isArray(node.enum)) return { key: 'enum', message: 'must be an array' };
  for (const key of ['description', 'title', '$ref', 'format']) if (key in node && typeof node[key] !== 'string') return { key, message: 'must be a string' };
  if ('pattern' in node && !compiles(node.pattern)) return { key: 'pattern', message: 'must be a valid regular expression' };
  return undefined;
}

function compiles(pattern: unknown): boolean {
  if (typeof pattern !== 'string') return false;
  try {
    new RegExp(pattern, 'u');
    return true;
  } catch {
    return false;
  }
}

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
    resourceId: id,
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

/** Path ids, and `resourceId`/`agentId` in queries: ids as everywhere (`IdSchema`). */
export { IdSchema };
export const PathIdSchema = id;
