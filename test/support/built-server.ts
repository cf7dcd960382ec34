import { ensureBuilt } from '../../scripts/fresh-build.mjs';

/**
 * vitest's global setup: the tests start the built server as a real process (`startServerProcess`:
 * ready in a second or two, where the TypeScript sources through tsx take several), so it is
 * built first when dist/ is older than its sources, as `npm start` does.
 */
export default function buildServer(): void {
  if (ensureBuilt() !== 0) throw new Error('npm run build failed: the tests start the built server (dist/server.js)');
}
