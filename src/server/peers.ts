/**
 * The standalone server's optional peer dependencies (its storage, and its traces), with the range
 * of each: the install line a missing one's error gives. (`redis` says its own, in
 * `redis/pubsub/`.) `peers.test.ts` holds them to `package.json`'s `peerDependencies`.
 */
export const OPTIONAL_PEERS = {
  '@mastra/libsql': '~1.23.1',
  '@mastra/observability': '1.17.4',
  '@mastra/otel-bridge': '1.5.4',
  '@mastra/pg': '~1.27.1',
  // Open above: `@mastra/otel-bridge`'s own optional peers pull in newer SDK lines, and npm
  // refuses an install whose optional peers' ranges cannot meet, even with none installed.
  '@opentelemetry/sdk-node': '>=0.218.0',
  pg: '^8.23.1',
} as const;

type OptionalPeer = keyof typeof OPTIONAL_PEERS;

/**
 * Loads an optional peer dependency when a feature first needs it, so an app that does not use
 * the feature need not install it. `load` is the literal `import()` (bundlers and the CommonJS
 * build see the name); `usedFor` says which setting needed it.
 *
 * @example
 * const { LibSQLStore } = await importPeer('@mastra/libsql', () => import('@mastra/libsql'), 'a LibSQL DATABASE_URL (the default)');
 * // missing → Error: @mastra/libsql is not installed; a LibSQL DATABASE_URL (the default) needs it: npm install @mastra/libsql@~1.23.1
 */
export async function importPeer<T>(name: OptionalPeer, load: () => Promise<T>, usedFor: string): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (!isMissing(error, name)) throw error;
    throw new Error(`${name} is not installed; ${usedFor} needs it: ${installHint(`${name}@${OPTIONAL_PEERS[name]}`)}`, { cause: error });
  }
}

/**
 * How to add the package `spec`: `npm install` it or, under `npx` (`npm_command=exec`), run it
 * again with the package beside it, as an install would not reach npx's cache.
 *
 * @example
 * installHint('@mastra/pg@~1.27.1'); // 'npm install @mastra/pg@~1.27.1'
 * installHint('@mastra/pg@~1.27.1', { npm_command: 'exec' }); // 'npx -p mastra-agui-bridge -p @mastra/pg@~1.27.1 mastra-agui-bridge'
 * installHint('@opentelemetry/sdk-node@>=0.218.0'); // "npm install '@opentelemetry/sdk-node@>=0.218.0'"
 */
export function installHint(spec: string, env: NodeJS.ProcessEnv = process.env): string {
  // A range such as `>=0.218.0` is quoted: the shell would read `>` as a redirection.
  const word = /[<>|&\s]/.test(spec) ? `'${spec}'` : spec;
  return env.npm_command === 'exec' ? `npx -p mastra-agui-bridge -p ${word} mastra-agui-bridge` : `npm install ${word}`;
}

/** Node's "cannot find" for the package itself (not for something it imports in turn). */
function isMissing(error: unknown, name: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  const message = String((error as Error).message);
  return message.includes(`'${name}'`) || message.includes(`"${name}"`);
}
