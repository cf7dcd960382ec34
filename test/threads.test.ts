import { HttpAgent } from '@ag-ui/client';
import { MessageSchema } from '@ag-ui/core/schemas';
import { Agent } from '@mastra/core/agent';
import type { Context } from 'hono';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createScriptedModel } from '../src/demo/scripted-model.js';
import { ROUTES } from '../src/http/routes/index.js';
import { assistantText, runInput, runStrict, uid, userMessage } from './support/agui.js';
import { http, startTestBridge, useTestBridge, type TestBridge } from './support/server.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Creates a thread over HTTP and returns its ThreadInfo (asserting the 201). */
async function createThread(base: string, body: Record<string, unknown>, headers?: Record<string, string>) {
  const res = await http(`${base}/threads`, { body, headers });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; resourceId: string; title?: string; createdAt: string; updatedAt: string; metadata?: Record<string, unknown> };
}

/** Every route under `/threads/:threadId`, as [method, path suffix, body]. */
const THREAD_ROUTES = (resourceId: string) =>
  [
    ['GET', `?resourceId=${resourceId}`, undefined],
    ['PATCH', `?resourceId=${resourceId}`, { title: 'hijacked', metadata: { x: 1 } }],
    ['PATCH', '', { resourceId, title: 'hijacked' }],
    ['GET', `/messages?resourceId=${resourceId}`, undefined],
    ['GET', `/messages?resourceId=${resourceId}&format=agui`, undefined],
    ['DELETE', `?resourceId=${resourceId}`, undefined],
  ] as const;

