import { createRequire } from 'node:module';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { z } from 'zod';
import {
  NotificationQuerySchema,
  NotificationSchema,
  SendMessageSchema,
  SignalSchema,
  StateSignalSchema,
  TargetQuerySchema,
  TargetSchema,
  ToolApprovalSchema,
} from '../signals/schemas.js';
import type { ErrorCode, ErrorDetail } from '../errors.js';
import { IdSchema } from '../id.js';
import { EventsQuerySchema, seqId } from './handlers/events.js';
import { KeyHeaderSchema } from './idempotency.js';
import { ROUTES, type Method } from './routes.js';
import {
  AgentQuerySchema,
  CreateThreadSchema,
  ForwardedPropsSchema,
  ListThreadsQuerySchema,
  MessagesQuerySchema,
  ToolResultBodySchema,
  UpdateThreadSchema,
} from './schemas.js';

/** Where the document is served, below the prefix. */
export const OPENAPI_PATH = '/openapi.json';

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1) as a plain JSON value. */
export type JsonSchema = { [key: string]: unknown };

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
}

export interface OpenApiResponse {
  description: string;
  content?: Record<string, { schema: JsonSchema }>;
}

export interface OpenApiOperation {
  operationId?: string;
  summary: string;
  tags: string[];
  parameters: OpenApiParameter[];
  requestBody?: { required: boolean; content: { 'application/json': { schema: JsonSchema } } };
  responses: Record<string, OpenApiResponse | { $ref: string }>;
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  tags: { name: string }[];
  paths: Record<string, Partial<Record<Lowercase<Method>, OpenApiOperation>>>;
  security: Array<Record<string, string[]>>;
  components: { schemas: { Error: JsonSchema }; responses: Record<string, OpenApiResponse>; securitySchemes: Record<string, Record<string, string>> };
}

// ---------------------------------------------------------------------------------------------
// The error body
// ---------------------------------------------------------------------------------------------

/** Every `ErrorCode`, as a value: the document's enum. */
const ERROR_CODES = [
  'INVALID_INPUT',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'AGENT_NOT_FOUND',
  'THREAD_NOT_FOUND',
  'RUN_NOT_FOUND',
  'TOOL_CALL_NOT_FOUND',
  'CONFLICT',
  'PAYLOAD_TOO_LARGE',
  'MEMORY_NOT_CONFIGURED',
  'INTERNAL_ERROR',
  'RATE_LIMITED',
  'UNAVAILABLE',
  'NOT_FOUND',
] as const satisfies readonly ErrorCode[];

// `ErrorCode` is a type only: this stops the build when a code is added there and not here.
type NoneLeft<T extends never> = T;
type ErrorCodesListed = NoneLeft<Exclude<ErrorCode, (typeof ERROR_CODES)[number]>>;

/**
 * The wire shape of `ErrorBody` (`http/errors.ts`), which is an interface and has no schema of
 * its own; `satisfies` keeps the two from drifting apart.
 */
const ErrorBodySchema = z.object({
  error: z.string(),
  code: z.enum(ERROR_CODES),
  details: z.array(z.object({ path: z.string(), message: z.string() }) satisfies z.ZodType<ErrorDetail>).optional(),
});

/** The statuses an error may come with, the codes each carries, and when. */
const ERROR_RESPONSES = {
  400: { name: 'BadRequest', codes: ['INVALID_INPUT'], when: 'malformed JSON, a non-JSON body, or a body, query, path id or header that fails its schema' },
  401: { name: 'Unauthorized', codes: ['UNAUTHORIZED'], when: 'the caller was refused: `resolveResourceId` returned no resource, or threw' },
  403: { name: 'Forbidden', codes: ['FORBIDDEN'], when: 'a claimed `resourceId` (body, query or `forwardedProps`) differs from the authenticated one' },
  404: {
    name: 'NotFound',
    codes: ['AGENT_NOT_FOUND', 'THREAD_NOT_FOUND', 'TOOL_CALL_NOT_FOUND'],
    when: "an unknown agent, thread (or another resource's thread) or tool call",
  },
  409: { name: 'Conflict', codes: ['CONFLICT'], when: 'the request clashes with the current state (see docs/api.md)' },
  413: { name: 'PayloadTooLarge', codes: ['PAYLOAD_TOO_LARGE'], when: 'the body is over `maxBodyBytes`' },
  429: { name: 'TooManyRequests', codes: ['RATE_LIMITED'], when: 'a configured limit (requests per minute, open streams, concurrent runs) was reached; `Retry-After` says when to try again' },
  500: { name: 'InternalError', codes: ['MEMORY_NOT_CONFIGURED', 'INTERNAL_ERROR'], when: 'no agent with memory for a thread route, or anything unexpected' },
  503: { name: 'Unavailable', codes: ['UNAVAILABLE'], when: 'a service the answer depends on (the token key server) is unreachable; `Retry-After` says when to try again' },
} as const satisfies Record<number, { name: string; codes: readonly ErrorCode[]; when: string }>;

