import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { BridgeConfig } from '../../src/config.js';
import { readServerEnv } from '../../src/server/env.js';
import { startServer, type RunningServer, type StartOptions } from '../../src/server/standalone.js';
import { silentLogger } from './server.js';

/** A standalone server of a `describe` block: its `server`, and the `origin` its root routes are at. */
export interface StandaloneServer {
  readonly server: RunningServer;
  readonly origin: string;
}

/**
 * The standalone server (`startServer`), in this process, on a LibSQL file of its own, for the
 * calling `describe` block: started in a `beforeAll`, closed (and its folder removed) in an
 * `afterAll`. `env` is read as the server's environment on top of `PORT=0` and `DEMO_DELAY_MS=0`.
 * Read the properties inside tests and hooks only.
 *
 * @example
 * const s = useStandaloneServer({ AUTH_API_KEYS: 'k-0123456789abcdef:ops' });
 * it('answers /healthz', async () => expect((await fetch(`${s.origin}/healthz`)).status).toBe(200));
 */
export function useStandaloneServer(
  env: Record<string, string> = {},
  config: BridgeConfig = { logger: silentLogger },
  options: StartOptions = {},
): StandaloneServer {
  let dir: string | undefined;
  let started: RunningServer | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agui-standalone-'));
    started = await startServer(readServerEnv({ PORT: '0', DATABASE_URL: `file:${join(dir, 'bridge.db')}`, DEMO_DELAY_MS: '0', ...env }), config, options);
  });
  afterAll(async () => {
    await started?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const server = () => {
    if (!started) throw new Error('useStandaloneServer(): the server runs from beforeAll to afterAll; read it inside a test or a hook');
    return started;
  };
  return {
    get server() {
      return server();
    },
    get origin() {
      return new URL(server().url).origin;
    },
  };
}
