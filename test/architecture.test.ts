import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/process.js';

/**
 * The shape of `src/` that docs/architecture.md states, checked on the import graph (value and
 * type imports alike, tests left out): no cycle between modules, each folder imports only the
 * folders below it, `translate/` nothing of the bridge's, `redis/pubsub/` nothing outside itself.
 */
const SRC = join(REPO_ROOT, 'src');

/** The wiring at the top (`createBridge`, the container, the public entry) may import anything. */
const TOP = new Set(['index.ts', 'bridge.ts', 'container.ts']);
/** The root modules every folder may import. */
const BASE = new Set(['config.ts', 'errors.ts', 'id.ts', 'tokens.ts', 'logger.ts', 'text.ts', 'within.ts']);

/** What each folder may import besides itself and the root modules (docs/architecture.md, "One folder per stage"). */
const ALLOWED: Record<string, string[]> = {
  http: ['agents', 'feed', 'idempotency', 'limits', 'observability', 'runs', 'signals', 'sse', 'threads', 'translate', 'auth', 'workflows', 'webhooks'],
  sse: [],
  runs: ['threads', 'agents', 'state', 'translate', 'observability'],
  workflows: ['runs', 'threads', 'agents', 'feed', 'state', 'translate', 'observability'],
  signals: ['threads', 'agents', 'translate', 'observability'],
  feed: ['threads', 'state', 'translate', 'runs', 'observability'],
  threads: ['agents', 'state', 'translate'],
  agents: ['state', 'translate'],
  state: ['translate'],
  idempotency: [],
  translate: [],
  auth: [],
  limits: [],
  observability: [],
  webhooks: ['threads', 'observability', 'translate'],
  redis: ['agents', 'feed', 'runs', 'signals', 'threads', 'limits', 'translate', 'observability'],
  server: ['auth', 'demo', 'limits', 'observability', 'redis', 'translate', '(top)'],
  client: [],
  demo: [],
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** Static imports and re-exports (a dynamic `import()` is not one: it loads only when it runs). */
const IMPORT = /^(?:import|export)\b[^'"]*?['"](\.{1,2}\/[^'"]+)['"]/gm;
/** Static imports of the `redis` package. */
const REDIS_PACKAGE = /^import\b[^'"]*?['"]redis['"]/m;

/** Each module of `src/` (relative path) and the modules of `src/` it imports; `values` leaves out `import type`, which is erased. */
function importGraph({ values = false } = {}): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(SRC)) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(IMPORT)]
      .filter((m) => !values || !/^(import|export) type\b/.test(m[0]))
      .map((m) => relative(SRC, resolve(dirname(file), m[1].replace(/\.js$/, '.ts'))));
    graph.set(relative(SRC, file), targets);
  }
  return graph;
}

/** The folder a module belongs to: its first path segment, `(top)` or `(base)` for root modules. */
function layerOf(module: string): string {
  if (module.includes('/')) return module.split('/')[0];
  return TOP.has(module) ? '(top)' : BASE.has(module) ? '(base)' : '(root)';
}

/** Strongly connected components of more than one module (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1) found.push(component);
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('the import graph of src/', () => {
  const graph = importGraph();
  const edges = [...graph].flatMap(([from, targets]) => targets.map((to) => ({ from, to })));

  it('has no cycle', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('imports only down: each folder the folders below it and the root modules', () => {
    const upward = edges
      .filter(({ from, to }) => {
        const [a, b] = [layerOf(from), layerOf(to)];
        if (a === b || a === '(top)' || b === '(base)') return false;
        if (a === '(base)') return b !== 'translate';
        return !(ALLOWED[a] ?? []).includes(b);
      })
      .map(({ from, to }) => `${from} -> ${to}`);
    expect(upward).toEqual([]);
  });

  it('translate/ imports nothing of the bridge outside itself but text.ts (a leaf); redis/pubsub/ nothing outside itself', () => {
    const outside = (folder: string) => edges.filter(({ from, to }) => from.startsWith(folder) && !to.startsWith(folder)).map(({ from, to }) => `${from} -> ${to}`);
    expect(outside('translate/').filter((edge) => !edge.endsWith('-> text.ts'))).toEqual([]);
    expect(graph.get('text.ts')).toEqual([]);
    expect(outside('redis/pubsub/')).toEqual([]);
    // …and is reached only through its index: it could be cut out as a package as it is.
    const pastIndex = edges.filter(({ from, to }) => !from.startsWith('redis/pubsub/') && to.startsWith('redis/pubsub/') && to !== 'redis/pubsub/index.ts');
    expect(pastIndex.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });

  it('the embedded default loads no Redis code: nothing server/main.ts or createBridge loads statically is in redis/ or imports the redis package', () => {
    const loaded = importGraph({ values: true });
    const reached = (start: string) => {
      const seen = new Set([start]);
      for (const module of seen) for (const next of loaded.get(module) ?? []) seen.add(next);
      return [...seen];
    };
    const redisCode = (module: string) => module.startsWith('redis/') || REDIS_PACKAGE.test(readFileSync(join(SRC, module), 'utf8'));
    expect(reached('server/main.ts').filter(redisCode)).toEqual([]);
    expect(reached('bridge.ts').filter(redisCode)).toEqual([]);
    expect(reached('index.ts').filter(redisCode).length).toBeGreaterThan(0); // the check sees what it looks for
  });

  it('one door into Mastra: `as never` (a cast past Mastra\'s types) only in agents/mastra.ts', () => {
    const casting = sources(SRC).filter((file) => readFileSync(file, 'utf8').includes(' as never'));
    expect(casting.map((file) => relative(SRC, file))).toEqual(['agents/mastra.ts']);
  });

  it('finds an import that runs up, so the checks above can fail', () => {
    const probe = new Map(graph);
    probe.set('translate/probe.ts', ['http/errors.ts']);
    probe.set('http/errors.ts', [...(graph.get('http/errors.ts') ?? []), 'translate/probe.ts']);
    expect(cycles(probe).length).toBeGreaterThan(0);
  });
});
