import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Mastra } from '@mastra/core';
import { LibSQLStore } from '@mastra/libsql';
import { createBridge, type Bridge } from '../bridge.js';
import type { BridgeConfig } from '../config.js';
import { createDemoAgent } from '../demo/agent.js';
import type { ServerEnv } from './env.js';

/** A running standalone bridge. */
export interface RunningServer {
  url: string;
  bridge: Bridge;
  mastra: Mastra;
  /** Ends open runs with their terminal event, stops listening, closes storage. */
  close(): Promise<void>;
}

/** Makes sure the folder of a `file:` database exists. */
function prepareDatabase(url: string): void {
  if (!url.startsWith('file:')) return;
  const path = url.slice('file:'.length);
  if (path && path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
}

/**
 * Starts the bridge standalone: LibSQL storage, the demo agent, background tasks on.
 *
 * @example
 * const server = await startServer(readServerEnv());
 * console.log(server.url);
 */
export async function startServer(env: ServerEnv, bridgeConfig: BridgeConfig = {}): Promise<RunningServer> {
  prepareDatabase(env.DATABASE_URL);
  const storage = new LibSQLStore({ id: 'bridge', url: env.DATABASE_URL });
  const demo = createDemoAgent({ storage, delayMs: env.DEMO_DELAY_MS, slowTaskMs: env.SLOW_TASK_MS, model: env.MODEL });
  const mastra = new Mastra({ agents: { demo }, storage, logger: false, backgroundTasks: { enabled: true } });
  const bridge = createBridge({ prefix: env.AGUI_PREFIX, ...bridgeConfig });
  const app = bridge.app(mastra);
  let server: ServerType;
  try {
    server = await new Promise<ServerType>((resolve, reject) => {
      const s = serve({ fetch: app.fetch, hostname: env.HOST, port: env.PORT }, () => {
        s.off('error', reject);
        resolve(s);
      });
      // A failed listen (EADDRINUSE, EACCES) is an 'error' event, not a throw: unheard, it crashes
      // the process with a raw stack instead of main's one-line message and exit code 1.
      s.once('error', reject);
    });
  } catch (error) {
    await storage.close().catch(() => {});
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  const host = env.HOST.includes(':') ? `[${env.HOST}]` : env.HOST;
  return {
    url: `http://${host}:${port}${env.AGUI_PREFIX}`,
    bridge,
    mastra,
    close: async () => {
      bridge.shutdown();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Let the cancelled streams write their terminal event, then drop idle keep-alive sockets.
        setTimeout(() => (server as { closeAllConnections?: () => void }).closeAllConnections?.(), 200).unref();
      });
      await mastra.shutdown().catch(() => {});
      await storage.close().catch(() => {});
    },
  };
}
