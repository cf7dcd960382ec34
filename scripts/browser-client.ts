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
import { build, type Plugin } from 'esbuild';

/**
 * zod's translations of its error messages (~400 kB): `@ag-ui/core` imports zod's `z` object, which
 * holds them all, so a bundler cannot leave them out. The client never switches zod's language (the
 * English messages are imported on their own and stay), so the bundle gets an empty module instead.
 */
const withoutZodLocales: Plugin = {
  name: 'without-zod-locales',
  setup(build) {
    build.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      /[/\\]node_modules[/\\]zod[/\\]/.test(args.importer) ? { path: 'zod-locales', namespace: 'empty' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'empty' }, () => ({ contents: 'export {};', loader: 'js' }));
  },
};

/** Bundles `src/client/index.ts` of the package at `root` for browsers; resolves with the code. */
export async function bundleBrowserClient(root: string): Promise<string> {
  const result = await build({
    // One zod: `@ag-ui/client` pins zod 3.25 for its `zod/v4` API, which the package's zod 4 also
    // answers; bundled twice it was a quarter of the bundle.
    alias: { zod: './node_modules/zod' },
    plugins: [withoutZodLocales],
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