describe.each(['memory', 'libsql'] as const)('thread CRUD (%s storage)', (storage) => {
  const b = useTestBridge({ storage });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('POST /threads answers 201 ThreadInfo with ISO dates, title and metadata', async () => {
    const resourceId = uid('user');
    const res = await http(`${b.base}/threads`, { body: { resourceId, title: 'Trip to Rome', metadata: { color: 'teal', n: 2 } } });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      id: expect.any(String),
      resourceId,
      title: 'Trip to Rome',
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      metadata: { color: 'teal', n: 2 },
    });
    expect(res.body.id.length).toBeGreaterThan(0);
    // Readable back with the same fields.
    expect((await http(`${b.base}/threads/${res.body.id}?resourceId=${resourceId}`)).body).toEqual(res.body);
  });

  it('honours a given threadId; a bare body falls back to the "default" resource', async () => {
    const threadId = uid('thread');
    const created = await createThread(b.base, { resourceId: 'r-given', threadId });
    expect(created.id).toBe(threadId);
    expect(created).not.toHaveProperty('title');
    expect(created).not.toHaveProperty('metadata');
    const bare = await http(`${b.base}/threads`, { method: 'POST', headers: {} });
    expect(bare.status).toBe(201);
    expect(bare.body.resourceId).toBe('default');
  });

  it('a duplicate threadId is 409 CONFLICT, and the first thread is left as it was', async () => {
    const threadId = uid('thread');
    const first = await createThread(b.base, { resourceId: 'r-dup', threadId, title: 'first' });
    const again = await http(`${b.base}/threads`, { body: { resourceId: 'r-dup', threadId, title: 'second' } });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: expect.stringContaining(threadId), code: 'CONFLICT' });
    // Another resource cannot take the id over either (it cannot create it, and the owner keeps it).
    const foreign = await http(`${b.base}/threads`, { body: { resourceId: 'r-intruder', threadId, title: 'mine now' } });
    expect(foreign.status).toBe(409);
    expect((await http(`${b.base}/threads/${threadId}?resourceId=r-dup`)).body).toEqual(first);
  });

  it('concurrent creates of one threadId: exactly one wins, the owner is not overwritten', async () => {
    const threadId = uid('race');
    // Without serialisation both would see "no thread", and the second save would replace the
    // first (LibSQL saves with INSERT OR REPLACE), handing alice's thread id to mallory.
    const race = holdFirstLookup(threadId);
    const rb = await startTestBridge({ storage, config: { resolveResourceId: race.hook } });
    await race.attach(rb);
    try {
      const [a, m] = await Promise.all([
        http(`${rb.base}/threads`, { body: { threadId, title: 'alice' }, headers: { 'x-user': 'alice' } }),
        http(`${rb.base}/threads`, { body: { threadId, title: 'mallory' }, headers: { 'x-user': 'mallory' } }),
      ]);
      expect([a.status, m.status].sort()).toEqual([201, 409]);
      const winner = a.status === 201 ? 'alice' : 'mallory';
      const loser = winner === 'alice' ? 'mallory' : 'alice';
      const owned = await http(`${rb.base}/threads/${threadId}`, { headers: { 'x-user': winner } });
      expect(owned.status).toBe(200);
      expect(owned.body).toMatchObject({ resourceId: winner, title: winner });
      expect((await http(`${rb.base}/threads/${threadId}`, { headers: { 'x-user': loser } })).status).toBe(404);
    } finally {
      vi.restoreAllMocks();
      await rb.close();
    }
  });

  it('concurrent PATCHes that remove different keys both take effect', async () => {
    const threadId = uid('patch-race');
    const race = holdFirstLookup(threadId);
    const rb = await startTestBridge({ storage, config: { resolveResourceId: race.hook } });
    const as = { 'x-user': 'alice' };
    await createThread(rb.base, { threadId, metadata: { x: 1, y: 1, z: 1 } }, as);
    await race.attach(rb);
    try {
      const results = await Promise.all([
        http(`${rb.base}/threads/${threadId}`, { method: 'PATCH', body: { metadata: { x: null } }, headers: as }),
        http(`${rb.base}/threads/${threadId}`, { method: 'PATCH', body: { metadata: { y: null } }, headers: as }),
      ]);
      expect(results.map((r) => r.status)).toEqual([200, 200]);
      expect((await http(`${rb.base}/threads/${threadId}`, { headers: as })).body.metadata).toEqual({ z: 1 });
    } finally {
      vi.restoreAllMocks();
      await rb.close();
    }
  });

  it('GET /threads lists the resource’s threads newest first, with page-index pagination', async () => {
    const resourceId = uid('lister');
    // Fake only Date, so that createdAt is distinct and known: no sleeps, no ties.
    vi.useFakeTimers({ toFake: ['Date'] });
    const titles = ['t0', 't1', 't2', 't3', 't4'];
    for (const [i, title] of titles.entries()) {
      vi.setSystemTime(new Date(Date.UTC(2030, 0, 1, 0, 0, i)));
      await createThread(b.base, { resourceId, title });
    }
    vi.useRealTimers();
    await createThread(b.base, { resourceId: uid('someone-else'), title: 'not mine' });

    const all = await http(`${b.base}/threads?resourceId=${resourceId}`);
    expect(all.status).toBe(200);
    expect(all.body.map((t: { title: string }) => t.title)).toEqual(['t4', 't3', 't2', 't1', 't0']);
    expect(all.body[0].createdAt).toBe('2030-01-01T00:00:04.000Z');
    for (const t of all.body) expect(t.resourceId).toBe(resourceId);

    const page = async (query: string) => (await http(`${b.base}/threads?resourceId=${resourceId}&${query}`)).body.map((t: { title: string }) => t.title);
    expect(await page('limit=2')).toEqual(['t4', 't3']);
    // `offset` is a page index (see Page in thread-store.ts): offset=1 skips one page of `limit`.
    expect(await page('limit=2&offset=0')).toEqual(['t4', 't3']);
    expect(await page('limit=2&offset=1')).toEqual(['t2', 't1']);
    expect(await page('limit=2&offset=2')).toEqual(['t0']);
    expect(await page('limit=2&offset=3')).toEqual([]);
    expect(await page('limit=100')).toEqual(['t4', 't3', 't2', 't1', 't0']);
    // Without a limit there are no pages: offset alone is ignored and everything is listed.
    expect(await page('offset=1')).toEqual(['t4', 't3', 't2', 't1', 't0']);
  });

  it('GET /threads for a resource with no thread is an empty array', async () => {
    const res = await http(`${b.base}/threads?resourceId=${uid('nobody')}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });

  it('GET /threads without resourceId lists the `default` resource’s threads, as every other route takes it', async () => {
    const t = await createThread(b.base, { title: 'no resource named' });
    expect(t.resourceId).toBe('default');
    const res = await http(`${b.base}/threads`);
    expect(res.status).toBe(200);
    expect(res.body.map((x: { id: string }) => x.id)).toContain(t.id);
    expect(res.body.every((x: { resourceId: string }) => x.resourceId === 'default')).toBe(true);
  });

  it('PATCH replaces the title and merges metadata: existing keys kept, null removes a key', async () => {
    const resourceId = uid('patcher');
    const t = await createThread(b.base, { resourceId, title: 'before', metadata: { keep: 1, drop: 'x', change: 'old' } });
    const res = await http(`${b.base}/threads/${t.id}?resourceId=${resourceId}`, {
      method: 'PATCH',
      body: { title: 'after', metadata: { change: 'new', drop: null, added: { deep: true } } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: t.id, resourceId, title: 'after', createdAt: t.createdAt });
    expect(res.body.metadata).toEqual({ keep: 1, change: 'new', added: { deep: true } });
    expect(res.body.updatedAt).toMatch(ISO);
    // What PATCH answered is what was stored.
    expect((await http(`${b.base}/threads/${t.id}?resourceId=${resourceId}`)).body).toEqual(res.body);

    // A patch with only metadata keeps the title; one with only a title keeps the metadata.
    const onlyMeta = await http(`${b.base}/threads/${t.id}`, { method: 'PATCH', body: { resourceId, metadata: { keep: null } } });
    expect(onlyMeta.body).toMatchObject({ title: 'after', metadata: { change: 'new', added: { deep: true } } });
    const onlyTitle = await http(`${b.base}/threads/${t.id}`, { method: 'PATCH', body: { resourceId, title: 'final' } });
    expect(onlyTitle.body).toMatchObject({ title: 'final', metadata: { change: 'new', added: { deep: true } } });
    // Removing the last keys leaves no metadata at all.
    const empty = await http(`${b.base}/threads/${t.id}`, { method: 'PATCH', body: { resourceId, metadata: { change: null, added: null } } });
    expect(empty.status).toBe(200);
    expect(empty.body).not.toHaveProperty('metadata');
    expect((await http(`${b.base}/threads/${t.id}?resourceId=${resourceId}`)).body).not.toHaveProperty('metadata');
  });

  it('DELETE answers 204 with no body, then the thread is 404 everywhere', async () => {
    const resourceId = uid('deleter');
    const t = await createThread(b.base, { resourceId, title: 'doomed' });
    const del = await fetch(`${b.base}/threads/${t.id}?resourceId=${resourceId}`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    expect(await del.text()).toBe('');
    for (const [method, suffix] of [
      ['GET', ''],
      ['DELETE', ''],
      ['GET', '/messages'],
    ] as const) {
      const res = await http(`${b.base}/threads/${t.id}${suffix}?resourceId=${resourceId}`, { method });
      expect(res.status, `${method} ${suffix}`).toBe(404);
      expect(res.body).toEqual({ error: expect.any(String), code: 'THREAD_NOT_FOUND' });
    }
    expect((await http(`${b.base}/threads?resourceId=${resourceId}`)).body).toEqual([]);
  });

  it('an unknown thread is 404 THREAD_NOT_FOUND on every thread route', async () => {
    const ghost = uid('ghost');
    for (const [method, suffix, body] of THREAD_ROUTES('r-any')) {
      const res = await http(`${b.base}/threads/${ghost}${suffix}`, { method, body });
      expect(res.status, `${method} ${suffix}`).toBe(404);
      expect(res.body).toEqual({ error: expect.any(String), code: 'THREAD_NOT_FOUND' });
    }
  });
});

describe('resource scoping', () => {
  const b = useTestBridge();

  it('another resource gets 404 THREAD_NOT_FOUND on every thread route, exactly like a missing thread', async () => {
    const owner = uid('owner');
    const t = await createThread(b.base, { resourceId: owner, title: 'private', metadata: { secret: 1 } });
    await runStrict(`${b.base}/run`, runInput({ threadId: t.id, messages: [userMessage('hello')], forwardedProps: { resourceId: owner } }));
    const missing = await http(`${b.base}/threads/${uid('ghost')}?resourceId=intruder`);

    for (const [method, suffix, body] of THREAD_ROUTES('intruder')) {
      const res = await http(`${b.base}/threads/${t.id}${suffix}`, { method, body });
      expect(res.status, `${method} ${suffix}`).toBe(404);
      expect(res.body.code).toBe('THREAD_NOT_FOUND');
      // The message does not tell "someone else's" from "does not exist".
      expect(res.body.error.replace(t.id, '<id>')).toBe(missing.body.error.replace(/ghost-\S+/, '<id>'));
    }
    // Not listed for the intruder.
    expect((await http(`${b.base}/threads?resourceId=intruder`)).body).toEqual([]);
    // /run on the thread is refused before any stream opens, and writes nothing.
    const run = await http(`${b.base}/run`, {
      body: runInput({ threadId: t.id, messages: [userMessage('let me in')], forwardedProps: { resourceId: 'intruder' } }),
    });
    expect(run.status).toBe(404);
    expect(run.body.code).toBe('THREAD_NOT_FOUND');

    // Nothing the intruder sent changed the thread.
    const after = await http(`${b.base}/threads/${t.id}?resourceId=${owner}`);
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ title: 'private', metadata: { secret: 1 } });
    const history = await http(`${b.base}/threads/${t.id}/messages?resourceId=${owner}`);
    expect(history.body.map((m: { content: string }) => m.content)).toEqual(['hello', 'Echo: hello']);
  });
});

describe('GET /threads/:threadId/messages', () => {
  const b = useTestBridge();
  const resourceId = uid('reader');
  const threadId = uid('thread');
  const ids = [uid('m'), uid('m'), uid('m')];
  beforeAll(async () => {
    // A first run with some history: three input messages and the echo, stored in one run so that
    // their createdAt are strictly increasing (Mastra's MessageList makes them monotonic).
    const run = await runStrict(
      `${b.base}/run`,
      runInput({
        threadId,
        messages: [userMessage('first question', ids[0]), { id: ids[1], role: 'assistant', content: 'first answer' }, userMessage('second question', ids[2])],
        forwardedProps: { resourceId },
      }),
    );
    expect(assistantText(run.events)).toBe('Echo: second question');
  });

  it('mastra format (default): { id, role, content, createdAt, threadId }, oldest first', async () => {
    const res = await http(`${b.base}/threads/${threadId}/messages?resourceId=${resourceId}`);
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(4);
    for (const m of res.body) {
      expect(Object.keys(m).sort()).toEqual(['content', 'createdAt', 'id', 'role', 'threadId']);
      expect(m.createdAt).toMatch(ISO);
      expect(m.threadId).toBe(threadId);
    }
    expect(res.body.map((m: { id: string }) => m.id).slice(0, 3)).toEqual(ids);
    expect(res.body.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'first question'],
      ['assistant', 'first answer'],
      ['user', 'second question'],
      ['assistant', 'Echo: second question'],
    ]);
    const times = res.body.map((m: { createdAt: string }) => Date.parse(m.createdAt));
    expect([...times].sort((x, y) => x - y)).toEqual(times);
    // `format=mastra` is the same as the default.
    expect((await http(`${b.base}/threads/${threadId}/messages?resourceId=${resourceId}&format=mastra`)).body).toEqual(res.body);
  });

  it('format=agui: AG-UI Message[] that parse with MessageSchema', async () => {
    const res = await http(`${b.base}/threads/${threadId}/messages?resourceId=${resourceId}&format=agui`);
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    for (const m of res.body) expect(MessageSchema.safeParse(m).success, JSON.stringify(m)).toBe(true);
    expect(res.body.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'first question'],
      ['assistant', 'first answer'],
      ['user', 'second question'],
      ['assistant', 'Echo: second question'],
    ]);
    expect(res.body.map((m: { id: string }) => m.id).slice(0, 3)).toEqual(ids);
  });

  it('limit / offset page through the history (offset is a page index)', async () => {
    const page = async (query: string, format = 'mastra') =>
      (await http(`${b.base}/threads/${threadId}/messages?resourceId=${resourceId}&format=${format}&${query}`)).body.map((m: { content: string }) => m.content);
    expect(await page('limit=2')).toEqual(['first question', 'first answer']);
    expect(await page('limit=2&offset=1')).toEqual(['second question', 'Echo: second question']);
    expect(await page('limit=3&offset=1')).toEqual(['Echo: second question']);
    expect(await page('limit=2&offset=2')).toEqual([]);
    expect(await page('limit=1&offset=2')).toEqual(['second question']);
    expect(await page('limit=1&offset=3', 'agui')).toEqual(['Echo: second question']);
    // No limit: offset is ignored (there are no pages).
    expect(await page('offset=1')).toHaveLength(4);
  });

  it('a follow-up run appends to the same history', async () => {
    const before = (await http(`${b.base}/threads/${threadId}/messages?resourceId=${resourceId}`)).body;
    await runStrict(`${b.base}/run`, runInput({ threadId, messages: [userMessage('third question')], forwardedProps: { resourceId } }));
    const after = (await http(`${b.base}/threads/${threadId}/messages?resourceId=${resourceId}`)).body;
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length).map((m: { content: string }) => m.content)).toEqual(['third question', 'Echo: third question']);
    // A thread created by /run shows up in the listing.
    const listed = (await http(`${b.base}/threads?resourceId=${resourceId}`)).body;
    expect(listed.map((t: { id: string }) => t.id)).toEqual([threadId]);
  });
});

describe('MEMORY_NOT_CONFIGURED', () => {
  const b = useTestBridge({
    withDemo: false,
    agents: () => ({ nomem: new Agent({ id: 'nomem', name: 'No Memory', instructions: 'x', model: createScriptedModel({ delayMs: 0 }) }) }),
  });

  it('every thread route is 500 MEMORY_NOT_CONFIGURED when no agent has memory', async () => {
    const routes: Array<[string, string, unknown]> = [
      ['POST', '/threads', { resourceId: 'r' }],
      ['GET', '/threads?resourceId=r', undefined],
      ...THREAD_ROUTES('r').map(([method, suffix, body]) => [method, `/threads/t1${suffix}`, body] as [string, string, unknown]),
    ];
    for (const [method, path, body] of routes) {
      const res = await http(`${b.base}${path}`, { method, body });
      expect(res.status, `${method} ${path}`).toBe(500);
      expect(res.body).toEqual({ error: expect.any(String), code: 'MEMORY_NOT_CONFIGURED' });
    }
    // Naming the agent says which one lacks memory.
    const named = await http(`${b.base}/threads?resourceId=r&agentId=nomem`);
    expect(named.body).toEqual({ error: expect.stringContaining('nomem'), code: 'MEMORY_NOT_CONFIGURED' });
  });

  it('/run still works without memory (stateless: the client sends the history)', async () => {
    const threadId = uid('stateless');
    const first = await runStrict(`${b.base}/run`, runInput({ threadId, messages: [userMessage('hello')] }));
    expect(assistantText(first.events)).toBe('Echo: hello');
    // The same thread again, with the whole history as a stateless client sends it.
    const second = await runStrict(
      `${b.base}/run`,
      runInput({ threadId, messages: [userMessage('hello'), { id: uid('a'), role: 'assistant', content: 'Echo: hello' }, userMessage('again')] }),
    );
    expect(assistantText(second.events)).toBe('Echo: again');
  });
});

/**
 * Makes two concurrent requests on one thread interleave at the worst point, deterministically: the
 * first lookup of `threadId` in the store is held until a second caller has passed the
 * `resolveResourceId` hook (`x-user` header), i.e. until both requests are inside the handler.
 */
function holdFirstLookup(threadId: string) {
  let callers = 0;
  let secondCaller!: () => void;
  const secondArrived = new Promise<void>((resolve) => (secondCaller = resolve));
  return {
    hook: (c: Context) => {
      const user = c.req.header('x-user') ?? null;
      if (user && ++callers === 2) secondCaller();
      return user;
    },
    /** Starts holding (after any setup requests); counts callers from here on. */
    attach: async (bridge: TestBridge) => {
      callers = 0;
      const store = (await bridge.storage.getStore('memory'))!;
      const original = store.getThreadById.bind(store);
      let lookups = 0;
      vi.spyOn(store, 'getThreadById').mockImplementation(async (args) => {
        if (args.threadId === threadId && ++lookups === 1) await secondArrived;
        return original(args);
      });
    },
  };
}

/** A `resolveResourceId` hook that reads the caller from the `x-user` header (null without it). */
const headerHook = (c: Context) => c.req.header('x-user') ?? null;

describe('resolveResourceId hook', () => {
  const b = useTestBridge({ config: { resolveResourceId: headerHook } });

  it('a caller the hook rejects gets 401 UNAUTHORIZED on every route of routes.ts that takes a caller', async () => {
    const as = { 'x-user': 'alice' };
    const t = await createThread(b.base, { title: 'alice’s' }, as);
    // Each route's own example body (bodies are validated before the caller is resolved, so an
    // invalid one would answer 400 first); `/run`'s aimed at alice's thread.
    const bodyOf = (route: (typeof ROUTES)[number]) =>
      route.path === '/run' ? runInput({ threadId: t.id, messages: [userMessage('hello')] }) : (route.example ?? {});
    // The OpenAPI document is the same for every caller (`anyCaller`): served, not refused (test/openapi.test.ts).
    for (const route of ROUTES.filter((r) => !r.anyCaller)) {
      const key = `${route.method} ${route.path}`;
      const needsBody = route.method === 'POST' || route.method === 'PATCH';
      const path = route.path.replace(/:(\w+)/g, (_, name: string) => (name === 'threadId' ? t.id : name === 'agentId' ? 'demo' : `${name}-1`));
      const res = await http(`${b.base}${path}?resourceId=alice`, { method: route.method, body: needsBody ? bodyOf(route) : undefined });
      expect(res.status, key).toBe(401);
      expect(res.body, key).toEqual({ error: expect.any(String), code: 'UNAUTHORIZED' });
    }
    // Nothing was changed by the rejected calls.
    const after = await http(`${b.base}/threads/${t.id}`, { headers: as });
    expect(after.body).toMatchObject({ id: t.id, title: 'alice’s' });
    expect(after.body).not.toHaveProperty('metadata');
    expect((await http(`${b.base}/threads/${t.id}/messages`, { headers: as })).body).toEqual([]);
  });

  it('threads are scoped to the hook’s answer; the claimed resourceId is ignored', async () => {
    const alice = { 'x-user': uid('alice') };
    const bob = { 'x-user': uid('bob') };
    // Alice claims to be bob in the body: the thread is hers anyway.
    const t = await createThread(b.base, { resourceId: bob['x-user'], title: 'claimed' }, alice);
    expect(t.resourceId).toBe(alice['x-user']);
    // Listing: a resourceId in the query does not choose whose threads either.
    const mine = await http(`${b.base}/threads?resourceId=${bob['x-user']}`, { headers: alice });
    expect(mine.body.map((x: { id: string }) => x.id)).toEqual([t.id]);
    expect((await http(`${b.base}/threads?resourceId=${alice['x-user']}`, { headers: bob })).body).toEqual([]);
    // Bob claiming alice's resource still sees nothing of hers.
    for (const [method, suffix, body] of THREAD_ROUTES(alice['x-user'])) {
      const res = await http(`${b.base}/threads/${t.id}${suffix}`, { method, body, headers: bob });
      expect(res.status, `${method} ${suffix}`).toBe(404);
      expect(res.body.code).toBe('THREAD_NOT_FOUND');
    }
    // /run: alice's run lands in her thread whatever forwardedProps claims; bob's is refused.
    await runStrict(
      `${b.base}/run`,
      runInput({ threadId: t.id, messages: [userMessage('hello')], forwardedProps: { resourceId: bob['x-user'] } }),
      undefined,
      new HttpAgent({ url: `${b.base}/run`, headers: alice }),
    );
    const refused = await http(`${b.base}/run`, {
      body: runInput({ threadId: t.id, messages: [userMessage('hi')], forwardedProps: { resourceId: alice['x-user'] } }),
      headers: bob,
    });
    expect(refused.status).toBe(404);
    expect(refused.body.code).toBe('THREAD_NOT_FOUND');
    const history = await http(`${b.base}/threads/${t.id}/messages?resourceId=whatever`, { headers: alice });
    expect(history.body.map((m: { content: string }) => m.content)).toEqual(['hello', 'Echo: hello']);
    // Alice can patch and delete her own thread without claiming anything.
    expect((await http(`${b.base}/threads/${t.id}`, { method: 'PATCH', body: { title: 'renamed' }, headers: alice })).body.title).toBe('renamed');
    expect((await http(`${b.base}/threads/${t.id}`, { method: 'DELETE', headers: alice })).status).toBe(204);
  });

  it('a hook that throws is 401 with its message; a BridgeError it throws keeps its own status', async () => {
    const { BridgeError } = await import('../src/errors.js');
    const throwing = await startTestBridge({
      config: {
        resolveResourceId: (c) => {
          const token = c.req.header('authorization');
          if (token === 'Bearer broken') throw new BridgeError(500, 'INTERNAL_ERROR', 'session store down');
          if (token !== 'Bearer ok') throw new Error('bad token');
          return 'ok-user';
        },
      },
    });
    try {
      const bad = await http(`${throwing.base}/threads?resourceId=x`, { headers: { authorization: 'Bearer nope' } });
      expect(bad.status).toBe(401);
      expect(bad.body).toEqual({ error: 'bad token', code: 'UNAUTHORIZED' });
      const broken = await http(`${throwing.base}/threads?resourceId=x`, { headers: { authorization: 'Bearer broken' } });
      expect(broken.status).toBe(500);
      expect(broken.body).toEqual({ error: 'session store down', code: 'INTERNAL_ERROR' });
      const ok = await http(`${throwing.base}/threads`, { body: {}, headers: { authorization: 'Bearer ok' } });
      expect(ok.status).toBe(201);
      expect(ok.body.resourceId).toBe('ok-user');
    } finally {
      await throwing.close();
    }
  });
});