type ErrorStatus = keyof typeof ERROR_RESPONSES;

// ---------------------------------------------------------------------------------------------
// What each route takes and answers
// ---------------------------------------------------------------------------------------------

/** A success answer: JSON (of this rough shape), an AG-UI event stream, or no body. */
interface Success {
  status: 200 | 201 | 202 | 204;
  description: string;
  body: 'object' | 'array' | 'events' | 'none';
}

/**
 * What the document says of one route. Query, header and body are the zod schemas the handler
 * parses with, so the document cannot describe another input than the one validated.
 */
interface RouteDoc {
  summary: string;
  tag: 'runs' | 'agents' | 'threads' | 'signals' | 'meta';
  query?: z.ZodObject;
  headers?: z.ZodObject;
  body?: z.ZodType;
  ok: Success[];
  /** Beyond 400, 401, 403, 500 and 503 (every route), 413 (every route with a body) and 429 (the rate-limited ones). */
  errors?: ErrorStatus[];
  /** Reads no input and resolves no resource: it has no error answers. */
  open?: true;
}

/** `POST /run`'s body: AG-UI's `RunAgentInput`, with the `forwardedProps` the handler then checks. */
const RunBodySchema = RunAgentInputSchema.extend({ forwardedProps: ForwardedPropsSchema.optional() });
/** `Last-Event-ID`, checked by the same rule as the `lastEventId` query parameter. */
const EventsHeaderSchema = z.object({ 'last-event-id': seqId.optional() });
/** The header is optional: the handler validates it only when it is sent. */
const IdempotencyHeaderSchema = KeyHeaderSchema.partial();

const json = (status: Success['status'], description: string, body: 'object' | 'array' = 'object'): Success => ({ status, description, body });
const EVENTS: Success = { status: 200, description: 'AG-UI events, as Server-Sent Events (or AG-UI protobuf when `Accept` names it)', body: 'events' };
const SIGNAL_ANSWER = json(202, "`{ action, runId?, signalId }`: Mastra's routing decision");

