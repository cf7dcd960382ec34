import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/process.js';

/**
 * The shape of `src/` that docs/architecture.md states, checked on the import graph (value and
 * type imports alike, tests left out): no cycle between modules, each folder imports only the
 * folders below it, `translate/` nothing of the bridge's, `redis/pubsub/` nothing outside itself.
 */
const SRC = join(REPO_ROOT, 'src');

/** The wiring at the top (`createBridge`, the container, the lifecycle of what it wires, the public entry) may import anything. */
const TOP = new Set(['index.ts', 'bridge.ts', 'container.ts', 'lifecycle.ts']);
/** The root modules every folder may import. */
const BASE = new Set(['config.ts', 'errors.ts', 'id.ts', 'signal-shapes.ts', 'tokens.ts', 'logger.ts', 'text.ts', 'within.ts']);

/** What each folder may import besides itself and the root modules (docs/architecture.md, "One folder per stage"). */
const ALLOWED: Record<string, string[]> = {
  http: [
    'agents',
    'feed',
    'idempotency',
    'limits',
    'observability',
    'runs',
    'schedules',
    'signals',
    'sse',
    'threads',
    'translate',
    'auth',
    'workflows',
    'webhooks',
    'mastra',
  ],
  sse: [],
  runs: ['threads', 'agents', 'state', 'translate', 'observability', 'mastra'],
  workflows: ['runs', 'threads', 'agents', 'feed', 'state', 'translate', 'observability', 'mastra'],
  signals: ['threads', 'agents', 'translate', 'observability', 'mastra'],
  schedules: ['threads', 'observability', 'mastra'],
  feed: ['threads', 'state', 'translate', 'runs', 'observability', 'mastra'],
  threads: ['agents', 'state', 'translate', 'observability', 'mastra'],
  agents: ['state', 'translate', 'mastra'],
  state: ['translate', 'mastra'],
  idempotency: ['mastra'],
  translate: ['mastra'],
  mastra: [],
  auth: ['mastra'],
  limits: [],
  observability: [],
  webhooks: ['threads', 'observability', 'translate'],
  redis: ['agents', 'feed', 'runs', 'signals', 'threads', 'limits', 'translate', 'observability', 'mastra'],
  server: ['auth', 'demo', 'limits', 'observability', 'redis', 'translate', 'mastra', '(top)'],
  // The client is a bundle of its own (browser or Node): it imports the server's schemas as types
  // only (its wire types are their `z.input`), which leave nothing in its JavaScript.
  client: [],
  demo: [],
};

