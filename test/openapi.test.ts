import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Mastra } from '@mastra/core';
import { InMemoryStore } from '@mastra/core/storage';
import { MastraServer } from '@mastra/hono';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createDemoAgent } from '../src/demo/agent.js';
import { createBridge } from '../src/index.js';
import { http, silentLogger, useTestBridge } from './support/server.js';

// GET <prefix>/openapi.json over real HTTP: under the configured prefix, for every caller (no
// resource), and describing the bodies the handlers actually accept.

describe('GET <prefix>/openapi.json on the standalone app', () => {
  // A hook that refuses everyone: the document must still be served.
  const tb = useTestBridge({ config: { prefix: '/api/v2', resolveResourceId: () => undefined } });
  const origin = () => new URL(tb.base).origin;

  it('serves a valid OpenAPI 3.1 document under the configured prefix, without a resource', async () => {
    const res = await http(`${tb.base}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toMatchObject({ openapi: '3.1.0', info: { title: 'mastra-agui-bridge' }, servers: [{ url: '/api/v2' }] });
    expect(await new Validator().validate(res.body)).toEqual({ valid: true });
    // The routes that need a resource do refuse this caller.
    expect((await http(`${tb.base}/agents`)).status).toBe(401);
  });

  it('is not served outside the prefix', async () => {
    expect((await http(`${origin()}/agui/openapi.json`)).status).toBe(404);
    expect((await http(`${origin()}/openapi.json`)).status).toBe(404);
  });

  it('describes a body the handler accepts and one it refuses, and the error it refuses it with', async () => {
    const doc = (await http(`${tb.base}/openapi.json`)).body;
    const ajv = new Ajv2020({ strict: false });
    const body = ajv.compile(doc.paths['/threads/{threadId}/send-message'].post.requestBody.content['application/json'].schema);
    const error = ajv.compile(doc.components.schemas.Error);
    const send = (payload: unknown) => http(`${tb.base}/threads/t-openapi/send-message`, { body: payload });

    const valid = { message: { contents: 'hello', attributes: { source: 'test' } } };
    expect(body(valid)).toBe(true);
    // Past validation, the hook refuses the caller: 401, not 400.
    expect((await send(valid)).status).toBe(401);

    const invalid = { message: 'hello', extra: true };
    expect(body(invalid)).toBe(false);
    const refused = await send(invalid);
    expect(refused.status).toBe(400);
    expect(error(refused.body)).toBe(true);
    expect(refused.body).toMatchObject({ code: 'INVALID_INPUT', details: [{ path: 'extra' }] });
  });
});

describe('GET /openapi.json with the bridge at the root', () => {
  const tb = useTestBridge({ config: { prefix: '/' } });

  it('is served at /openapi.json with the root as its server', async () => {
    const res = await http(`${tb.base}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.body.servers).toEqual([{ url: '/' }]);
    expect(Object.keys(res.body.paths)).toContain('/threads/{threadId}/events');
  });
});

describe('GET <prefix>/openapi.json mounted in a Mastra server', () => {
  it('is one of bridge.routes()', async () => {
    const storage = new InMemoryStore();
    const bridge = createBridge({ logger: silentLogger, prefix: '/bridge' });
    const mastra = new Mastra({ agents: { demo: createDemoAgent({ storage }) }, storage, logger: false, server: { apiRoutes: bridge.routes() } });
    const app = new Hono();
    await new MastraServer({ app, mastra }).init();
    const server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
    });
    try {
      const res = await http(`http://127.0.0.1:${(server.address() as AddressInfo).port}/bridge/openapi.json`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ openapi: '3.1.0', servers: [{ url: '/bridge' }] });
    } finally {
      await bridge.shutdown();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await mastra.shutdown().catch(() => {
        // cleanup: a failed shutdown changes no result
      });
    }
  });
});
