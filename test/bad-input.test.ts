import { connect } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../src/http/routes/index.js';
import { assistantText, runInput, runStrict, uid, userMessage } from './support/agui.js';
import { http, useTestBridge } from './support/server.js';

const LIMIT = 1024;

const b = useTestBridge({ config: { maxBodyBytes: LIMIT } });
let threadId: string;
const resourceId = uid('owner');

beforeAll(async () => {
  const res = await http(`${b.base}/threads`, { body: { resourceId, title: 'kept' } });
  threadId = res.body.id;
});

const BODY_METHODS = new Set(['POST', 'PATCH']);

/** A route of routes.ts with its params filled in (`:threadId` is a thread the caller owns). */
function concrete(path: string, params: Record<string, string> = {}): string {
  const filled = path.replace(/:(\w+)/g, (_, name: string) => params[name] ?? (name === 'threadId' ? threadId : name === 'agentId' ? 'demo' : `${name}-1`));
  return path.includes(':threadId') ? `${filled}?resourceId=${resourceId}` : filled;
}

/** Every route that reads a JSON body (POST and PATCH in routes.ts), with a valid path. */
const bodyRoutes = () => ROUTES.filter((r) => BODY_METHODS.has(r.method)).map((r) => ({ method: r.method, path: concrete(r.path) }));

/** `400 INVALID_INPUT` whose details include `{ path }` (each detail has a string message). */
function expectInvalid(res: { status: number; body: any }, paths: string[], label: string): void {
  expect(res.status, `${label}: ${JSON.stringify(res.body)}`).toBe(400);
  expect(res.body.code, label).toBe('INVALID_INPUT');
  expect(typeof res.body.error, label).toBe('string');
  expect(Array.isArray(res.body.details), `${label} has details`).toBe(true);
  for (const d of res.body.details) {
    expect(Object.keys(d).sort(), label).toEqual(['message', 'path']);
    expect(typeof d.message).toBe('string');
    expect(d.message.length).toBeGreaterThan(0);
  }
  expect(
    res.body.details.map((d: { path: string }) => d.path),
    label,
  ).toEqual(expect.arrayContaining(paths));
}

/** A chunked upload (no Content-Length): `size` bytes of `fill` in 16 KiB pieces. */
async function postChunked(url: string, size: number, fill = 'x', method = 'POST'): Promise<{ status: number; body: any; headers: Headers }> {
  const piece = new TextEncoder().encode(fill.repeat(16 * 1024));
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= size) return controller.close();
      const chunk = piece.subarray(0, Math.min(piece.byteLength, size - sent));
      sent += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  const res = await fetch(url, { method, body, headers: { 'content-type': 'application/json' }, duplex: 'half' } as RequestInit);
  expect(res.headers.get('content-length')).not.toBeNull();
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text), headers: res.headers };
}

/** Writes `request` on a raw socket and resolves with everything read until the server closes it. */
function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', (error) =>
      reject(new Error(`${(error as NodeJS.ErrnoException).code ?? error.message} after reading ${JSON.stringify(received.slice(0, 80))}`)),
    );
    socket.on('end', () => resolve(received));
    socket.write(request);
  });
}

