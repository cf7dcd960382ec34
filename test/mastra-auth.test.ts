import type { AddressInfo } from 'node:net';
import { HttpAgent } from '@ag-ui/client';
import { serve, type ServerType } from '@hono/node-server';
import { Mastra } from '@mastra/core';
import { SimpleAuth } from '@mastra/core/server';
import { InMemoryStore } from '@mastra/core/storage';
import { MastraServer } from '@mastra/hono';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoAgent } from '../src/demo/agent.js';
import { createBridge, mastraAuthResource, type Bridge } from '../src/index.js';
import { assistantText, runInput, runStrict, uid, userMessage } from './support/agui.js';
import { http, silentLogger } from './support/server.js';

// The bridge mounted in a Mastra server that authenticates with Mastra's own auth (`SimpleAuth`
// here; any MastraAuthProvider works): the user Mastra's auth sets on the request is the resource.

const ALICE = 'token-of-alice-0123456789';
const BOB = 'token-of-bob-0123456789';

let bridge: Bridge;
let mastra: Mastra;
let server: ServerType;
let base: string;

beforeAll(async () => {
  const storage = new InMemoryStore();
  const demo = createDemoAgent({ storage, delayMs: 0 });
  bridge = createBridge({ logger: silentLogger, resolveResourceId: mastraAuthResource() });
  const auth = new SimpleAuth({ tokens: { [ALICE]: { id: 'alice' }, [BOB]: { id: 'bob' } } });
  mastra = new Mastra({ agents: { demo }, storage, logger: false, server: { auth, apiRoutes: bridge.routes() } });
  const app = new Hono();
  await new MastraServer({ app, mastra }).init();
  server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/agui`;
});

afterAll(async () => {
  await bridge?.shutdown();
  if (server) {
    (server as { closeAllConnections?: () => void }).closeAllConnections?.();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  await mastra?.shutdown().catch(() => {
    // cleanup: a failed shutdown changes no result
  });
});

const as = (token: string) => ({ authorization: `Bearer ${token}` });

describe('mounted in a Mastra server with Mastra’s auth', () => {
  it('Mastra refuses a request without a valid token before the bridge runs', async () => {
    expect((await http(`${base}/agents`)).status).toBe(401);
    expect((await http(`${base}/agents`, { headers: as('nobody') })).status).toBe(401);
    expect((await http(`${base}/agents`, { headers: as(ALICE) })).status).toBe(200);
  });

  it('the authenticated user is the resource: threads are theirs, others get 404, a differing claim 403', async () => {
    const created = await http(`${base}/threads`, { body: { title: 'mine' }, headers: as(ALICE) });
    expect(created.status).toBe(201);
    expect(created.body.resourceId).toBe('alice');
    expect((await http(`${base}/threads/${created.body.id}`, { headers: as(ALICE) })).status).toBe(200);
    expect((await http(`${base}/threads/${created.body.id}`, { headers: as(BOB) })).body.code).toBe('THREAD_NOT_FOUND');
    const claimed = await http(`${base}/threads`, { body: { resourceId: 'alice' }, headers: as(BOB) });
    expect(claimed.status).toBe(403);
    expect(claimed.body.code).toBe('FORBIDDEN');
  });

  it('a /run is stored under the user', async () => {
    const threadId = uid('mastra-auth');
    const url = `${base}/run`;
    // The real AG-UI client, with the token as a header.
    const run = await runStrict(url, runInput({ threadId, messages: [userMessage('hello as alice')] }), undefined, new HttpAgent({ url, headers: as(ALICE) }));
    expect(assistantText(run.events)).toBe('Echo: hello as alice');
    const thread = await http(`${base}/threads/${threadId}`, { headers: as(ALICE) });
    expect(thread.body.resourceId).toBe('alice');
  });
});
