import { createRequire } from 'node:module';
import { z } from 'zod';
import type { ErrorCode, ErrorDetail } from '../errors.js';
import { IdSchema } from '../id.js';
import type { ErrorStatus, Method, Route, RouteErrorCode, Success, Tag } from './route.js';
import { headerSchemaOf } from './serve-route.js';
import { codesWith, STATUS_OF, statusesOf } from './route-codes.js';

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
  requestBody?: { required: boolean; content: { 'application/json': { schema: JsonSchema; example?: unknown } } };
  responses: Record<string, OpenApiResponse | { $ref: string }>;
}

export type OpenApiDocument = {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  tags: { name: string }[];
  paths: Record<string, Partial<Record<Lowercase<Method>, OpenApiOperation>>>;
  security: Array<Record<string, string[]>>;
  components: {
    /** `Error`, and one schema per event stream (`RunEvent`, `ThreadEvent`): what one frame's `data:` holds. */
    schemas: { Error: JsonSchema } & Record<string, JsonSchema>;
    responses: Record<string, OpenApiResponse>;
    securitySchemes: Record<string, Record<string, string>>;
  };
};

// ---------------------------------------------------------------------------------------------
// The error body
// ---------------------------------------------------------------------------------------------

/** Every `ErrorCode`, as a value: the document's enum (`STATUS_OF` has one entry per code a route answers; `NOT_FOUND` is the app's, for unknown routes). */
const ERROR_CODES: [ErrorCode, ...ErrorCode[]] = ['NOT_FOUND', ...(Object.keys(STATUS_OF) as RouteErrorCode[])];

/**
 * The wire shape of `ErrorBody` (`http/errors.ts`), which is an interface and has no schema of
 * its own; `satisfies` keeps the two from drifting apart.
 */
const ErrorBodySchema = z.object({
  error: z.string(),
  code: z.enum(ERROR_CODES),
  details: z.array(z.object({ path: z.string(), message: z.string() }) satisfies z.ZodType<ErrorDetail>).optional(),
});

/** The statuses an error may come with, and when (the codes each carries are `STATUS_OF`'s). */
const ERROR_RESPONSES = {
  400: { name: 'BadRequest', when: 'malformed JSON, a non-JSON body, or a body, query, path id or header that fails its schema' },
  401: { name: 'Unauthorized', when: 'the caller was refused: `resolveResourceId` returned no resource, or threw' },
  403: { name: 'Forbidden', when: 'a claimed `resourceId` (body, query or `forwardedProps`) differs from the authenticated one' },
  404: { name: 'NotFound', when: "an unknown agent, thread (or another resource's thread), interrupt or tool call" },
  409: {
    name: 'Conflict',
    when: 'the request clashes with the current state (see docs/api.md); `THREAD_BUSY`: a `/run` with `multitask: "reject"` on a running thread',
  },
  413: { name: 'PayloadTooLarge', when: 'the body is over `maxBodyBytes`' },
  429: {
    name: 'TooManyRequests',
    when: 'a configured limit (requests per minute, open streams, concurrent runs) was reached; `Retry-After` says when to try again',
  },
  500: { name: 'InternalError', when: 'no agent with memory for a thread route, or anything unexpected' },
  503: { name: 'Unavailable', when: 'a service the answer depends on (the token key server) is unreachable; `Retry-After` says when to try again' },
} as const satisfies Record<ErrorStatus, { name: string; when: string }>;

const TAGS: Tag[] = ['runs', 'agents', 'threads', 'signals', 'schedules', 'meta'];

// ---------------------------------------------------------------------------------------------
// Building the document
// ---------------------------------------------------------------------------------------------

/**
 * A zod schema as JSON Schema, on its input side: what a client sends, before transforms (a query
 * `limit` is a digit string), and what goes over the wire in an answer (a date as its ISO string).
 * AG-UI's `z.custom` checks have no JSON Schema and become `{}`.
 */
function toJsonSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  return rest;
}

/** One parameter per property of an object schema (query or headers). */
function parametersOf(schema: z.ZodType, where: 'query' | 'header'): OpenApiParameter[] {
  const object = toJsonSchema(schema) as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(object.properties ?? {}).map(([name, property]) => ({
    name,
    in: where,
    required: object.required?.includes(name) ?? false,
    schema: property,
  }));
}