describe('the route table', () => {
  it('the seed routes are all there, and every body route is a POST or PATCH', () => {
    const table = ROUTES.map((r) => `${r.method} ${r.path}`);
    expect(table).toEqual(
      expect.arrayContaining([
        'POST /run',
        'POST /runs/:runId/tool-calls/:toolCallId/result',
        'GET /agents',
        'GET /agents/:agentId',
        'POST /threads',
        'GET /threads',
        'GET /threads/:threadId',
        'PATCH /threads/:threadId',
        'DELETE /threads/:threadId',
        'GET /threads/:threadId/messages',
      ]),
    );
    expect(bodyRoutes().length).toBeGreaterThanOrEqual(4);
  });

  it('a path id over 512 characters is 400 INVALID_INPUT on every route that has one (before any stream opens)', async () => {
    const long = 'x'.repeat(513);
    for (const route of ROUTES) {
      for (const [, name] of route.path.matchAll(/:(\w+)/g)) {
        const url = `${b.base}${concrete(route.path, { [name]: long })}`;
        const res = await http(url, { method: route.method, body: BODY_METHODS.has(route.method) ? {} : undefined });
        const label = `${route.method} ${route.path} (${name})`;
        expect(res.status, label).toBe(400);
        expect(res.headers.get('content-type'), label).toMatch(/^application\/json/);
        expect(res.body.code, label).toBe('INVALID_INPUT');
        expect(res.body.details?.length, label).toBeGreaterThan(0);
      }
    }
  });

  it('no route answers a bad request with a 500', async () => {
    // A route that reads nothing of the request (the OpenAPI document) has no bad request.
    for (const route of ROUTES.filter((r) => r.body || r.query || r.path.includes(':'))) {
      for (const raw of BODY_METHODS.has(route.method) ? ['{', 'hello', '[]', 'null'] : [undefined]) {
        const url = `${b.base}${concrete(route.path)}`;
        // Body routes get a broken body; the others a broken query (an empty resourceId).
        const badQuery = url.includes('?') ? url.replace(`resourceId=${resourceId}`, 'resourceId=') : `${url}?resourceId=`;
        const res = await http(raw === undefined ? badQuery : url, { method: route.method, rawBody: raw });
        expect(res.status, `${route.method} ${route.path} ${raw}`).toBeLessThan(500);
        expect(res.headers.get('content-type'), `${route.method} ${route.path}`).toMatch(/^application\/json/);
        expect(res.body, `${route.method} ${route.path}`).toEqual(expect.objectContaining({ error: expect.any(String), code: expect.any(String) }));
      }
    }
  });
});

describe('bodies that are not JSON', () => {
  it('malformed JSON is 400 INVALID_INPUT on every body route', async () => {
    for (const { method, path } of bodyRoutes()) {
      for (const raw of ['{', '{"threadId": }', "{'single': 'quotes'}", '{"a":1}}', '\u0000']) {
        const res = await http(`${b.base}${path}`, { method, rawBody: raw });
        expect(res.status, `${method} ${path} ${JSON.stringify(raw)}`).toBe(400);
        expect(res.body).toEqual({ error: expect.stringMatching(/JSON/), code: 'INVALID_INPUT' });
      }
    }
  });

  it('text/plain "hello" is 400 INVALID_INPUT, never a 500', async () => {
    for (const { method, path } of bodyRoutes()) {
      const res = await http(`${b.base}${path}`, { method, rawBody: 'hello', headers: { 'content-type': 'text/plain' } });
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.body.code).toBe('INVALID_INPUT');
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    }
  });

  it('JSON that is not an object is 400 with a root detail', async () => {
    for (const { method, path } of bodyRoutes()) {
      for (const raw of ['null', '[]', '"text"', '42', 'true']) {
        const res = await http(`${b.base}${path}`, { method, rawBody: raw });
        expectInvalid(res, [''], `${method} ${path} ${raw}`);
      }
    }
  });
});

