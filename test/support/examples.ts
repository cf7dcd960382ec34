import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './process.js';

/**
 * Installs `examples/<name>` from its own lockfile (`npm ci`) unless its node_modules is current,
 * and returns the folder. Examples keep their dependencies out of the root lockfile (like bench/),
 * so a fresh clone installs them on first use. npm writes `node_modules/.package-lock.json` last,
 * so an interrupted install or a lockfile changed since is installed again.
 */
export async function installExample(name: string): Promise<string> {
  const dir = join(REPO_ROOT, 'examples', name);
  const installed = join(dir, 'node_modules/.package-lock.json');
  if (existsSync(installed) && statSync(installed).mtimeMs >= statSync(join(dir, 'package-lock.json')).mtimeMs) return dir;
  process.stderr.write(`installing examples/${name} (npm ci, first run only)…\n`);
  await promisify(execFile)('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, maxBuffer: 64 * 1024 * 1024 }).catch((error) => {
    throw new Error(`npm ci in examples/${name} failed:\n${error.stderr ?? error}`);
  });
  return dir;
}