/** Folders whose type imports are free (erased), their value imports held to `ALLOWED`. */
const TYPES_ANYWHERE = new Set(['client']);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** Static imports and re-exports (a dynamic `import()` is not one: it loads only when it runs). */
const IMPORT = /^(?:import|export)\b[^'"]*?['"](\.{1,2}\/[^'"]+)['"]/gm;
/**
 * Folders and files that use Mastra as any app on it does, not through the door: the demo agent,
 * the standalone server that builds its Mastra, and the Redis pub/sub (a Mastra `PubSub`, cut to
 * be a package of its own). `client/` speaks HTTP only; its methods share some of Mastra's names.
 */
const DOOR_EXEMPT = ['mastra/', 'demo/', 'server/', 'redis/pubsub/', 'client/'];

/** Static imports of `@mastra/core`: whether the whole import is `import type`, and what it names. */
const MASTRA_IMPORT = /^import\s+(type\s+)?([^'"]*?)\s+from\s+['"]@mastra\/core[^'"]*['"]/gm;

/** Whether `text` imports a value (not only types) from `@mastra/core`: `import type`, and `{ type A }` names, are erased. */
function importsMastraValue(text: string): boolean {
  return [...text.matchAll(MASTRA_IMPORT)].some(([, typeOnly, clause]) => {
    if (typeOnly) return false;
    const named = /^\{([\s\S]*)\}$/.exec(clause.trim());
    if (!named) return true; // a default or namespace import
    return named[1].split(',').some((name) => name.trim() !== '' && !name.trim().startsWith('type '));
  });
}
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
    const values = importGraph({ values: true });
    const upward = edges
      .filter(({ from, to }) => {
        const [a, b] = [layerOf(from), layerOf(to)];
        if (a === b || a === '(top)' || b === '(base)') return false;
        if (TYPES_ANYWHERE.has(a) && !values.get(from)?.includes(to)) return false;
        if (a === '(base)') return b !== 'translate';
        return !(ALLOWED[a] ?? []).includes(b);
      })
      .map(({ from, to }) => `${from} -> ${to}`);
    expect(upward).toEqual([]);
  });

  it('client/ reaches the server by types only (its wire types), and does', () => {
    const values = importGraph({ values: true });
    const outside = (g: Map<string, string[]>) =>
      [...g].flatMap(([from, targets]) => (from.startsWith('client/') ? targets.filter((to) => !to.startsWith('client/')) : []));
    expect(outside(values)).toEqual([]);
    expect(outside(graph)).toContain('signals/schemas.ts'); // the check sees what it looks for
  });

  it('translate/ imports nothing of the bridge outside itself but text.ts (a leaf) and the door into Mastra; redis/pubsub/ nothing outside itself', () => {
    const outside = (folder: string) =>
      edges.filter(({ from, to }) => from.startsWith(folder) && !to.startsWith(folder)).map(({ from, to }) => `${from} -> ${to}`);
    expect(outside('translate/').filter((edge) => !edge.endsWith('-> text.ts') && !edge.endsWith('-> mastra/index.ts'))).toEqual([]);
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

  describe('one door into Mastra (src/mastra/)', () => {
    /** Where `@mastra/core` may be used as well as typed: the door, and what builds on Mastra as any app does. */
    const outsideTheDoor = (module: string) => !DOOR_EXEMPT.some((prefix) => module.startsWith(prefix));
    const modules = sources(SRC).map((file) => ({ module: relative(SRC, file), text: readFileSync(file, 'utf8') }));

    it('imports values of @mastra/core only in the door (types anywhere)', () => {
      const importing = modules.filter(({ module, text }) => outsideTheDoor(module) && importsMastraValue(text));
      expect(importing.map(({ module }) => module)).toEqual([]);
    });

    it("refuses a call of Mastra's methods outside the door by type, whatever the method's name (`bridge/mastra-door`, run on src/ by `npm run lint`)", async () => {
      const eslint = new ESLint({ overrideConfig: { files: ['test/fixtures/door/**'], rules: { 'bridge/mastra-door': 'error' } } });
      const [result] = await eslint.lintFiles(['test/fixtures/door/outside.ts']);
      const refused = result.messages.filter((m) => m.ruleId === 'bridge/mastra-door').map((m) => m.message.split('()')[0]);
      expect(refused.sort()).toEqual(['flush', 'getActiveThreadRunId', 'getDescription', 'getPubSub', 'listWorkflows']);
    });

    it("keeps the casts past Mastra's types (`as never`) inside the door", () => {
      const casting = modules.filter(({ module, text }) => !module.startsWith('mastra/') && text.includes(' as never'));
      expect(casting.map(({ module }) => module)).toEqual([]);
    });

    it('is entered through its index only', () => {
      const past = edges.filter(({ from, to }) => !from.startsWith('mastra/') && to.startsWith('mastra/') && to !== 'mastra/index.ts');
      expect(past.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
    });

    it('sees what it looks for', () => {
      expect(importsMastraValue("import { Agent } from '@mastra/core/agent';")).toBe(true);
      expect(importsMastraValue("import { Mastra } from '@mastra/core';")).toBe(true);
      expect(importsMastraValue("import type { Agent } from '@mastra/core/agent';")).toBe(false);
      expect(importsMastraValue("import { type Agent, type Tool } from '@mastra/core/agent';")).toBe(false);
      expect(importsMastraValue("import {\n  type Agent,\n  createTool,\n} from '@mastra/core/tools';")).toBe(true);
      expect(modules.filter(({ module, text }) => module.startsWith('mastra/') && importsMastraValue(text)).length).toBeGreaterThan(0);
    });
  });

  it('finds an import that runs up, so the checks above can fail', () => {
    const probe = new Map(graph);
    probe.set('translate/probe.ts', ['http/errors.ts']);
    probe.set('http/errors.ts', [...(graph.get('http/errors.ts') ?? []), 'translate/probe.ts']);
    expect(cycles(probe).length).toBeGreaterThan(0);
  });
});