describe('schema failures name the field', () => {
  it('POST /run', async () => {
    const valid = runInput({ threadId: uid('t'), messages: [userMessage('hi')] });
    const { threadId: _t, ...noThread } = valid;
    expectInvalid(await http(`${b.base}/run`, { body: noThread }), ['threadId'], 'missing threadId');
    expectInvalid(await http(`${b.base}/run`, { body: { ...valid, messages: 'hi' } }), ['messages'], 'messages not an array');
    expectInvalid(await http(`${b.base}/run`, { body: { ...valid, runId: 7 } }), ['runId'], 'runId a number');
    expectInvalid(await http(`${b.base}/run`, { body: { ...valid, messages: [{ id: 'm', role: 'wizard', content: 'x' }] } }), [], 'unknown role');
    // forwardedProps is checked too (the detail path ends with the field; see the report about its prefix).
    const bogus = await http(`${b.base}/run`, { body: { ...valid, forwardedProps: { frontendToolMode: 'bogus' } } });
    expectInvalid(bogus, [], 'frontendToolMode bogus');
    expect(bogus.body.details).toEqual([{ path: expect.stringMatching(/(^|\.)frontendToolMode$/), message: expect.stringContaining('proxy') }]);
    const agentId = await http(`${b.base}/run`, { body: { ...valid, forwardedProps: { agentId: 42 } } });
    expect(agentId.body.details).toEqual([{ path: expect.stringMatching(/(^|\.)agentId$/), message: expect.any(String) }]);
    const structured = await http(`${b.base}/run`, { body: { ...valid, forwardedProps: { structuredOutput: 'not json' } } });
    expect(structured.status).toBe(400);
    expect(structured.body.details[0].message).toMatch(/structuredOutput/);
    // Valid shape, but nothing to answer.
    const empty = await http(`${b.base}/run`, { body: runInput({ messages: [] }) });
    expect(empty.status).toBe(400);
    expect(empty.body.code).toBe('INVALID_INPUT');
    // An empty body reads as {} and fails the schema (not a JSON error).
    expectInvalid(await http(`${b.base}/run`, { rawBody: '' }), ['threadId', 'runId', 'messages'], 'empty body');
  });

  it('POST /runs/:runId/tool-calls/:toolCallId/result', async () => {
    const url = `${b.base}/runs/run-1/tool-calls/call-1/result`;
    expectInvalid(await http(url, { body: { content: 'x', extra: true } }), ['extra'], 'unknown key');
    expectInvalid(await http(url, { body: {} }), ['content'], 'missing content');
    expectInvalid(await http(url, { body: { content: 'x', isError: 'yes' } }), ['isError'], 'isError not boolean');
    // A valid body for a call nobody waits for is 404, not 400.
    expect((await http(url, { body: { content: null } })).body.code).toBe('TOOL_CALL_NOT_FOUND');
  });

  it('POST /threads', async () => {
    expectInvalid(await http(`${b.base}/threads`, { body: { resourceId, color: 'teal' } }), ['color'], 'unknown key');
    expectInvalid(await http(`${b.base}/threads`, { body: { resourceId, title: 5 } }), ['title'], 'title a number');
    expectInvalid(await http(`${b.base}/threads`, { body: { resourceId, metadata: [1, 2] } }), ['metadata'], 'metadata an array');
    expectInvalid(await http(`${b.base}/threads`, { body: { resourceId: '' } }), ['resourceId'], 'empty resourceId');
    expectInvalid(await http(`${b.base}/threads`, { body: { threadId: 'x'.repeat(513) } }), ['threadId'], 'threadId too long');
  });

  it('PATCH /threads/:threadId', async () => {
    const url = `${b.base}/threads/${threadId}?resourceId=${resourceId}`;
    expectInvalid(await http(url, { method: 'PATCH', body: { title: 'x', owner: 'me' } }), ['owner'], 'unknown key');
    expectInvalid(await http(url, { method: 'PATCH', body: { metadata: 'x' } }), ['metadata'], 'metadata a string');
    expectInvalid(await http(url, { method: 'PATCH', body: { title: 'x'.repeat(1001) } }), ['title'], 'title too long');
    expectInvalid(await http(`${b.base}/threads/${threadId}?resourceId=`, { method: 'PATCH', body: {} }), ['query.resourceId'], 'empty resourceId');
  });

  it('GET /threads query', async () => {
    const q = (query: string) => http(`${b.base}/threads?${query}`);
    expectInvalid(await q('resourceId='), ['query.resourceId'], 'empty resourceId');
    expectInvalid(await q(`resourceId=r&limit=0`), ['query.limit'], 'limit=0');
    expectInvalid(await q(`resourceId=r&limit=abc`), ['query.limit'], 'limit=abc');
    expectInvalid(await q(`resourceId=r&limit=-1`), ['query.limit'], 'limit=-1');
    expectInvalid(await q(`resourceId=r&limit=1.5`), ['query.limit'], 'limit=1.5');
    expectInvalid(await q(`resourceId=r&limit=`), ['query.limit'], 'limit empty');
    expectInvalid(await q(`resourceId=r&limit=99999999999999999999`), ['query.limit'], 'limit unsafe');
    expectInvalid(await q(`resourceId=r&offset=-1`), ['query.offset'], 'offset=-1');
    expectInvalid(await q(`resourceId=r&offset=abc`), ['query.offset'], 'offset=abc');
    expectInvalid(await q(`resourceId=&limit=0&offset=-1`), ['query.resourceId', 'query.limit', 'query.offset'], 'every problem at once');
    // Boundaries that are valid.
    expect((await q(`resourceId=${resourceId}&limit=1&offset=0`)).status).toBe(200);
  });

  it('GET /threads/:threadId/messages query', async () => {
    const q = (query: string) => http(`${b.base}/threads/${threadId}/messages?resourceId=${resourceId}&${query}`);
    expectInvalid(await q('limit=0'), ['query.limit'], 'limit=0');
    expectInvalid(await q('limit=abc'), ['query.limit'], 'limit=abc');
    expectInvalid(await q('offset=-1'), ['query.offset'], 'offset=-1');
    expectInvalid(await q('format=xml'), ['query.format'], 'format=xml');
    expectInvalid(await q('format='), ['query.format'], 'format empty');
    expect((await q('format=agui&limit=1&offset=0')).status).toBe(200);
  });

  it('path ids: the detail names the parameter', async () => {
    const long = 'x'.repeat(513);
    const cases: Array<[string, string, unknown, string]> = [
      ['GET', `/agents/${long}`, undefined, 'path.agentId'],
      ['GET', `/threads/${long}?resourceId=r`, undefined, 'path.threadId'],
      ['PATCH', `/threads/${long}?resourceId=r`, { title: 'x' }, 'path.threadId'],
      ['DELETE', `/threads/${long}?resourceId=r`, undefined, 'path.threadId'],
      ['GET', `/threads/${long}/messages?resourceId=r`, undefined, 'path.threadId'],
    ];
    for (const [method, path, body, detail] of cases) {
      expectInvalid(await http(`${b.base}${path}`, { method, body }), [detail], `${method} ${path.slice(0, 20)}`);
    }
  });

  it('query on thread routes: an empty resourceId or agentId is 400', async () => {
    for (const [method, suffix] of [
      ['GET', ''],
      ['DELETE', ''],
      ['GET', '/messages'],
    ] as const) {
      expectInvalid(await http(`${b.base}/threads/${threadId}${suffix}?resourceId=`, { method }), ['query.resourceId'], `${method} ${suffix}`);
      expectInvalid(
        await http(`${b.base}/threads/${threadId}${suffix}?resourceId=${resourceId}&agentId=`, { method }),
        ['query.agentId'],
        `${method} ${suffix}`,
      );
    }
    expectInvalid(await http(`${b.base}/agents?resourceId=`), ['query.resourceId'], 'GET /agents');
  });
});

