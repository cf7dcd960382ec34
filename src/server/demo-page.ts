import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Hono } from 'hono';

/** The package root: the folder with `web/index.html`, found from `src/server/` as from `dist/` or `dist/chunks/`. */
function findPackageRoot(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 4; up++, dir = dirname(dir)) {
    if (existsSync(join(dir, 'web', 'index.html'))) return dir;
  }
  return undefined;
}

/**
 * The page's copy of `mastra-agui-bridge/client` (scripts/browser-client.ts), made once on first
 * request. Run from source (this file is TypeScript: `npm start`, tests), it is bundled from
 * `src/client/`, so a fresh clone needs no build; run from the build, it is `dist/client.browser.js`.
 */
function browserClient(root: string): () => Promise<string> {
  let code: Promise<string> | undefined;
  const load = async () => {
    if (!import.meta.url.endsWith('.ts')) return readFile(join(root, 'dist', 'client.browser.js'), 'utf8');
    const script = pathToFileURL(join(root, 'scripts', 'browser-client.ts')).href;
    const { bundleBrowserClient } = (await import(script)) as typeof import('../../scripts/browser-client.js');
    return bundleBrowserClient(root);
  };
  // A failure is not kept: the next request tries again.
  return () =>
    (code ??= load().catch((error: unknown) => {
      code = undefined;
      throw error;
    }));
}

const PAGE_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};
/** Only same-origin scripts, styles and connections: the page has no inline code. */
const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * Serves the demo page (`web/`, see docs/client.md) at `GET /`, its assets at `GET /ui/<file>`, and
 * its client bundle at `GET /ui/client.js`. The page learns the bridge prefix and whether it needs
 * a token (`auth`: `none`, or `bearer:<claim naming the resource>`) from values filled in here.
 */
export function servePage(app: Hono, prefix: string, auth: string): void {
  const root = findPackageRoot();
  if (!root) return;
  const dir = join(root, 'web');
  const client = browserClient(root);
  const headers = { 'Cache-Control': 'no-cache', 'X-Content-Type-Options': 'nosniff' };
  app.get('/', async (c) => {
    const html = await readFile(join(dir, 'index.html'), 'utf8');
    return c.html(html.replaceAll('%AGUI_PREFIX%', prefix).replaceAll('%AGUI_AUTH%', auth), 200, { ...headers, 'Content-Security-Policy': PAGE_CSP });
  });
  app.get('/ui/client.js', async (c) => c.body(await client(), 200, { ...headers, 'Content-Type': PAGE_TYPES['.js'] }));
  app.get('/ui/:file', async (c) => {
    const file = c.req.param('file');
    const type = PAGE_TYPES[extname(file)];
    if (!type || !/^[\w-]+\.\w+$/.test(file)) return c.notFound();
    // A file the page does not have is a 404, like any other path.
    const body = await readFile(join(dir, file)).catch(() => undefined);
    return body ? c.body(body, 200, { ...headers, 'Content-Type': type }) : c.notFound();
  });
}
