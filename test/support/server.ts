import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { Mastra } from '@mastra/core';
import type { Agent } from '@mastra/core/agent';
import type { AnyWorkflow } from '@mastra/core/workflows';
import { InMemoryStore, type MastraStorage } from '@mastra/core/storage';
import { LibSQLStore, type SqliteClient } from '@mastra/libsql';
import { afterAll, beforeAll } from 'vitest';
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
  /** A LibSQL client to store through (a `sqlLog`'s, to count statements): its database is the caller's. */
  libsqlClient?: SqliteClient;
  /** More agents to register next to `demo`. */
  agents?: (storage: MastraStorage) => Record<string, Agent>;
  /** Register the demo agent (default true). */
  withDemo?: boolean;
  /** Workflows to register (e.g. the demo's `draft-and-send`, `createDemoWorkflow()`). */
  workflows?: () => Record<string, AnyWorkflow>;
  /** Starts Mastra's workers with the scheduler ticking every `tickIntervalMs`: schedules fire. */
  scheduler?: { tickIntervalMs: number };
}

/** Starts a real bridge on a real socket (127.0.0.1, random port) over a real Mastra. */
export async function startTestBridge(options: TestBridgeOptions = {}): Promise<TestBridge> {
  let dir: string | undefined;
  let storage: MastraStorage;
  if (options.libsqlClient) {
    storage = new LibSQLStore({ id: 'test', client: options.libsqlClient });
  } else if (options.storage === 'libsql' || options.databaseUrl) {
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
  // An error code a route does not declare is a defect of the route table (route-codes.ts): the bridge logs it, the close fails on it.
  const undeclared: string[] = [];
  const logger = { ...silentLogger, error: (message: string) => void (message.includes('does not declare') && undeclared.push(message)) };
  const bridge = createBridge({ logger, ...options.config });
  const mastra = new Mastra({
    agents,
    ...(options.workflows && { workflows: options.workflows() }),
    storage,
    logger: false,
    backgroundTasks: { enabled: true },
    ...(options.scheduler && { scheduler: { enabled: true, tickIntervalMs: options.scheduler.tickIntervalMs }, schedules: bridge.scheduleHooks() }),
  });
  if (options.scheduler) await mastra.startWorkers();
  const app = bridge.app(mastra);
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  // The server runs in the test's own process: a test that blocks the event loop for seconds (a
  // synchronous type check) delays both sides' idle timers, and at Node's 5 s default the server
  // could close a kept-alive socket just as the client reuses it (ECONNRESET). The client's pool
  // (undici, about 4 s) now always lets go first.
  (server as { keepAliveTimeout?: number }).keepAliveTimeout = 60_000;
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}${bridge.config.prefix}`,
    mastra,
    bridge,
    storage,
    demo,
    close: async () => {
      await bridge.shutdown();
      (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await mastra.shutdown().catch(() => {
        // cleanup: a failed shutdown changes no result
      });
      if (dir) rmSync(dir, { recursive: true, force: true });
      if (undeclared.length > 0) throw new Error(`Answers the route table does not declare: ${undeclared.join('; ')}`);
    },
  };
}

/**
 * One bridge for the calling `describe` block (or file, at top level): registers a `beforeAll`
 * that starts it with `startTestBridge(options)` and an `afterAll` that closes it, and returns a
 * `TestBridge` whose properties read the started bridge. Read them inside tests and hooks only:
 * while vitest collects the tests the bridge is not started yet, and reading it throws. Hooks the
 * caller registers after this one run after the start and, `afterAll` ones, before the close.
 * Tests that start a second bridge mid-test, or restart on the same database, call
 * `startTestBridge` themselves.
 *
 * @example
 * describe('threads on LibSQL', () => {
 *   const tb = useTestBridge({ storage: 'libsql', config: { heartbeatMs: 50 } });
 *
 *   it('lists agents', async () => {
 *     expect((await http(`${tb.base}/agents`)).status).toBe(200);
 *   });
 * });
 */
export function useTestBridge(options: TestBridgeOptions = {}): TestBridge {
  let started: TestBridge | undefined;
  beforeAll(async () => {
    started = await startTestBridge(options);
  });
  afterAll(async () => {
    const bridge = started;
    started = undefined;
    await bridge?.close();
  });
  const current = (): TestBridge => {
    if (!started) throw new Error('useTestBridge(): the bridge runs from beforeAll to afterAll; read it inside a test or a hook');
    return started;
  };
  return {
    get base() {
      return current().base;
    },
    get mastra() {
      return current().mastra;
    },
    get bridge() {
      return current().bridge;
    },
    get storage() {
      return current().storage;
    },
    get demo() {
      return current().demo;
    },
    /** Closes the bridge early (the `afterAll` then has nothing left to do). */
    close: async () => {
      const bridge = started;
      started = undefined;
      await bridge?.close();
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
