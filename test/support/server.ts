import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { Mastra } from '@mastra/core';
import type { Agent } from '@mastra/core/agent';
import { InMemoryStore, type MastraStorage } from '@mastra/core/storage';
import { LibSQLStore } from '@mastra/libsql';
import { createBridge, type Bridge, type BridgeConfig } from '../../src/index.js';
import { createDemoAgent } from '../../src/demo/agent.js';

export interface TestBridge {
  /** Base URL including the prefix, e.g. `http://127.0.0.1:53211/agui`. */
  base: string;
  mastra: Mastra;
  bridge: Bridge;
  storage: MastraStorage;
  demo: Agent;
  close(): Promise<void>;
}

export interface TestBridgeOptions {
  config?: BridgeConfig;
  /** Delay between scripted model parts (default 0: no timers). */
  delayMs?: number;
  /** `libsql` uses a temp file (needed for restarts); default `memory`. */
  storage?: 'memory' | 'libsql';
  /** An existing LibSQL file URL to reuse (restart tests). */
  databaseUrl?: string;
  /** More agents to register next to `demo`. */
  agents?: (storage: MastraStorage) => Record<string, Agent>;
  /** Register the demo agent (default true). */
  withDemo?: boolean;
}

/** Starts a real bridge on a real socket (127.0.0.1, random port) over a real Mastra. */
export async function startTestBridge(options: TestBridgeOptions = {}): Promise<TestBridge> {
  let dir: string | undefined;
  let storage: MastraStorage;
  if (options.storage === 'libsql' || options.databaseUrl) {
    let url = options.databaseUrl;
    if (!url) {
      dir = mkdtempSync(join(tmpdir(), 'agui-bridge-'));
      url = `file:${join(dir, 'test.db')}`;
    }
    storage = new LibSQLStore({ id: 'test', url });
  } else {
    storage = new InMemoryStore();
  }
  const demo = createDemoAgent({ storage, delayMs: options.delayMs ?? 0, slowTaskMs: 100 });
  const agents = { ...(options.withDemo === false ? {} : { demo }), ...options.agents?.(storage) };
  const mastra = new Mastra({ agents, storage, logger: false, backgroundTasks: { enabled: true } });
  const bridge = createBridge({ logger: silentLogger, ...options.config });
  const app = bridge.app(mastra);
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}${bridge.config.prefix}`,
    mastra,
    bridge,
    storage,
    demo,
    close: async () => {
      bridge.shutdown();
      (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await mastra.shutdown().catch(() => {});
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Keeps expected errors out of the test output; tests that care pass their own logger. */
export const silentLogger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** JSON request helper: returns status, parsed body (or text) and headers. */
export async function http(
  url: string,
  init: { method?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url, {
    method: init.method ?? (init.body !== undefined || init.rawBody !== undefined ? 'POST' : 'GET'),
    headers: { 'content-type': 'application/json', ...init.headers },
    body: init.rawBody ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body, headers: res.headers };
}
