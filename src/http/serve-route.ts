import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';
import { BridgeError } from '../errors.js';
import { IdSchema } from '../id.js';
import { codesOf } from './route-codes.js';
import { idempotent, IdempotencyHeaderSchema, type Answer } from './idempotency.js';
import { parseInput, readJsonBody } from './request.js';
import type { Claim, Route } from './route.js';
import type { Services } from './services.js';
import type { ThreadScope } from '../threads/thread-store.js';

/** The default claim: `resourceId` and `agentId` of the body, else of the query. */
const claimOf: Claim = ({ query, body }) => {
  const [b, q] = [(body ?? {}) as { resourceId?: string; agentId?: string }, (query ?? {}) as { resourceId?: string; agentId?: string }];
  return { resourceId: b.resourceId ?? q.resourceId, agentId: b.agentId ?? q.agentId };
};

/**
 * Serves one route of the table, in the order every route follows: path ids → query → headers →
 * body (each refused with `400` naming the field) → the caller (`resolveResourceId`) → its rate
 * (`limited` routes) → on a thread, the agent it remembers when the request names none → the handler, under `Idempotency-Key` on `idempotent` routes → the answer.
 * Everything that does not depend on the request (the path's id schema, which headers to read) is
 * resolved here, once per route.
 */
export function serveRoute(route: Route, s: Services): (c: Context) => Promise<Response> {
  const paramsSchema = z.object(Object.fromEntries([...route.path.matchAll(/:(\w+)/g)].map(([, name]) => [name, IdSchema])));
  const headersSchema = headerSchemaOf(route);
  const headerNames = headersSchema ? Object.keys(headersSchema.shape) : [];
  const claim = route.claim ?? claimOf;
  const routeKey = route.path.slice(route.path.lastIndexOf('/') + 1);
  // The handler is handed the services it names, and nothing else.
  const given = Object.fromEntries(route.uses.map((name) => [name, s[name]])) as unknown as Services;
  // Answers are kept per thread: a route without one cannot honour a key.
  if (route.idempotent && !route.path.includes(':threadId'))
    throw new Error(`${route.method} ${route.path}: an idempotent route must be below /threads/:threadId`);

  const declared = new Set<string>(codesOf(route));

  return async (c) => {
    try {
      const params = parseInput(paramsSchema, c.req.param(), 'path') as Record<string, string>;
      const query = route.query ? parseInput(route.query, c.req.query(), 'query') : undefined;
      const headers = headersSchema ? parseInput(headersSchema, presentHeaders(c, headerNames), 'header') : undefined;
      const raw = route.body ? await readJsonBody(c, s.config.maxBodyBytes) : undefined;
      const body = route.body ? parseInput(route.body, raw, 'body') : undefined;
      const claimed = claim({ query, body });
      const resourceId = route.anyCaller ? '' : await s.resources.resolve(c, claimed.resourceId);
      // Counted once the caller is known: a refused caller never spends a request of someone else's.
      if (route.limited) await s.limits.admitRequest(resourceId);
      const scope = params.threadId === undefined ? undefined : await threadScope(s, params.threadId, resourceId, claimed.agentId);
      const handle = () => route.handle({ c, params, query, headers, body, resourceId, scope }, given) as unknown as Promise<Answer | Response>;
      const key = (headers as { 'idempotency-key'?: string } | undefined)?.['idempotency-key'];
      const reply =
        route.idempotent && key !== undefined ? await idempotent(c, s, { route: routeKey, scope: scope as ThreadScope, key, raw }, handle) : await handle();
      return reply instanceof Response ? reply : respond(c, reply);
    } catch (error) {
      // The route table lists what each route answers (docs/api.md): an answer it does not list is a defect of the table.
      if (error instanceof BridgeError && !declared.has(error.code))
        s.config.logger.error(`${route.method} ${route.path} answered ${error.code}, which its route does not declare (route-codes.ts)`);
      throw error;
    }
  };
}

/** A thread route's scope: the agent the request names, else the one the thread remembers (its first run's), else the default. */
async function threadScope(s: Services, threadId: string, resourceId: string, agentId: string | undefined): Promise<ThreadScope> {
  const scope = { threadId, resourceId };
  return { ...scope, agentId: agentId ?? (await s.threads.agentOf(scope)) };
}

/** The route's headers, with `Idempotency-Key` on the idempotent ones (validated here, documented in the OpenAPI document). */
export function headerSchemaOf(route: Route): z.ZodObject | undefined {
  const own = route.headers as z.ZodObject | undefined;
  if (!route.idempotent) return own;
  return own ? own.extend(IdempotencyHeaderSchema.shape) : IdempotencyHeaderSchema;
}

/** The named request headers that were sent, by their lower-case names. */
function presentHeaders(c: Context, names: string[]): Record<string, string> {
  const present: Record<string, string> = {};
  for (const name of names) {
    const value = c.req.header(name);
    if (value !== undefined) present[name] = value;
  }
  return present;
}

/** A JSON answer (or none, for `204`). */
function respond(c: Context, answer: Answer): Response {
  if (answer.status === 204) return c.body(null, 204);
  return c.json(answer.body as object, answer.status as ContentfulStatusCode);
}
