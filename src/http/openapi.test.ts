import { createRequire } from 'node:module';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { SendMessageSchema, ToolApprovalSchema } from '../signals/schemas.js';
import { buildOpenApiDocument, type JsonSchema, type OpenApiOperation } from './openapi.js';
import { ROUTES } from './routes/index.js';
import { OPENAPI_PATH } from './routes/meta.js';
import { CreateThreadSchema, ListThreadsQuerySchema } from './schemas.js';

const doc = buildOpenApiDocument(ROUTES, { prefix: '/agui' });
const operationOf = (method: string, path: string): OpenApiOperation | undefined =>
  (doc.paths[path] as Record<string, OpenApiOperation> | undefined)?.[method.toLowerCase()];
const bodySchemaOf = (method: string, path: string): JsonSchema => {
  const schema = operationOf(method, path)?.requestBody?.content['application/json'].schema;
  if (!schema) throw new Error(`no body schema for ${method} ${path}`);
  return schema;
};

describe('buildOpenApiDocument', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
  });

  it('holds only schemas that are valid JSON Schema 2020-12', () => {
    // The OpenAPI validator does not look inside Schema Objects; Ajv checks them against the meta-schema.
    const ajv = new Ajv2020({ strict: false });
    const schemas: unknown[] = [...Object.values(doc.components.schemas)];
    for (const op of Object.values(doc.paths).flatMap((ops) => Object.values(ops))) {
      schemas.push(...op.parameters.map((p) => p.schema), op.requestBody?.content['application/json'].schema);
      for (const response of Object.values(op.responses)) {
        if ('content' in response) schemas.push(...Object.values(response.content ?? {}).map((c) => c.schema));
      }
    }
    for (const schema of schemas.filter(Boolean)) expect(ajv.validateSchema(schema as JsonSchema), JSON.stringify(ajv.errors)).toBe(true);
  });

  it('names the package and its version, and serves the paths below the prefix', () => {
    const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };
    expect(doc.info).toMatchObject({ title: 'mastra-agui-bridge', version: pkg.version });
    expect(doc.servers).toEqual([{ url: '/agui' }]);
    expect(buildOpenApiDocument(ROUTES, { prefix: '' }).servers).toEqual([{ url: '/' }]);
  });

  it('describes every route of ROUTES with its method, path and path parameters', () => {
    for (const route of ROUTES) {
      const path = route.path.replace(/:(\w+)/g, '{$1}');
      const op = operationOf(route.method, path);
      expect(op, `${route.method} ${route.path}`).toBeDefined();
      const pathParams = op!.parameters.filter((p) => p.in === 'path').map((p) => p.name);
      expect(pathParams).toEqual([...route.path.matchAll(/:(\w+)/g)].map(([, name]) => name));
    }
    const described = Object.values(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
    expect(described).toBe(ROUTES.length); // the document's own route among them
    expect(operationOf('GET', OPENAPI_PATH)).toBeDefined();
  });

  it('gives every operation a unique operationId', () => {
    const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
    expect(ids.every(Boolean)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('describes the two streams as text/event-stream', () => {
    for (const [method, path] of [
      ['POST', '/run'],
      ['GET', '/threads/{threadId}/events'],
    ]) {
      const ok = operationOf(method, path)?.responses['200'];
      expect(ok && 'content' in ok && Object.keys(ok.content ?? {})).toContain('text/event-stream');
    }
    const events = operationOf('GET', '/threads/{threadId}/events')!;
    expect(events.parameters.map((p) => `${p.in}:${p.name}`)).toEqual(expect.arrayContaining(['query:lastEventId', 'query:snapshot', 'header:last-event-id']));
  });

  it('gives each event stream its own frame schema: RunEvent for /run, ThreadEvent for a thread', () => {
    const frameOf = (method: string, path: string) => {
      const ok = operationOf(method, path)?.responses['200'] as { content?: Record<string, { schema: JsonSchema }> } | undefined;
      return ok?.content?.['text/event-stream']?.schema.$ref;
    };
    expect(frameOf('POST', '/run')).toBe('#/components/schemas/RunEvent');
    expect(frameOf('GET', '/threads/{threadId}/events')).toBe('#/components/schemas/ThreadEvent');
    expect(doc.components.schemas.RunEvent?.description).toMatch(/RUN_STARTED` first/);
    expect(doc.components.schemas.ThreadEvent?.description).toMatch(/Last-Event-ID/);
  });

  it('answers errors with { error, code, details? }, every ErrorCode in its enum', () => {
    expect(doc.components.schemas.Error).toMatchObject({
      type: 'object',
      required: ['error', 'code'],
      properties: { error: { type: 'string' }, code: { enum: expect.arrayContaining(['INVALID_INPUT', 'THREAD_NOT_FOUND', 'NOT_FOUND']) } },
    });
    for (const ops of Object.values(doc.paths)) {
      for (const op of Object.values(ops)) {
        expect(op.responses['400']).toEqual({ $ref: '#/components/responses/BadRequest' });
        expect(op.responses['500']).toEqual({ $ref: '#/components/responses/InternalError' });
      }
    }
  });

  it('reads the idempotency header as optional and a query as its schema says', () => {
    const send = operationOf('POST', '/threads/{threadId}/send-message')!;
    expect(send.parameters).toContainEqual(expect.objectContaining({ name: 'idempotency-key', in: 'header', required: false }));
    const list = operationOf('GET', '/threads')!;
    expect(list.parameters).toContainEqual(expect.objectContaining({ name: 'resourceId', in: 'query', required: false }));
    expect(list.parameters).toContainEqual(expect.objectContaining({ name: 'limit', in: 'query', required: false }));
  });

  it('requires a body only where an empty one ({}) is refused', () => {
    expect(operationOf('POST', '/threads')?.requestBody?.required).toBe(false);
    expect(operationOf('POST', '/threads/{threadId}/send-message')?.requestBody?.required).toBe(true);
    expect(operationOf('POST', '/run')?.requestBody?.required).toBe(true);
  });

  it('shows, for every body, an example both its zod schema and its JSON Schema accept', () => {
    const ajv = new Ajv2020({ strict: false });
    for (const route of ROUTES.filter((r) => r.body)) {
      const body = operationOf(route.method, route.path.replace(/:(\w+)/g, '{$1}'))?.requestBody?.content['application/json'];
      expect(body?.example, `${route.method} ${route.path}`).toBeDefined();
      expect(route.body!.safeParse(body!.example).success, `${route.method} ${route.path}`).toBe(true);
      expect(ajv.compile(body!.schema)(body!.example), `${route.method} ${route.path}`).toBe(true);
    }
  });
});

describe('the JSON Schemas agree with the zod schemas', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const agree = (name: string, zod: z.ZodType, json: JsonSchema, samples: { ok: unknown[]; bad: unknown[] }) => {
    const validate = ajv.compile(json);
    for (const sample of samples.ok) {
      expect(zod.safeParse(sample).success, `${name} zod accepts ${JSON.stringify(sample)}`).toBe(true);
      expect(validate(sample), `${name} JSON Schema accepts ${JSON.stringify(sample)}`).toBe(true);
    }
    for (const sample of samples.bad) {
      expect(zod.safeParse(sample).success, `${name} zod refuses ${JSON.stringify(sample)}`).toBe(false);
      expect(validate(sample), `${name} JSON Schema refuses ${JSON.stringify(sample)}`).toBe(false);
    }
  };

  it('send-message', () => {
    agree('send-message', SendMessageSchema, bodySchemaOf('POST', '/threads/{threadId}/send-message'), {
      ok: [{ message: 'hi' }, { message: { contents: [{ type: 'text', text: 'hi' }], attributes: { a: 1 } }, ifIdle: { behavior: 'wake' } }],
      bad: [{}, { message: '' }, { message: 'hi', extra: 1 }, { message: 'hi', ifIdle: { behavior: 'deliver' } }, { message: 'hi', resourceId: '' }],
    });
  });

  it('tool-approval and POST /threads', () => {
    agree('tool-approval', ToolApprovalSchema, bodySchemaOf('POST', '/threads/{threadId}/tool-approval'), {
      ok: [{ toolCallId: 'c1', approved: true }],
      bad: [{ toolCallId: 'c1' }, { toolCallId: 'c1', approved: 'yes' }],
    });
    agree('create thread', CreateThreadSchema, bodySchemaOf('POST', '/threads'), {
      ok: [{}, { threadId: 't1', title: 'x', metadata: { a: [1] } }],
      bad: [{ threadId: 'x'.repeat(513) }, { metadata: [] }, { nope: true }],
    });
  });

  it('POST /run, forwardedProps included', () => {
    const schema = bodySchemaOf('POST', '/run');
    const validate = ajv.compile(schema);
    const input = { threadId: 't', runId: 'r', messages: [{ id: 'm', role: 'user', content: 'hi' }] };
    expect(validate(input)).toBe(true);
    expect(validate({ ...input, forwardedProps: { agentId: 'demo', frontendToolMode: 'return' } })).toBe(true);
    expect(validate({ ...input, forwardedProps: { frontendToolMode: 'later' } })).toBe(false);
    expect(validate({ runId: 'r', messages: [] })).toBe(false);
  });

  it('a query parameter schema is the schema of the string a client sends', () => {
    const op = operationOf('GET', '/threads')!;
    const limit = ajv.compile(op.parameters.find((p) => p.name === 'limit')!.schema);
    expect(limit('10')).toBe(true);
    expect(limit('ten')).toBe(false);
    expect(ListThreadsQuerySchema.safeParse({ resourceId: 'u', limit: 'ten' }).success).toBe(false);
  });
});
