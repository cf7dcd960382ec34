/**
 * The browser bundle of `mastra-agui-bridge/client`: one self-contained ES module (the client with
 * `@ag-ui/client`, `rxjs` and what they import) that a page loads with no build step of its own.
 * The demo page imports it from `/ui/client.js`.
 *
 * - `npm run build` runs this file: it writes `dist/client.browser.js`, which the built server
 *   serves and the package ships (`mastra-agui-bridge/client/browser`).
 * - The server run from source (`npm start`, tests) calls `bundleBrowserClient()` instead, so a
 *   fresh clone needs no build and the page always runs the current `src/client/`.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/** Bundles `src/client/index.ts` of the package at `root` for browsers; resolves with the code. */
export async function bundleBrowserClient(root: string): Promise<string> {
  const result = await build({
    entryPoints: [join(root, 'src', 'client', 'index.ts')],
    absWorkingDir: root,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const file = join(root, 'dist', 'client.browser.js');
  await writeFile(file, await bundleBrowserClient(root));
  console.log(`wrote ${file}`);
}