describe('bodies over maxBodyBytes', () => {
  const oversized = () => JSON.stringify({ resourceId, title: 'x'.repeat(LIMIT * 3) });

  it('with Content-Length: 413 PAYLOAD_TOO_LARGE on every body route', async () => {
    for (const { method, path } of bodyRoutes()) {
      const res = await http(`${b.base}${path}`, { method, rawBody: oversized() });
      expect(res.status, `${method} ${path}`).toBe(413);
      expect(res.body).toEqual({ error: expect.stringContaining(String(LIMIT)), code: 'PAYLOAD_TOO_LARGE' });
    }
  });

  it('with a chunked body (no Content-Length): 413 on every body route', async () => {
    for (const { method, path } of bodyRoutes()) {
      const res = await postChunked(`${b.base}${path}`, LIMIT * 3, 'x', method);
      expect(res.status, `${method} ${path}`).toBe(413);
      expect(res.body.code).toBe('PAYLOAD_TOO_LARGE');
    }
  });

  it('a large chunked upload still gets its 413 (the rest is drained, the socket is not reset)', async () => {
    const res = await postChunked(`${b.base}/threads`, 4 * 1024 * 1024);
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('PAYLOAD_TOO_LARGE');
    const declared = await http(`${b.base}/threads`, { rawBody: 'x'.repeat(4 * 1024 * 1024) });
    expect(declared.status).toBe(413);
  });

  it('a client that uploads its whole chunked body (as curl does) reads the 413, and the connection stays usable', async () => {
    const { host, port, pathname } = new URL(b.base);
    const piece = 'x'.repeat(16 * 1024);
    let upload = `POST ${pathname}/threads HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    for (let i = 0; i < 128; i++) upload += `${piece.length.toString(16)}\r\n${piece}\r\n`;
    upload += '0\r\n\r\n';
    // A second request on the same connection, pipelined: it is answered only if the first body was consumed.
    upload += `GET ${pathname}/agents HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;
    const text = await rawExchange(Number(port), upload);
    const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
    expect(statuses).toEqual([413, 200]);
    expect(text).toContain('PAYLOAD_TOO_LARGE');
    expect(text).toContain('"id":"demo"');
  });

  it('exactly maxBodyBytes is accepted, one more byte is refused', async () => {
    const body = (n: number) => {
      const base = JSON.stringify({ resourceId, title: '' });
      return JSON.stringify({ resourceId, title: 'y'.repeat(n - base.length) });
    };
    expect(Buffer.byteLength(body(LIMIT))).toBe(LIMIT);
    expect((await http(`${b.base}/threads`, { rawBody: body(LIMIT) })).status).toBe(201);
    expect((await http(`${b.base}/threads`, { rawBody: body(LIMIT + 1) })).status).toBe(413);
  });

  it('a chunked body under the limit is read and accepted', async () => {
    const json = JSON.stringify({ resourceId, title: 'streamed' });
    const res = await fetch(`${b.base}/threads`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      duplex: 'half',
      body: new ReadableStream<Uint8Array>({
        start(controller) {
          const bytes = new TextEncoder().encode(json);
          controller.enqueue(bytes.subarray(0, 10));
          controller.enqueue(bytes.subarray(10));
          controller.close();
        },
      }),
    } as RequestInit);
    expect(res.status).toBe(201);
    expect((await res.json()).title).toBe('streamed');
  });
});