/** Keyed `METHOD path`, as in `ROUTES`; a route without an entry, or an entry without a route, is a startup error. */
const ROUTE_DOCS: Record<string, RouteDoc> = {
  'POST /run': {
    summary: 'Run an agent and stream one AG-UI run',
    tag: 'runs',
    body: RunBodySchema,
    ok: [{ ...EVENTS, description: `One run: \`RUN_STARTED\` first, exactly one \`RUN_FINISHED\` or \`RUN_ERROR\` last. ${EVENTS.description}` }],
    errors: [404, 409],
  },
  'POST /runs/:runId/tool-calls/:toolCallId/result': {
    summary: "Answer a frontend tool call (proxy mode) of the caller's run",
    tag: 'runs',
    query: AgentQuerySchema,
    body: ToolResultBodySchema,
    ok: [json(202, '`{ accepted: true }`')],
    errors: [404, 409],
  },
  'GET /agents': { summary: 'List the agents', tag: 'agents', query: AgentQuerySchema, ok: [json(200, '`AgentInfo[]`', 'array')] },
  'GET /agents/:agentId': { summary: 'Describe one agent', tag: 'agents', query: AgentQuerySchema, ok: [json(200, '`AgentInfo`')], errors: [404] },
  'POST /threads': { summary: 'Create a thread', tag: 'threads', body: CreateThreadSchema, ok: [json(201, '`ThreadInfo`')], errors: [404, 409] },
  'GET /threads': { summary: "List the resource's threads", tag: 'threads', query: ListThreadsQuerySchema, ok: [json(200, '`ThreadInfo[]`', 'array')], errors: [404] },
  'GET /threads/:threadId': { summary: 'Get a thread', tag: 'threads', query: AgentQuerySchema, ok: [json(200, '`ThreadInfo`')], errors: [404] },
  'PATCH /threads/:threadId': {
    summary: "Replace a thread's title, merge its metadata",
    tag: 'threads',
    query: AgentQuerySchema,
    body: UpdateThreadSchema,
    ok: [json(200, '`ThreadInfo`')],
    errors: [404],
  },
  'DELETE /threads/:threadId': { summary: 'Delete a thread', tag: 'threads', query: AgentQuerySchema, ok: [{ status: 204, description: 'Deleted', body: 'none' }], errors: [404] },
  'GET /threads/:threadId/messages': {
    summary: "A thread's history",
    tag: 'threads',
    query: MessagesQuerySchema,
    ok: [json(200, '`ThreadMessage[]`, or AG-UI `Message[]` with `format=agui`', 'array')],
    errors: [404],
  },
  'GET /threads/:threadId/events': {
    summary: "Follow a thread's runs as one event stream",
    tag: 'signals',
    query: EventsQuerySchema,
    headers: EventsHeaderSchema,
    ok: [{ ...EVENTS, description: `Every run on the thread, one \`RUN_STARTED … RUN_FINISHED|RUN_ERROR\` bracket each; every frame has an \`id:\`; open until the client leaves. ${EVENTS.description}` }],
    // The open-stream caps (`limits.streamsPerResource`, `limits.streams`).
    errors: [404, 429],
  },
  'POST /threads/:threadId/send-message': {
    summary: 'Send a message now (wakes an idle thread or joins the active run)',
    tag: 'signals',
    headers: IdempotencyHeaderSchema,
    body: SendMessageSchema,
    ok: [SIGNAL_ANSWER],
    errors: [404, 409],
  },
  'POST /threads/:threadId/queue-message': {
    summary: 'Queue a message for the next run',
    tag: 'signals',
    headers: IdempotencyHeaderSchema,
    body: SendMessageSchema,
    ok: [SIGNAL_ANSWER],
    errors: [404, 409],
  },
  'POST /threads/:threadId/signals': {
    summary: 'Send a notification, reactive or user signal',
    tag: 'signals',
    headers: IdempotencyHeaderSchema,
    body: SignalSchema,
    ok: [SIGNAL_ANSWER],
    errors: [404, 409],
  },
  'POST /threads/:threadId/state': {
    summary: 'Push application state',
    tag: 'signals',
    body: StateSignalSchema,
    ok: [SIGNAL_ANSWER, json(200, '`{ skipped: true, reason: "unchanged" }`: the `cacheKey` did not change')],
    errors: [404, 409],
  },
  'POST /threads/:threadId/notifications': {
    summary: "Record a notification for Mastra's delivery policy",
    tag: 'signals',
    headers: IdempotencyHeaderSchema,
    body: NotificationSchema,
    ok: [json(202, '`{ record, decision, runId? }`')],
    errors: [404, 409],
  },
  'GET /threads/:threadId/notifications': {
    summary: "List a thread's notifications",
    tag: 'signals',
    query: NotificationQuerySchema,
    ok: [json(200, '`NotificationRecord[]`', 'array')],
    errors: [404],
  },
  'POST /threads/:threadId/tool-approval': {
    summary: 'Approve or decline a tool call waiting on the thread',
    tag: 'signals',
    headers: IdempotencyHeaderSchema,
    body: ToolApprovalSchema,
    ok: [json(202, '`{ runId, toolCallId }`')],
    errors: [404, 409],
  },
  'GET /threads/:threadId/pending-approvals': {
    summary: 'Tool calls waiting for approval',
    tag: 'signals',
    query: TargetQuerySchema,
    ok: [json(200, '`[{ runId, toolCallId, toolName, args }]`', 'array')],
    errors: [404],
  },
  'POST /threads/:threadId/abort': { summary: "Abort the thread's active run", tag: 'signals', body: TargetSchema, ok: [json(200, '`{ aborted: boolean }`')], errors: [404] },
  'DELETE /threads/:threadId/queue/:signalId': {
    summary: 'Cancel a queued message',
    tag: 'signals',
    query: TargetQuerySchema,
    ok: [json(200, '`{ cancelled: string[] }`')],
    errors: [404],
  },
};

/** The document's own route, served by the bridge outside `ROUTES`: it needs no resource. */
const OPENAPI_DOC: RouteDoc = { summary: 'This document (OpenAPI 3.1)', tag: 'meta', ok: [json(200, 'The OpenAPI document')], open: true };

// ---------------------------------------------------------------------------------------------
// Building the document
// ---------------------------------------------------------------------------------------------

/**
 * A zod schema as JSON Schema, on its input side: what a client sends, before transforms (a query
 * `limit` is a digit string). AG-UI's `z.custom` checks have no JSON Schema and become `{}`.
 */
function toJsonSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  return rest;
}

/** One parameter per property of an object schema (query or headers). */
function parametersOf(schema: z.ZodObject, where: 'query' | 'header'): OpenApiParameter[] {
  const object = toJsonSchema(schema) as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(object.properties ?? {}).map(([name, property]) => ({
    name,
    in: where,
    required: object.required?.includes(name) ?? false,
    schema: property,
  }));
}

/** `:name` segments as OpenAPI path parameters, each an id like the handler's `pathParam`. */
function pathParameters(path: string): OpenApiParameter[] {
  return [...path.matchAll(/:(\w+)/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: toJsonSchema(IdSchema) }));
}

const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

