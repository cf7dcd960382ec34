import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import type { Server } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { join } from 'node:path';
import { npm } from './package.js';
import { REPO_ROOT } from './process.js';

/**
 * Installs `examples/<name>` from its own lockfile (`npm ci`) unless its node_modules is current,
 * and returns the folder. Examples keep their dependencies out of the root lockfile (like bench/),
 * so a fresh clone installs them on first use. npm writes `node_modules/.package-lock.json` last,
 * so an interrupted install or a lockfile changed since is installed again.
 */
/** Longer than any install takes: a lock this old was left by an install that was killed. */
const STALE_LOCK_MS = 10 * 60_000;

export async function installExample(name: string): Promise<string> {
  const dir = join(REPO_ROOT, 'examples', name);
  const installed = join(dir, 'node_modules/.package-lock.json');
  const current = () => existsSync(installed) && statSync(installed).mtimeMs >= statSync(join(dir, 'package-lock.json')).mtimeMs;
  // Test files run in parallel processes: one installs (its lock, a folder made atomically), the others wait for it.
  const lock = join(dir, '.installing');
  for (;;) {
    if (current()) return dir;
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Left by an install that was killed: nobody holds it any more.
      const since = statSync(lock, { throwIfNoEntry: false })?.mtimeMs;
      if (since !== undefined && Date.now() - since > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
      await delay(500);
    }
  }
  try {
    if (current()) return dir;
    process.stderr.write(`installing examples/${name} (npm ci, first run only)…\n`);
    await npm(dir, ['ci', '--no-audit', '--no-fund']);
    return dir;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * What examples/copilotkit/server.ts exports, for the tests that run it. They import it by a
 * computed path: the root `tsc` leaves examples/ out, whose node_modules a fresh clone lacks
 * (`tsc -p examples/copilotkit` checks the file itself).
 */
export interface CopilotKitServerModule {
  COPILOTKIT_PATH: string;
  listen(bridgeUrl: string, port: number, hostname?: string, options?: { staticDir?: string }): Promise<Server>;
}