describe('unknown routes', () => {
  it('answer 404 with a JSON error body', async () => {
    const origin = new URL(b.base).origin;
    const cases: Array<[string, string]> = [
      ['GET', `${b.base}/nope`],
      ['POST', `${b.base}/threads/x/y/z`],
      ['PUT', `${b.base}/threads`],
      ['DELETE', `${b.base}/agents/demo`],
      ['GET', `${b.base}/runs/r/tool-calls/c/result`],
      ['GET', `${origin}/elsewhere`],
      ['GET', `${origin}/`],
    ];
    for (const [method, url] of cases) {
      const res = await http(url, { method });
      expect(res.status, `${method} ${url}`).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body).toEqual({ error: expect.any(String), code: 'NOT_FOUND' });
    }
  });
});

describe('after all of the above', () => {
  it('the server is still up, the thread is intact and a run works', async () => {
    expect((await http(`${b.base}/agents`)).status).toBe(200);
    const thread = await http(`${b.base}/threads/${threadId}?resourceId=${resourceId}`);
    expect(thread.status).toBe(200);
    expect(thread.body.title).toBe('kept');
    const run = await runStrict(`${b.base}/run`, runInput({ threadId, messages: [userMessage('still alive?')], forwardedProps: { resourceId } }));
    expect(assistantText(run.events)).toBe('Echo: still alive?');
  });
});
