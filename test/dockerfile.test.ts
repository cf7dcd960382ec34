import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/process.js';

// The repository's Dockerfile, checked as text where no Docker daemon builds it (.ci/run builds it
// where one does): what it installs, who runs it, and how it stops.
const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
const dockerignore = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8')
  .split('\n')
  .map((line) => line.trim());
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> };

/** The `name@version` words of the final stage's `npm install`. */
function installed(): Map<string, string> {
  const install = /npm install --omit=dev[^&]*/.exec(dockerfile.replace(/\\\n/g, ' '))?.[0] ?? '';
  return new Map([...install.matchAll(/(@?[a-z0-9/.-]+)@(\d+\.\d+\.\d+)/g)].map(([, name, version]) => [name, version]));
}

/** Whether `version` is a pinned `x.y.z` of package.json, or inside a `~x.y.z`, `^x.y.z` or `>=x.y.z` range of it. */
function within(version: string, range: string): boolean {
  if (version === range) return true;
  if (range.startsWith('>=')) return version.localeCompare(range.slice(2), undefined, { numeric: true }) >= 0;
  const [major, minor, patch] = version.split('.').map(Number);
  const [, kind, a, b, c] = /^([~^])(\d+)\.(\d+)\.(\d+)$/.exec(range) ?? [];
  if (!kind) return false;
  const [ra, rb, rc] = [a, b, c].map(Number);
  if (major !== ra) return false;
  if (kind === '~') return minor === rb && patch >= rc;
  return minor > rb || (minor === rb && patch >= rc);
}

describe('the Dockerfile', () => {
  it('installs the packed package with every peer the server may load, each pinned inside the range package.json gives', () => {
    const versions = installed();
    const traces = ['@opentelemetry/sdk-node', '@mastra/observability', '@mastra/otel-bridge'];
    for (const peer of ['@mastra/core', '@mastra/memory', '@mastra/libsql', '@mastra/pg', 'pg', 'redis', ...traces]) {
      expect(versions.has(peer), peer).toBe(true);
      expect(within(versions.get(peer)!, pkg.peerDependencies[peer]), `${peer}@${versions.get(peer)} in ${pkg.peerDependencies[peer]}`).toBe(true);
    }
    expect(dockerfile).toMatch(/npm install --omit=dev[^\n]*\/tmp\/mastra-agui-bridge-\*\.tgz/);
  });

  it('runs the bin as the unprivileged node user, in exec form (SIGTERM reaches the server), with a health check', () => {
    const final = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(final).toMatch(/\nUSER node\n/);
    expect(final.indexOf('USER node')).toBeLessThan(final.indexOf('CMD '));
    expect(final).toContain('CMD ["node", "node_modules/mastra-agui-bridge/bin/mastra-agui-bridge.js"]');
    expect(final).toContain('STOPSIGNAL SIGTERM');
    expect(final).toMatch(/HEALTHCHECK .*\/healthz/);
    expect(final).toMatch(/chown node:node \/data/);
  });

  it('builds from the sources only: .dockerignore keeps installs, builds and local data out', () => {
    for (const path of ['.git', 'node_modules', 'dist', '.data', 'examples/*/node_modules', 'bench/node_modules']) expect(dockerignore, path).toContain(path);
  });
});
