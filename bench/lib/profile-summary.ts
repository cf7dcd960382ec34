/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time by package / source file, and
 * the hottest functions. Used to split a server's CPU between Mastra's loop, the HTTP stack and
 * the layer under test.
 *
 *   npx tsx bench/lib/profile-summary.ts bench/results/profiles/<file>.cpuprofile [top]
 */
import { readFileSync } from 'node:fs';
import { isMain } from './fixtures.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSplit {
  totalMs: number;
  /** Self time (ms) per group: a package under node_modules, `bridge src`, `node internals`, `gc`, `idle`. */
  groups: Array<{ group: string; ms: number; share: number }>;
  /**
   * The same time by owner: Node's own frames (web streams, promise hooks, HTTP) are charged to
   * the nearest caller outside Node, so a stream read Mastra's loop does counts as Mastra's.
   */
  owners: Array<{ group: string; ms: number; share: number }>;
  functions: Array<{ name: string; where: string; ms: number; share: number }>;
}

/** The group a source URL belongs to. */
export function groupOf(url: string, name: string): string {
  if (!url) return name === '(garbage collector)' ? 'gc' : name === '(idle)' || name === '(program)' ? name.slice(1, -1) : 'native';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  // The demo agent's scripted model runs in all three servers: it is not the bridge's cost.
  if (url.includes('/src/demo/')) return 'demo model';
  // The shared mode's Redis code (thread logs, locks, Mastra's pub/sub on Redis Streams).
  if (url.includes('/src/redis/')) return 'bridge src/redis';
  if (url.includes('/src/')) return 'bridge src';
  if (url.includes('/bench/')) return 'bench harness';
  if (url.startsWith('node:')) return 'node internals';
  return url;
}

const NOT_CODE = new Set(['gc', 'idle', 'program']);

/** The group that owns a node's time: its own, or for Node internals the nearest caller's outside Node. */
function ownerOf(id: number, byId: Map<number, ProfileNode>, parents: Map<number, number>): string {
  const own = groupOf(byId.get(id)!.callFrame.url, byId.get(id)!.callFrame.functionName);
  if (own !== 'node internals' && own !== 'native') return own;
  for (let at = parents.get(id); at !== undefined; at = parents.get(at)) {
    const { url, functionName } = byId.get(at)!.callFrame;
    const group = groupOf(url, functionName);
    if (group !== 'node internals' && group !== 'native' && !NOT_CODE.has(group)) return group;
  }
  return own;
}

function shares(totals: Map<string, number>, busy: number): Array<{ group: string; ms: number; share: number }> {
  return [...totals].map(([group, ms]) => ({ group, ms, share: ms / busy })).sort((a, b) => b.ms - a.ms);
}

export function summarise(profile: CpuProfile, top = 25): ProfileSplit {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + profile.timeDeltas[i] / 1000);
  const groups = new Map<string, number>();
  const owners = new Map<string, number>();
  const functions = new Map<string, { name: string; where: string; ms: number }>();
  let totalMs = 0;
  for (const [id, ms] of self) {
    const { callFrame } = byId.get(id) as ProfileNode;
    const group = groupOf(callFrame.url, callFrame.functionName);
    totalMs += ms;
    groups.set(group, (groups.get(group) ?? 0) + ms);
    const owner = ownerOf(id, byId, parents);
    owners.set(owner, (owners.get(owner) ?? 0) + ms);
    const where = `${callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(src|bench)\//, '$1/')}:${callFrame.lineNumber + 1}`;
    const key = `${callFrame.functionName}@${where}`;
    const entry = functions.get(key) ?? { name: callFrame.functionName || '(anonymous)', where, ms: 0 };
    entry.ms += ms;
    functions.set(key, entry);
  }
  const busy = totalMs - (groups.get('idle') ?? 0);
  return {
    totalMs,
    groups: shares(groups, busy),
    owners: shares(owners, busy),
    functions: [...functions.values()]
      .map((f) => ({ ...f, share: f.ms / busy }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, top),
  };
}

if (isMain(import.meta.url)) {
  const [file, top] = process.argv.slice(2);
  const split = summarise(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, Number(top ?? 25));
  console.log(`total ${split.totalMs.toFixed(0)} ms (shares are of busy time, idle excluded)`);
  for (const g of split.groups) console.log(`${(g.share * 100).toFixed(1).padStart(6)}%  ${g.ms.toFixed(0).padStart(7)} ms  ${g.group}`);
  console.log('\nby owner (Node internals charged to their nearest caller):');
  for (const g of split.owners.filter((o) => o.group !== 'idle'))
    console.log(`${(g.share * 100).toFixed(1).padStart(6)}%  ${g.ms.toFixed(0).padStart(7)} ms  ${g.group}`);
  console.log('\nhottest functions (self time):');
  for (const f of split.functions) console.log(`${(f.share * 100).toFixed(1).padStart(6)}%  ${f.ms.toFixed(0).padStart(7)} ms  ${f.name}  ${f.where}`);
}
