import { beforeAll, describe, expect, it } from 'vitest';
import { uid } from './support/agui.js';
import { http, useTestBridge, type TestBridge } from './support/server.js';
import { openSse } from './support/sse.js';

type Method = 'GET' | 'POST' | 'DELETE';
interface Case {
  name: string;
  method: Method;
  /** Path below `/threads/:threadId`, query included. */
  path: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  /** A `details[].path` the answer must name. */
  detail?: string;
}

const MESSAGE_ROUTES = ['send-message', 'queue-message'] as const;

/** Every bad request, per route; `r` is the caller's resource id. */
function badRequests(r: string): Case[] {
  const post = (path: string, body: unknown, detail?: string): Case => ({ name: `${path} ${JSON.stringify(body)}`, method: 'POST', path, body, detail });
  const malformed = (path: string): Case => ({ name: `${path} malformed JSON`, method: 'POST', path, rawBody: '{"resourceId": "x",' });
  const cases: Case[] = [];
  for (const route of MESSAGE_ROUTES) {
    const base = { resourceId: r };
    cases.push(
      malformed(`/${route}`),
      { name: `${route} JSON that is not an object`, method: 'POST', path: `/${route}`, rawBody: '["hello"]' },
      post(`/${route}`, { ...base }, 'message'),
      post(`/${route}`, { ...base, message: 'hi', extra: true }, 'extra'),
      post(`/${route}`, { ...base, message: '' }, 'message'),
      post(`/${route}`, { ...base, message: { contents: '' } }),
      post(`/${route}`, { ...base, message: { contents: [] } }),
      post(`/${route}`, { ...base, message: { contents: [{ type: 'image', url: 'x' }] } }),
      post(`/${route}`, { ...base, message: { contents: 'hi', metadata: {} } }),
      post(`/${route}`, { ...base, message: { contents: 'hi', attributes: { 'a b': 1 } } }),
      post(`/${route}`, { ...base, message: { contents: 'hi', attributes: { '1st': 1 } } }),
      post(`/${route}`, { ...base, message: { contents: 'hi', attributes: { ok: { nested: true } } } }),
      post(`/${route}`, { ...base, message: 'hi', ifActive: { behavior: 'wake' } }, 'ifActive.behavior'),
      post(`/${route}`, { ...base, message: 'hi', ifIdle: { behavior: 'deliver' } }, 'ifIdle.behavior'),
      post(`/${route}`, { ...base, message: 'hi', ifIdle: { behavior: 'later' } }, 'ifIdle.behavior'),
      post(`/${route}`, { ...base, message: 'hi', ifIdle: 'wake' }, 'ifIdle'),
      post(`/${route}`, { ...base, message: 'hi', ifIdle: { behavior: 'wake', attributes: { 'x y': 1 } } }),
      post(`/${route}`, { ...base, message: 'hi', ifActive: { behavior: 'deliver', other: 1 } }),
      post(`/${route}`, { resourceId: '', message: 'hi' }, 'resourceId'),
    );
  }
  const signal = { resourceId: r, type: 'notification', contents: 'Build done' };
  cases.push(
    malformed('/signals'),
    post('/signals', { ...signal, type: 'bogus' }, 'type'),
    post('/signals', { ...signal, type: 'state' }, 'type'),
    post('/signals', { resourceId: r, contents: 'no type' }, 'type'),
    post('/signals', { ...signal, contents: '' }, 'contents'),
    post('/signals', { ...signal, tagName: '1bad' }, 'tagName'),
    post('/signals', { ...signal, tagName: 'a b' }, 'tagName'),
    post('/signals', { ...signal, tagName: '' }, 'tagName'),
    post('/signals', { ...signal, tagName: 'ok<' }, 'tagName'),
    post('/signals', { ...signal, attributes: { 'bad key': 'v' } }),
    post('/signals', { ...signal, attributes: { '-dash': 'v' } }),
    post('/signals', { ...signal, transient: 'yes' }, 'transient'),
    post('/signals', { ...signal, extra: 1 }, 'extra'),
    post('/signals', { ...signal, ifIdle: { behavior: 'deliver' } }, 'ifIdle.behavior'),
  );
  const state = { resourceId: r, id: 'cart', cacheKey: 'v1', contents: 'Cart: 2 items' };
  cases.push(
    malformed('/state'),
    post('/state', { ...state, id: undefined }, 'id'),
    post('/state', { ...state, id: '' }, 'id'),
    post('/state', { ...state, cacheKey: undefined }, 'cacheKey'),
    post('/state', { ...state, contents: '' }, 'contents'),
    post('/state', { ...state, mode: 'full' }, 'mode'),
    post('/state', { ...state, transient: true }, 'transient'),
    post('/state', { ...state, ifActive: { behavior: 'later' } }, 'ifActive.behavior'),
  );
  const notification = { resourceId: r, source: 'ci', kind: 'build', summary: 'Build #7 passed' };
  cases.push(
    malformed('/notifications'),
    post('/notifications', { ...notification, summary: undefined }, 'summary'),
    post('/notifications', { ...notification, source: '' }, 'source'),
    post('/notifications', { ...notification, kind: 7 }, 'kind'),
    post('/notifications', { ...notification, priority: 'critical' }, 'priority'),
    post('/notifications', { ...notification, attributes: { 'no spaces': 1 } }),
    post('/notifications', { ...notification, ifIdle: { behavior: 'wake' } }, 'ifIdle'),
    { name: 'GET notifications ?status=bogus', method: 'GET', path: `/notifications?resourceId=${r}&status=bogus`, detail: 'query.status' },
    { name: 'GET notifications ?resourceId=', method: 'GET', path: '/notifications?resourceId=', detail: 'query.resourceId' },
  );
  cases.push(
    malformed('/tool-approval'),
    post('/tool-approval', { resourceId: r, approved: true }, 'toolCallId'),
    post('/tool-approval', { resourceId: r, toolCallId: '', approved: true }, 'toolCallId'),
    post('/tool-approval', { resourceId: r, toolCallId: 'call-1' }, 'approved'),
    post('/tool-approval', { resourceId: r, toolCallId: 'call-1', approved: 'yes' }, 'approved'),
    post('/tool-approval', { resourceId: r, toolCallId: 'call-1', approved: false, declineContext: { reason: 'x' } }, 'declineContext'),
    { name: 'GET pending-approvals ?resourceId=', method: 'GET', path: '/pending-approvals?resourceId=', detail: 'query.resourceId' },
    malformed('/abort'),
    post('/abort', { resourceId: r, clearPendingSignals: true }, 'clearPendingSignals'),
    { name: 'abort JSON that is not an object', method: 'POST', path: '/abort', rawBody: '42' },
    { name: 'DELETE queue ?resourceId=', method: 'DELETE', path: '/queue/sig-1?resourceId=', detail: 'query.resourceId' },
    { name: 'DELETE queue with a signal id too long', method: 'DELETE', path: `/queue/${'s'.repeat(600)}?resourceId=${r}` },
    { name: 'events ?lastEventId=abc', method: 'GET', path: `/events?resourceId=${r}&lastEventId=abc`, detail: 'query.lastEventId' },
    { name: 'events ?lastEventId=-1', method: 'GET', path: `/events?resourceId=${r}&lastEventId=-1`, detail: 'query.lastEventId' },
    { name: 'events ?lastEventId=1.5', method: 'GET', path: `/events?resourceId=${r}&lastEventId=1.5`, detail: 'query.lastEventId' },
    { name: 'events Last-Event-ID: abc', method: 'GET', path: `/events?resourceId=${r}`, headers: { 'last-event-id': 'abc' } },
    { name: 'events ?snapshot=2', method: 'GET', path: `/events?resourceId=${r}&snapshot=2`, detail: 'query.snapshot' },
    { name: 'events ?resourceId=', method: 'GET', path: '/events?resourceId=', detail: 'query.resourceId' },
  );
  return cases;
}

