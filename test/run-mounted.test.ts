import type { AddressInfo } from 'node:net';
import { EventType } from '@ag-ui/client';
import { serve, type ServerType } from '@hono/node-server';
import { Mastra } from '@mastra/core';
import { InMemoryStore } from '@mastra/core/storage';
import { MastraServer } from '@mastra/hono';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoAgent } from '../src/demo/agent.js';
import { createBridge, type Bridge } from '../src/index.js';
import { assistantText, runInput, runStrict, userMessage } from './support/agui.js';
import { http, silentLogger } from './support/server.js';

// The library use: the bridge's routes registered as Mastra `apiRoutes`, served by Mastra's own
// Hono server adapter (@mastra/hono), as a Mastra user deploys it.

let bridge: Bridge;
let mastra: Mastra;
let server: ServerType;
let base: string;

beforeAll(async () => {
  const storage = new InMemoryStore();
  const demo = createDemoAgent({ storage, delayMs: 0 });
  bridge = createBridge({ logger: silentLogger });
  mastra = new Mastra({ agents: { demo }, storage, logger: false, server: { apiRoutes: bridge.routes() } });
  const app = new Hono();
  await new MastraServer({ app, mastra }).init();
  server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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

describe('mounted in a Mastra server (@mastra/hono)', () => {
  it('lists the agents on GET /agui/agents', async () => {
    const res = await http(`${base}/agui/agents`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([expect.objectContaining({ id: 'demo', name: 'Demo Agent' })]);
  });

  it('streams a run on POST /agui/run', async () => {
    const input = runInput({ messages: [userMessage('hello from a mounted bridge')] });
    const run = await runStrict(`${base}/agui/run`, input);
    expect(assistantText(run.events)).toBe('Echo: hello from a mounted bridge');
    expect(run.terminal.type).toBe(EventType.RUN_FINISHED);
  });
});