function successResponse(ok: Success): OpenApiResponse {
  if (ok.body === 'none') return { description: ok.description };
  if (ok.body === 'events') {
    return {
      description: ok.description,
      content: {
        'text/event-stream': { schema: { type: 'string', description: 'SSE frames `data: <AG-UI event JSON>`' } },
        'application/vnd.ag-ui.event+proto': { schema: { type: 'string', contentEncoding: 'binary' } },
      },
    };
  }
  return { description: ok.description, content: { 'application/json': { schema: { type: ok.body } } } };
}

function operation(doc: RouteDoc, path: string, operationId: string | undefined, limited: boolean): OpenApiOperation {
  // 429 where a limit applies: the rate-limited routes (`RouteDef.limited`) and those that list it.
  const errors = new Set<ErrorStatus>(doc.open ? [] : [400, 401, 403, ...(doc.body ? [413 as const] : []), ...(limited ? [429 as const] : []), ...(doc.errors ?? []), 500, 503]);
  const responses: OpenApiOperation['responses'] = {};
  for (const ok of doc.ok) responses[ok.status] = successResponse(ok);
  for (const status of [...errors].sort((a, b) => a - b)) responses[status] = { $ref: `#/components/responses/${ERROR_RESPONSES[status].name}` };
  return {
    ...(operationId && { operationId }),
    summary: doc.summary,
    tags: [doc.tag],
    parameters: [
      ...pathParameters(path),
      ...(doc.query ? parametersOf(doc.query, 'query') : []),
      ...(doc.headers ? parametersOf(doc.headers, 'header') : []),
    ],
    ...(doc.body && {
      // An empty body reads as `{}`: the body is required only when `{}` would be refused.
      requestBody: { required: !doc.body.safeParse({}).success, content: { 'application/json': { schema: toJsonSchema(doc.body) } } },
    }),
    responses,
  };
}

function errorComponents(): Record<string, OpenApiResponse> {
  return Object.fromEntries(
    Object.values(ERROR_RESPONSES).map(({ name, codes, when }) => [
      name,
      { description: `${codes.map((c) => `\`${c}\``).join(', ')}: ${when}`, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
    ]),
  );
}

/** Every route of `ROUTES` with its description, and the document's own route; fails on a mismatch. */
function describedRoutes(): { method: Method; path: string; doc: RouteDoc; operationId?: string; limited?: boolean }[] {
  const keys = new Set(ROUTES.map((r) => `${r.method} ${r.path}`));
  const stale = Object.keys(ROUTE_DOCS).filter((key) => !keys.has(key));
  if (stale.length) throw new Error(`OpenAPI descriptions for routes that do not exist: ${stale.join(', ')}`);
  const routes = ROUTES.map((r) => {
    const doc = ROUTE_DOCS[`${r.method} ${r.path}`];
    if (!doc) throw new Error(`No OpenAPI description for ${r.method} ${r.path}: add it to ROUTE_DOCS in src/http/openapi.ts`);
    return { method: r.method, path: r.path, doc, operationId: r.handler.name || undefined, limited: r.limited };
  });
  return [...routes, { method: 'GET', path: OPENAPI_PATH, doc: OPENAPI_DOC, operationId: 'openapi' }];
}

/** The package's version, read at run time (a JSON import would need an import attribute). */
function packageVersion(): string {
  const pkg = createRequire(import.meta.url)('mastra-agui-bridge/package.json') as { version: string };
  return pkg.version;
}

/**
 * Builds the OpenAPI 3.1 document of the bridge's routes under `prefix`. Bodies, queries, path ids
 * and headers are converted from the zod schemas the handlers validate with, so the document and
 * the validation cannot disagree. Call it once (it converts every schema); `createBridge` does and
 * serves the result at `GET <prefix>/openapi.json`.
 *
 * @example
 * const doc = buildOpenApiDocument({ prefix: '/agui' });
 * doc.paths['/threads/{threadId}/send-message'].post?.requestBody; // SendMessageSchema as JSON Schema
 */
export function buildOpenApiDocument(options: { prefix: string; version?: string }): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const { method, path, doc, operationId, limited } of describedRoutes()) {
    const key = openApiPath(path);
    paths[key] = { ...paths[key], [method.toLowerCase() as Lowercase<Method>]: operation(doc, path, operationId, limited === true) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'mastra-agui-bridge',
      version: options.version ?? packageVersion(),
      description: 'Mastra agents behind the AG-UI protocol. Generated from the validation schemas of the routes; see docs/api.md.',
    },
    // Paths are below the prefix; the root prefix is the empty string.
    servers: [{ url: options.prefix || '/' }],
    tags: ['runs', 'agents', 'threads', 'signals', 'meta'].map((name) => ({ name })),
    paths,
    // Credentials are optional in the contract: the bridge takes them when its host turns auth on.
    security: [{}, { bearer: [] }],
    components: {
      schemas: { Error: toJsonSchema(ErrorBodySchema) },
      responses: errorComponents(),
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT or API key', description: 'Authorization: Bearer <token>; on the events stream also ?access_token=' } },
    },
  };
}