/** One valid request per signal route (as `r`): what a caller without the thread must not get through. */
function everyRoute(r: string): Case[] {
  return [
    { name: 'send-message', method: 'POST', path: '/send-message', body: { resourceId: r, message: 'hello' } },
    { name: 'queue-message', method: 'POST', path: '/queue-message', body: { resourceId: r, message: 'hello' } },
    { name: 'signals', method: 'POST', path: '/signals', body: { resourceId: r, type: 'reactive', contents: 'fyi' } },
    { name: 'state', method: 'POST', path: '/state', body: { resourceId: r, id: 'cart', cacheKey: 'v1', contents: 'Cart' } },
    { name: 'notifications', method: 'POST', path: '/notifications', body: { resourceId: r, source: 'ci', kind: 'build', summary: 'done' } },
    { name: 'list notifications', method: 'GET', path: `/notifications?resourceId=${r}` },
    { name: 'tool-approval', method: 'POST', path: '/tool-approval', body: { resourceId: r, toolCallId: 'call-1', approved: true } },
    { name: 'pending-approvals', method: 'GET', path: `/pending-approvals?resourceId=${r}` },
    { name: 'abort', method: 'POST', path: '/abort', body: { resourceId: r } },
    { name: 'cancel queued', method: 'DELETE', path: `/queue/sig-1?resourceId=${r}` },
    { name: 'events', method: 'GET', path: `/events?resourceId=${r}` },
    { name: 'events with Last-Event-ID', method: 'GET', path: `/events?resourceId=${r}&snapshot=1`, headers: { 'last-event-id': '3' } },
  ];
}

