import { z } from 'zod';
import { buildOpenApiDocument, type OpenApiDocument } from '../openapi.js';
import { answer, route, type Route } from '../route.js';

/** Where the document is served, below the prefix. */
export const OPENAPI_PATH = '/openapi.json';

/**
 * `GET /openapi.json`: the OpenAPI document of `routes` (this route among them). Built once per
 * prefix, on first request: converting every schema per request would be wasted work. The
 * contract is the same for every caller, so no resource is resolved; with auth on it still takes
 * credentials.
 */
export function openApiRoute(routes: () => readonly Route[]): Route {
  const documents = new Map<string, OpenApiDocument>();
  const documentFor = (prefix: string) => {
    let document = documents.get(prefix);
    if (!document) documents.set(prefix, (document = buildOpenApiDocument(routes(), { prefix })));
    return document;
  };
  return route({
    operationId: 'openapi',
    method: 'GET',
    path: OPENAPI_PATH,
    summary: 'This document (OpenAPI 3.1)',
    tag: 'meta',
    anyCaller: true,
    ok: { 200: { description: 'The OpenAPI document', schema: z.record(z.string(), z.unknown()) } },
    uses: ['config'],
    handle: async (_, s) => answer(200, documentFor(s.config.prefix)),
  });
}
