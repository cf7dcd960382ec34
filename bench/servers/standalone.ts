/**
 * The standalone server (`npm start`: LibSQL file, demo agent, durable inbox) on a fresh database
 * in a temporary folder, for the durability phase. `BRIDGE_DIR` names the checkout whose server
 * runs (default this one): a baseline checkout must share this one's `node_modules` (a symlink),
 * so that both load the same Mastra.
 *
 * Prints `READY <port>` and answers `{ cmd: 'exit' }` over IPC, as the other bench servers do.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../lib/fixtures.js';

type Standalone = typeof import('../../src/server/standalone.js');
type Env = typeof import('../../src/server/env.js');

const dir = process.env.BRIDGE_DIR ?? REPO_ROOT;
const load = <T>(file: string) => import(pathToFileURL(join(dir, file)).href) as Promise<T>;
const [{ startServer }, { readServerEnv }] = await Promise.all([load<Standalone>('src/server/standalone.ts'), load<Env>('src/server/env.ts')]);

const data = mkdtempSync(join(tmpdir(), 'bench-libsql-'));
const server = await startServer(readServerEnv({ PORT: '0', DATABASE_URL: `file:${join(data, 'bridge.db')}`, DEMO_DELAY_MS: process.env.DEMO_DELAY_MS ?? '0' }));

async function exit(): Promise<never> {
  await server.close().catch(() => {});
  rmSync(data, { recursive: true, force: true });
  process.exit(0);
}
process.on('message', (message: { cmd?: string }) => void (message.cmd === 'exit' && exit()));
process.on('disconnect', () => void exit());
console.log(`READY ${new URL(server.url).port}`);