function send(b: TestBridge, threadId: string, c: Case) {
  return http(`${b.base}/threads/${threadId}${c.path}`, { method: c.method, body: c.body, rawBody: c.rawBody, headers: c.headers });
}

describe('signal routes: bad input is 400 INVALID_INPUT, never a 500, and changes nothing', () => {
  const b = useTestBridge();

  const resourceId = uid('user');
  const threadId = uid('thread');
  for (const c of badRequests(resourceId)) {
    it(`${c.method} ${c.name}`, async () => {
      const res = await send(b, threadId, c);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body).toMatchObject({ code: 'INVALID_INPUT', error: expect.any(String) });
      if (c.detail) expect(res.body.details?.map((d: { path: string }) => d.path)).toContain(c.detail);
    });
  }

  it('none of them created the thread or ran anything', async () => {
    expect((await http(`${b.base}/threads/${threadId}?resourceId=${resourceId}`)).status).toBe(404);
    expect((await http(`${b.base}/threads?resourceId=${resourceId}`)).body).toEqual([]);
  });

  it('the details name the offending tag name and attribute key', async () => {
    const tag = await send(b, threadId, { name: '', method: 'POST', path: '/signals', body: { resourceId, type: 'reactive', contents: 'x', tagName: 'a b' } });
    expect(tag.body.details).toEqual([{ path: 'tagName', message: expect.stringMatching(/XML-safe/) }]);
    const attr = await send(b, threadId, {
      name: '',
      method: 'POST',
      path: '/send-message',
      body: { resourceId, message: { contents: 'x', attributes: { 'a b': 1 } } },
    });
    expect(attr.body.details).toEqual([{ path: 'message.attributes.a b', message: expect.stringMatching(/a b.*XML-safe/) }]);
  });

  it('a body over maxBodyBytes is 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await send(b, threadId, { name: '', method: 'POST', path: '/send-message', body: { resourceId, message: 'x'.repeat(1024 * 1024 + 10) } });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('PAYLOAD_TOO_LARGE');
  });
});

describe("signal routes on another resource's thread: as if it did not exist", () => {
  const b = useTestBridge();
  const owner = uid('owner');
  const intruder = uid('intruder');
  const threadId = uid('thread');
  beforeAll(async () => {
    const created = await http(`${b.base}/threads`, { body: { resourceId: owner, threadId } });
    expect(created.status).toBe(201);
  });

  for (const c of everyRoute(intruder).filter((r) => !r.name.startsWith('events'))) {
    it(`${c.method} ${c.name}: 404 THREAD_NOT_FOUND`, async () => {
      const res = await send(b, threadId, c);
      expect(res.status, JSON.stringify(res.body)).toBe(404);
      expect(res.body).toEqual({ error: expect.any(String), code: 'THREAD_NOT_FOUND' });
      // Exactly what a thread that does not exist at all answers.
      expect(res.body.error).toBe(`Thread ${threadId} not found`);
    });
  }

  it('GET events: the stream of a thread not created yet, which shows nothing (its snapshot is empty)', async () => {
    for (const id of [threadId, uid('nobodys')]) {
      const sse = await openSse(`${b.base}/threads/${id}/events?resourceId=${intruder}&snapshot=1`, { headers: { 'last-event-id': '3' } });
      expect(sse.status).toBe(200);
      await sse.waitForEvent((e) => e.type === 'RUN_FINISHED');
      await sse.close();
      expect(sse.list.map((e) => e.type)).toEqual(['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED']);
      expect(sse.list[1]).toMatchObject({ messages: [] });
    }
  });

  it('the owner sees nothing of it: no messages, no notifications, the thread as it was', async () => {
    expect((await http(`${b.base}/threads/${threadId}/messages?resourceId=${owner}`)).body).toEqual([]);
    expect((await http(`${b.base}/threads/${threadId}/notifications?resourceId=${owner}`)).body).toEqual([]);
    expect((await http(`${b.base}/threads/${threadId}?resourceId=${owner}`)).body).toMatchObject({ id: threadId, resourceId: owner });
  });
});
