import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runInput, uid, userMessage } from './support/agui.js';
import { http, useTestBridge } from './support/server.js';

/**
 * The walk of a request (docs/architecture.md "Two walks"): every call the bridge makes into
 * Mastra while it serves one request, each with the bridge's frames on the stack at that moment,
 * from the route's handler down (the app's middlewares, before the route, are left out). A hop is
 * a frame of the bridge's on such a stack, the walk's depth its longest stack, its files the files
 * of its frames.
 * Measured on the real objects: Mastra's agent, its memory, its storage and the Mastra instance,
 * each method wrapped to read the stack of its caller.
 */
interface Walk {
  /** `file:function` of every bridge frame on a stack that entered Mastra. */
  functions: Set<string>;
  files: Set<string>;
  /** The most bridge frames on one stack: the longest way from the route to a call into Mastra. */
  depth: number;
  /** That longest way, from the route down. */
  deepest: string[];
  /** Each call the bridge made into Mastra, by method name, in order. */
  entries: string[];
}

/**
 * What each walk may not grow past: the project's bound is 10 hops, over 12 files for a message; a
 * `/run`'s files are held where they stand.
 */
const BOUNDS = { sendMessage: { depth: 10, files: 12 }, run: { depth: 10, files: 18 } };

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
/** The app's middlewares, before a request reaches its route: not the walk's. */
const BEFORE_THE_ROUTE = /^(bridge\.ts|observability\/(http-metrics|request-log|server-span)\.ts)$/;
/** A stack line of the bridge's sources: the function (if named) and the file under `src/`. */
const FRAME = new RegExp(`at (?:async )?(?:(\\S+) \\()?${SRC.replace(/[/.]/g, '\\$&')}([^:()]+):\\d+:\\d+\\)?$`);

/** Wraps each method of `target` (and its prototypes up to Object) to record calls the bridge makes into it. */
function watch(target: object, walk: { current?: Walk }, restore: Array<() => void>): void {
  const seen = new Set<string>();
  for (let proto = Object.getPrototypeOf(target) as object | null; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const descriptor = Object.getOwnPropertyDescriptor(proto, name);
      if (name === 'constructor' || seen.has(name) || typeof descriptor?.value !== 'function') continue;
      seen.add(name);
      const original = descriptor.value as (...args: unknown[]) => unknown;
      const own = target as Record<string, unknown>;
      own[name] = function (this: unknown, ...args: unknown[]) {
        if (walk.current) record(walk.current, name, new Error().stack ?? '');
        return original.apply(this, args);
      };
      restore.push(() => delete own[name]);
    }
  }
}

/** One entry into Mastra: counted when its caller is the bridge, its bridge frames added to the walk. */
function record(walk: Walk, method: string, stack: string): void {
  const frames = stack.split('\n').slice(2); // the Error line and the wrapper
  const caller = FRAME.exec(frames[0]?.trim() ?? '');
  if (!caller) return; // Mastra calling itself
  walk.entries.push(method);
  const way: string[] = [];
  for (const line of frames) {
    const frame = FRAME.exec(line.trim());
    if (!frame || BEFORE_THE_ROUTE.test(frame[2])) continue;
    const hop = `${frame[2]}:${frame[1] ?? '(anonymous)'}`;
    way.unshift(hop);
    walk.files.add(frame[2]);
    walk.functions.add(hop);
  }
  if (way.length > walk.depth) Object.assign(walk, { depth: way.length, deepest: [...way, method] });
}

describe('the walk of a request, route to Mastra', () => {
  const tb = useTestBridge({ storage: 'libsql' });
  const restore: Array<() => void> = [];
  afterEach(() => restore.splice(0).forEach((undo) => undo()));

  async function walkOf(request: () => Promise<void>): Promise<Walk> {
    const box: { current?: Walk } = {};
    const memory = await tb.demo.getMemory();
    const domains = await Promise.all(['memory', 'workflows', 'notifications', 'threadState'].map((name) => tb.storage.getStore(name as never)));
    for (const target of [tb.demo, tb.mastra, memory, memory?.storage, tb.storage, ...domains]) if (target) watch(target, box, restore);
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 200;
    box.current = { functions: new Set(), files: new Set(), depth: 0, deepest: [], entries: [] };
    try {
      await request();
      return box.current;
    } finally {
      box.current = undefined;
      Error.stackTraceLimit = limit;
    }
  }

  const report = (name: string, walk: Walk) =>
    console.log(
      `${name}: ${walk.depth} hops deep, ${walk.functions.size} functions over ${walk.files.size} files, Mastra entered ${walk.entries.length} times (${walk.entries.join(', ')})\n  the longest: ${walk.deepest.join(' → ')}\n  files: ${[...walk.files].join(', ')}`,
    );

  /** A thread of `walker`'s with one message answered: the walks are of a thread in use. */
  async function threadInUse(): Promise<string> {
    const threadId = uid('walk');
    const first = await http(`${tb.base}/threads/${threadId}/send-message`, { body: { message: 'first', resourceId: 'walker' } });
    expect(first.body.action).toBe('wake');
    await expect.poll(async () => (await http(`${tb.base}/threads/${threadId}/messages?resourceId=walker`)).body.length, { interval: 20 }).toBe(2);
    // And its run has let go of the thread (a few ms after its answer is stored): the walk is of an idle thread.
    await expect.poll(() => tb.demo.getActiveThreadRunId({ resourceId: 'walker', threadId }), { interval: 5 }).toBeUndefined();
    return threadId;
  }

  it('send-message', async () => {
    const threadId = await threadInUse();
    const walk = await walkOf(async () => {
      const sent = await http(`${tb.base}/threads/${threadId}/send-message`, { body: { message: 'hello', resourceId: 'walker' } });
      expect(sent.status).toBe(202);
    });
    report('send-message', walk);
    expect(walk.depth).toBeLessThanOrEqual(BOUNDS.sendMessage.depth);
    expect(walk.files.size).toBeLessThanOrEqual(BOUNDS.sendMessage.files);
    expect(walk.deepest.at(-1)).toBeDefined();
  });

  it('/run', async () => {
    const threadId = await threadInUse();
    const walk = await walkOf(async () => {
      const res = await fetch(`${tb.base}/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ ...runInput({ threadId, messages: [userMessage('hello')] }), forwardedProps: { resourceId: 'walker' } }),
      });
      expect(await res.text()).toContain('RUN_FINISHED');
    });
    report('/run', walk);
    expect(walk.depth).toBeLessThanOrEqual(BOUNDS.run.depth);
    expect(walk.files.size).toBeLessThanOrEqual(BOUNDS.run.files);
    expect(walk.entries).toContain('stream');
  });
});
