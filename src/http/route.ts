import type { Context } from 'hono';
import type { z } from 'zod';
import type { ErrorCode } from '../errors.js';
import type { ThreadScope } from '../threads/thread-store.js';
import type { Services } from './services.js';

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** The groups of the OpenAPI document. */
export type Tag = 'runs' | 'agents' | 'threads' | 'signals' | 'schedules' | 'meta';

/** The error statuses a route may answer (each with the `Error` body; see `openapi.ts`). */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 429 | 500 | 503;

/** An error code a route may answer (`errors.ts`), but the one for unknown routes. */
export type RouteErrorCode = Exclude<ErrorCode, 'NOT_FOUND'>;

/** An AG-UI event stream's frames: the schema of one frame's event, under its name in the OpenAPI document's components. */
export interface FrameSchema {
  name: string;
  schema: z.ZodType;
}

/** A success answer: JSON of `schema`, an AG-UI event stream, or no body. */
export type Success = { description: string; schema: z.ZodType } | { description: string; events: FrameSchema } | { description: string; empty: true };

export type SuccessStatus = 200 | 201 | 202 | 204;
export type Successes = Partial<Record<SuccessStatus, Success>>;

/** What a handler answers: one of its route's JSON answers (typed by its schema, on the service's side), or the stream it opened. */
export type Reply<R extends Successes> =
  | {
      [K in keyof R]: R[K] extends { schema: infer S extends z.ZodType }
        ? { status: K; body: z.output<S> }
        : R[K] extends { empty: true }
          ? { status: K }
          : never;
    }[keyof R]
  | (true extends { [K in keyof R]: R[K] extends { events: FrameSchema } ? true : false }[keyof R] ? Response : never);

/**
 * A JSON answer with its status kept literal, so that it is checked against the route's `ok`.
 *
 * @example
 * handle: async ({ scope }, { threads }) => answer(200, await threads.get(scope)),
 */
export const answer = <S extends SuccessStatus, B>(status: S, body: B) => ({ status, body });

/** The `:name` segments of a path. */
type ParamNames<P extends string> = P extends `${string}:${infer N}/${infer Rest}` ? N | ParamNames<Rest> : P extends `${string}:${infer N}` ? N : never;

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;

/** What the pipeline hands a handler: every input validated, the caller resolved (and counted). */
export interface RouteInput<P extends string, Q, H, B> {
  c: Context;
  params: Record<ParamNames<P>, string>;
  query: Parsed<Q>;
  headers: Parsed<H>;
  body: Parsed<B>;
  /** The caller, as `resolveResourceId` decided (`''` on an `anyCaller` route). */
  resourceId: string;
  /** On `/threads/:threadId…` only: the thread, the caller, the agent claimed (`agentId` of body or query). */
  scope: string extends P ? ThreadScope | undefined : P extends `${string}:threadId${string}` ? ThreadScope : undefined;
}

/** A service a handler may be handed, by its name in `Services`. */
export type ServiceName = keyof Services;

/** Who the caller claims to be, and which agent it names: by default `resourceId`/`agentId` of the body, else of the query. */
export type Claim = (input: { query: unknown; body: unknown }) => { resourceId?: string; agentId?: string };

/**
 * One route of the contract, declared once: what it takes (path ids, query, headers, body, each a
 * zod schema), what it answers (per status), how it is served (flags), its handler and its doc
 * text. The Hono wiring, validation, limits, idempotency and the OpenAPI document are all derived
 * from it (`serve-route.ts`, `openapi.ts`).
 */
export interface RouteSpec<
  P extends string,
  Q extends z.ZodType | undefined,
  H extends z.ZodType | undefined,
  B extends z.ZodType | undefined,
  R extends Successes,
  U extends ServiceName,
> {
  /** The OpenAPI `operationId`, unique in the table: by convention the name the route is exported under. */
  operationId: string;
  method: Method;
  /** Below the prefix; `:name` segments are ids (`IdSchema`). */
  path: P;
  summary: string;
  tag: Tag;
  query?: Q;
  headers?: H;
  body?: B;
  /** A body the route accepts (every route with a body has one): the OpenAPI document shows it, and the tenancy sweep sends it. */
  example?: B extends z.ZodType ? z.input<B> : never;
  ok: R;
  /**
   * The error codes it answers beyond those of every route (`INVALID_INPUT`, `UNAUTHORIZED`,
   * `FORBIDDEN`, `INTERNAL_ERROR`, `UNAVAILABLE`) and those its flags add (`PAYLOAD_TOO_LARGE`
   * with a body, `RATE_LIMITED` when `limited`, `CONFLICT` when `idempotent`): `codesOf` has the
   * whole list, the OpenAPI document its statuses, docs/api.md its table (`route-codes.ts`).
   */
  errors?: RouteErrorCode[];
  /** Counted against the caller's requests per minute (`limits.requestsPerMinute`), once the caller is known. */
  limited?: true;
  /** Starts or steers a run: refused (`503`) while the process drains (`bridge.drain()`), which still serves reads and streams. */
  startsWork?: true;
  /** Honours `Idempotency-Key` (a 2xx answer is kept and replayed; `http/idempotency.ts`). */
  idempotent?: true;
  /**
   * Answers every caller alike (the OpenAPI document): no resource is resolved, `resourceId` is
   * `''`. With auth on, credentials are still checked.
   */
  anyCaller?: true;
  /** Where the caller's claim is, when not `resourceId`/`agentId` of body or query. */
  claim?: Claim;
  /** The services its handler calls: it is handed these and nothing else (picked once, when the route is served). */
  uses: readonly U[];
  handle(input: RouteInput<P, Q, H, B>, s: Pick<Services, U>): Promise<Reply<R>>;
}

/** A route of the table, its types erased. */
export type Route = RouteSpec<string, z.ZodType | undefined, z.ZodType | undefined, z.ZodType | undefined, Successes, ServiceName>;

/**
 * Declares a route: the handler's input and answers are typed by the route's own schemas, and the
 * services it is handed by its `uses`.
 *
 * @example
 * export const getThread = route({
 *   operationId: 'getThread', method: 'GET', path: '/threads/:threadId', summary: 'Get a thread', tag: 'threads',
 *   query: AgentQuerySchema, ok: { 200: { description: '`ThreadInfo`', schema: ThreadInfoSchema } }, errors: [404],
 *   uses: ['threads'],
 *   handle: async ({ scope }, { threads }) => answer(200, await threads.get(scope)),
 * });
 */
export function route<
  P extends string,
  Q extends z.ZodType | undefined = undefined,
  H extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  R extends Successes = Successes,
  U extends ServiceName = never,
>(spec: RouteSpec<P, Q, H, B, R, U>): Route {
  return spec as unknown as Route;
}
