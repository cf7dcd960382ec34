// The built server, rebuilt first when dist/ is missing or older than what it is built from: what
// `npm start` runs, and what the tests start as a real process (`test/support/process.ts`). The
// build's output goes to stderr.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The built standalone server. */
export const BUILT_SERVER = join(root, 'dist', 'server.js');

// What the build reads (web/ is served as it is; tests are not built).
const sources = ['src', 'package.json', 'rollup.config.js', 'tsconfig.json'].map((path) => join(root, path));

/** The newest modification time under `path`, tests left out (0 when it does not exist). */
function newest(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return path.endsWith('.test.ts') ? 0 : stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

/** Builds the package unless dist/ is newer than its sources; answers the build's exit status (0 when none was needed). */
export function ensureBuilt() {
  const builtAt = newest(BUILT_SERVER);
  if (builtAt !== 0 && !sources.some((path) => newest(path) > builtAt)) return 0;
  process.stderr.write(builtAt === 0 ? 'Building the server (first start)…\n' : 'Building the server (its sources changed)…\n');
  return spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: ['ignore', 2, 2] }).status ?? 1;
}
