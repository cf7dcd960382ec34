import { readFileSync } from 'node:fs';
import { REDIS_PEER } from '../redis/pubsub/index.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { importPeer, installHint, OPTIONAL_PEERS } from './peers.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  dependencies: Record<string, string>;
};

describe('optional peer dependencies', () => {
  it('are the ones package.json declares optional, at the same ranges, and none is also a dependency', () => {
    const declared = Object.entries(pkg.peerDependencies).filter(([name]) => pkg.peerDependenciesMeta[name]?.optional);
    const named = { ...OPTIONAL_PEERS, redis: REDIS_PEER.slice('redis@'.length) };
    expect(Object.fromEntries(declared.filter(([name]) => name in named))).toEqual(named);
    for (const name of Object.keys(pkg.peerDependencies)) expect(pkg.dependencies).not.toHaveProperty(name);
  });

  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('a missing one is an error that says what needs it and how to install it', async () => {
    // Not run through npx (which `npx vitest` would be).
    vi.stubEnv('npm_command', 'test');
    const missing = Object.assign(new Error("Cannot find package '@mastra/pg' imported from /app/dist/server.js"), { code: 'ERR_MODULE_NOT_FOUND' });
    const error = await importPeer('@mastra/pg', () => Promise.reject(missing), 'a postgres: DATABASE_URL').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('@mastra/pg is not installed; a postgres: DATABASE_URL needs it: npm install @mastra/pg@~1.27.1');
    expect((error as Error).cause).toBe(missing);
  });

  it('any other failure to load, or a missing package the peer imports, is passed on as it is', async () => {
    const inner = Object.assign(new Error("Cannot find package '@libsql/client' imported from /app/node_modules/@mastra/libsql/dist/index.js"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    await expect(importPeer('@mastra/libsql', () => Promise.reject(inner), 'x')).rejects.toBe(inner);
    const broken = new SyntaxError('Unexpected token');
    await expect(importPeer('pg', () => Promise.reject(broken), 'x')).rejects.toBe(broken);
  });

  it('loads the peer when it is installed', async () => {
    const { LibSQLStore } = await importPeer('@mastra/libsql', () => import('@mastra/libsql'), 'x');
    expect(typeof LibSQLStore).toBe('function');
  });

  it('the install hint for a server run with npx runs it again with the peer beside it', () => {
    expect(installHint('@mastra/pg@~1.27.1', { npm_command: 'exec' })).toBe('npx -p mastra-agui-bridge -p @mastra/pg@~1.27.1 mastra-agui-bridge');
    expect(installHint('@mastra/pg@~1.27.1', { npm_command: 'start' })).toBe('npm install @mastra/pg@~1.27.1');
    expect(installHint('@mastra/pg@~1.27.1', {})).toBe('npm install @mastra/pg@~1.27.1');
    // A range the shell would misread is quoted.
    expect(installHint('@opentelemetry/sdk-node@>=0.218.0', {})).toBe("npm install '@opentelemetry/sdk-node@>=0.218.0'");
  });
});