/** `:name` segments as OpenAPI path parameters, each an id as the pipeline checks it. */
function pathParameters(path: string): OpenApiParameter[] {
  return [...path.matchAll(/:(\w+)/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: toJsonSchema(IdSchema) }));
}

const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

function successResponse(ok: Success): OpenApiResponse {
  if ('empty' in ok) return { description: ok.description };
  if ('events' in ok) {
    return {
      description: `${ok.description} AG-UI events, as Server-Sent Events (or AG-UI protobuf when \`Accept\` names it)`,
      content: {
        'text/event-stream': {
          schema: { $ref: `#/components/schemas/${ok.events.name}`, description: 'Each SSE frame is `data: <one AG-UI event as JSON>`' },
        },
        'application/vnd.ag-ui.event+proto': { schema: { type: 'string', contentEncoding: 'binary' } },
      },
    };
  }
  return { description: ok.description, content: { 'application/json': { schema: toJsonSchema(ok.schema) } } };
}

function operation(route: Route): OpenApiOperation {
  const responses: OpenApiOperation['responses'] = {};
  for (const [status, ok] of Object.entries(route.ok)) responses[status] = successResponse(ok);
  for (const status of statusesOf(route)) responses[status] = { $ref: `#/components/responses/${ERROR_RESPONSES[status].name}` };
  const headers = headerSchemaOf(route);
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    parameters: [
      ...pathParameters(route.path),
      ...(route.query ? parametersOf(route.query, 'query') : []),
      ...(headers ? parametersOf(headers, 'header') : []),
    ],
    ...(route.body && {
      // An empty body reads as `{}`: the body is required only when `{}` would be refused.
      requestBody: {
        required: !route.body.safeParse({}).success,
        content: { 'application/json': { schema: toJsonSchema(route.body), ...(route.example !== undefined && { example: route.example }) } },
      },
    }),
    responses,
  };
}

/** Each event stream's frame schema, under its name. */
function eventSchemas(routes: readonly Route[]): Record<string, JsonSchema> {
  const streams = routes.flatMap((route) => Object.values(route.ok).flatMap((ok) => ('events' in ok ? [ok.events] : [])));
  return Object.fromEntries(streams.map(({ name, schema }) => [name, toJsonSchema(schema)]));
}

function errorComponents(): Record<string, OpenApiResponse> {
  return Object.fromEntries(
    Object.entries(ERROR_RESPONSES).map(([status, { name, when }]) => {
      const codes = codesWith(Number(status) as ErrorStatus).map((code) => `\`${code}\``);
      return [name, { description: `${codes.join(', ')}: ${when}`, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } }];
    }),
  );
}

/** The package's version, read at run time (a JSON import would need an import attribute). */
function packageVersion(): string {
  const pkg = createRequire(import.meta.url)('mastra-agui-bridge/package.json') as { version: string };
  return pkg.version;
}

/**
 * Builds the OpenAPI 3.1 document of `routes` under `prefix`: bodies, queries, path ids and
 * headers are the zod schemas the pipeline validates with, answers the schemas the handlers are
 * typed by, so the document and the code cannot disagree. Call it once (it converts every schema);
 * the table's own `GET /openapi.json` route (`routes/meta.ts`) does, on first request.
 *
 * @example
 * const doc = buildOpenApiDocument(ROUTES, { prefix: '/agui' });
 * doc.paths['/threads/{threadId}/send-message'].post?.requestBody; // SendMessageSchema as JSON Schema
 */
export function buildOpenApiDocument(routes: readonly Route[], options: { prefix: string; version?: string }): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const route of routes) {
    const key = openApiPath(route.path);
    paths[key] = { ...paths[key], [route.method.toLowerCase() as Lowercase<Method>]: operation(route) };
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
    tags: TAGS.map((name) => ({ name })),
    paths,
    // Credentials are optional in the contract: the bridge takes them when its host turns auth on.
    security: [{}, { bearer: [] }],
    components: {
      schemas: { Error: toJsonSchema(ErrorBodySchema), ...eventSchemas(routes) },
      responses: errorComponents(),
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT or API key',
          description: 'Authorization: Bearer <token>; on the events stream also ?access_token=',
        },
      },
    },
  };
}
