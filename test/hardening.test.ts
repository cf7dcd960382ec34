import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Message } from '@ag-ui/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../src/http/routes/index.js';
import { runInput, uid, userMessage } from './support/agui.js';
import { postRun } from './support/run.js';
import { http, useTestBridge } from './support/server.js';

// The bridge's input edges: whatever a caller sends is refused with `400 INVALID_INPUT` (naming the
// field) before anything is created or a stream opens, and nothing a caller sends answers a 500.

const b = useTestBridge();
const resourceId = uid('hard');
let threadId: string;

beforeAll(async () => {
  threadId = (await http(`${b.base}/threads`, { body: { resourceId, title: 'kept' } })).body.id;
});

const BODY_METHODS = new Set(['POST', 'PATCH']);
/** JSON nested `n` arrays deep. */
const nested = (n: number) => '['.repeat(n) + ']'.repeat(n);

/** `400 INVALID_INPUT` in the error shape, with a detail for each of `paths`. */
function expectInvalid(res: { status: number; body: any }, paths: string[], label = ''): void {
  expect(res.status, `${label}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(400);
  expect(res.body, label).toEqual(expect.objectContaining({ error: expect.any(String), code: 'INVALID_INPUT' }));
  expect(
    res.body.details?.map((d: { path: string }) => d.path),
    label,
  ).toEqual(expect.arrayContaining(paths));
}

/** A `/run` that must be refused before its stream opens: a JSON error, not `200` + `RUN_ERROR`. */
async function refusedRun(input: unknown, paths: string[], label = ''): Promise<void> {
  const res = await postRun(`${b.base}/run`, input as never);
  expect(res.headers.get('content-type'), label).toMatch(/^application\/json/);
  expectInvalid({ status: res.status, body: await res.json() }, paths, label);
}

/** The threads a resource owns (to check that a refused request created none). */
const threadsOf = async (owner: string) => (await http(`${b.base}/threads?resourceId=${owner}`)).body as Array<{ id: string }>;

describe('ids on /run', () => {
  it('a 900,000-character threadId is refused, and no thread is created', async () => {
    const owner = uid('long');
    await refusedRun(runInput({ threadId: 'x'.repeat(900_000), messages: [userMessage('hi')], forwardedProps: { resourceId: owner } }), ['threadId']);
    expect(await threadsOf(owner)).toEqual([]);
  });

  it('runId, parentRunId, message and tool call ids, and resume ids have the path id limits', async () => {
    const long = 'x'.repeat(513);
    await refusedRun(runInput({ runId: long, messages: [userMessage('hi')] }), ['runId']);
    await refusedRun({ ...runInput({ messages: [userMessage('hi')] }), parentRunId: long }, ['parentRunId']);
    await refusedRun(runInput({ messages: [userMessage('hi', long)] }), ['messages.0.id']);
    const call: Message = { id: uid('a'), role: 'assistant', toolCalls: [{ id: long, type: 'function', function: { name: 'f', arguments: '{}' } }] };
    const answer: Message = { id: uid('t'), role: 'tool', toolCallId: long, content: 'ok' };
    await refusedRun(runInput({ messages: [call, answer] }), ['messages.0.toolCalls.0.id', 'messages.1.toolCallId']);
    await refusedRun(runInput({ messages: [], resume: [{ interruptId: long, status: 'resolved' }] }), ['resume.0.interruptId']);
  });

  it('forwardedProps.resourceId and agentId have them too', async () => {
    const long = 'x'.repeat(513);
    await refusedRun(runInput({ messages: [userMessage('hi')], forwardedProps: { resourceId: long } }), ['forwardedProps.resourceId']);
    await refusedRun(runInput({ messages: [userMessage('hi')], forwardedProps: { agentId: long } }), ['forwardedProps.agentId']);
  });

  it('a lone surrogate or a control character in an id is 400, not RUN_ERROR', async () => {
    for (const bad of ['a\ud800', '\udc00b', 'a\u0000b', 'line\nbreak']) {
      const label = JSON.stringify(bad);
      await refusedRun(runInput({ threadId: bad, messages: [userMessage('hi')] }), ['threadId'], label);
      await refusedRun(runInput({ runId: bad, messages: [userMessage('hi')] }), ['runId'], label);
      await refusedRun(runInput({ messages: [userMessage('hi', bad)] }), ['messages.0.id'], label);
      await refusedRun(runInput({ messages: [userMessage('hi')], forwardedProps: { resourceId: bad } }), ['forwardedProps.resourceId'], label);
    }
    // A well-formed pair is an ordinary character.
    const res = await postRun(`${b.base}/run`, runInput({ threadId: uid('emoji-\ud83d\ude00'), messages: [userMessage('hi')] }));
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('RUN_FINISHED');
  });

  it('path ids refuse lone surrogates and control characters too', async () => {
    for (const raw of ['%ED%A0%80', 'a%00b', 'a%0Ab']) {
      const res = await http(`${b.base}/threads/${raw}?resourceId=${resourceId}`);
      expect(res.status, raw).toBeLessThan(500);
      expect(res.body.code, raw).toMatch(/INVALID_INPUT|THREAD_NOT_FOUND/);
    }
    expectInvalid(await http(`${b.base}/threads/a%00b?resourceId=${resourceId}`), ['path.threadId']);
  });
});

describe('ids in signal bodies', () => {
  it('a control character or a lone surrogate in a signal body’s resourceId or toolCallId is 400 naming the field', async () => {
    const threadId = uid('signal-ids');
    for (const [route, body, field] of [
      ['send-message', { message: 'hi', resourceId: 'bad\u0000id' }, 'resourceId'],
      ['queue-message', { message: 'hi', agentId: 'demo\ud800' }, 'agentId'],
      ['tool-approval', { toolCallId: 'call\u0007', approved: true }, 'toolCallId'],
    ] as const) {
      const res = await http(`${b.base}/threads/${threadId}/${route}`, { body });
      expect(res.status, route).toBe(400);
      expect(
        res.body.details.map((d: { path: string }) => d.path),
        route,
      ).toContain(field);
    }
  });
});

describe('forwardedProps', () => {
  const valid = () => runInput({ messages: [userMessage('hi')] });

  it('memoryOptions of the wrong types are 400, naming the option', async () => {
    await refusedRun({ ...valid(), forwardedProps: { memoryOptions: { lastMessages: 'ten', readOnly: 'yes' } } }, [
      'forwardedProps.memoryOptions.lastMessages',
      'forwardedProps.memoryOptions.readOnly',
    ]);
    await refusedRun({ ...valid(), forwardedProps: { memoryOptions: { semanticRecall: 3 } } }, ['forwardedProps.memoryOptions.semanticRecall']);
    await refusedRun({ ...valid(), forwardedProps: { memoryOptions: [] } }, ['forwardedProps.memoryOptions']);
    const ok = await postRun(`${b.base}/run`, { ...valid(), forwardedProps: { memoryOptions: { lastMessages: 5, readOnly: false } } });
    expect(ok.status).toBe(200);
    await ok.text();
  });

  it('a structuredOutput that is no usable JSON Schema is 400', async () => {
    const schemas: Array<[unknown, string]> = [
      [{ type: 'banana' }, 'forwardedProps.structuredOutput.type'],
      [{ type: 'object', properties: 5 }, 'forwardedProps.structuredOutput.properties'],
      [{ type: 'object', properties: { a: { type: 'strin' } } }, 'forwardedProps.structuredOutput.properties.a.type'],
      [{ type: 'object', properties: { a: 'string' } }, 'forwardedProps.structuredOutput.properties.a'],
      [{ type: 'object', required: 'a' }, 'forwardedProps.structuredOutput.required'],
      [{ type: 'array', items: [{ type: 'x' }] }, 'forwardedProps.structuredOutput.items.0.type'],
      [{ anyOf: [] }, 'forwardedProps.structuredOutput.anyOf'],
      [{ type: 'string', pattern: '(' }, 'forwardedProps.structuredOutput.pattern'],
      [[{ type: 'object' }], 'forwardedProps.structuredOutput'],
      [JSON.stringify({ type: 'object', properties: { a: { type: 7 } } }), 'forwardedProps.structuredOutput.properties.a.type'],
    ];
    for (const [structuredOutput, path] of schemas) {
      await refusedRun({ ...valid(), forwardedProps: { structuredOutput } }, [path], JSON.stringify(structuredOutput));
    }
  });

  it('an enormous or deep structuredOutput is 400', async () => {
    const properties = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`field${i}`, { type: 'string', description: 'x'.repeat(20) }]));
    await refusedRun({ ...valid(), forwardedProps: { structuredOutput: { type: 'object', properties } } }, ['forwardedProps.structuredOutput']);
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 200; i++) deep = { type: 'object', properties: { a: deep } };
    await refusedRun({ ...valid(), forwardedProps: { structuredOutput: deep } }, ['']);
    // As JSON text, the body's nesting limit does not see inside it: the same limits apply to the text.
    const deepText = '{"type":"object","x":'.repeat(5000) + '{}' + '}'.repeat(5000);
    await refusedRun({ ...valid(), forwardedProps: { structuredOutput: deepText } }, ['forwardedProps.structuredOutput']);
    await refusedRun({ ...valid(), forwardedProps: { structuredOutput: JSON.stringify({ type: 'object', properties }) } }, ['forwardedProps.structuredOutput']);
  });

  it('a sound structuredOutput still runs', async () => {
    const structuredOutput = {
      type: 'object',
      properties: { answer: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } },
      required: ['answer'],
    };
    const res = await postRun(`${b.base}/run`, { ...valid(), forwardedProps: { structuredOutput } });
    expect(res.status).toBe(200);
    await res.text();
  });
});

describe('nesting depth', () => {
  it('JSON nested 5,000 levels deep is 400 on POST /threads, and no thread is created', async () => {
    const owner = uid('deep');
    const res = await http(`${b.base}/threads`, { rawBody: `{"resourceId":"${owner}","metadata":{"a":${nested(5000)}}}` });
    expectInvalid(res, ['']);
    expect(res.body.error).toMatch(/nested/);
    expect(await threadsOf(owner)).toEqual([]);
  });

  it('is 400 INVALID_INPUT on every JSON route', async () => {
    for (const route of ROUTES.filter((r) => BODY_METHODS.has(r.method))) {
      const path = route.path.replace(':threadId', threadId).replace(/:(\w+)/g, '$1-1');
      const res = await http(`${b.base}${path}?resourceId=${resourceId}`, { method: route.method, rawBody: `{"x":${nested(5000)}}` });
      expectInvalid(res, [''], `${route.method} ${route.path}`);
    }
  });

  it('100 levels are accepted; brackets inside strings do not count', async () => {
    const owner = uid('deep');
    // The body object is level 1 and metadata level 2: 98 arrays make 100 levels.
    const atLimit = await http(`${b.base}/threads`, { rawBody: `{"resourceId":"${owner}","metadata":{"a":${nested(98)}}}` });
    expect(atLimit.status).toBe(201);
    expectInvalid(await http(`${b.base}/threads`, { rawBody: `{"resourceId":"${owner}","metadata":{"a":${nested(99)}}}` }), ['']);
    const inString = JSON.stringify({ resourceId: owner, metadata: { a: `\\"${'['.repeat(5000)}`, b: '{'.repeat(5000) } });
    expect((await http(`${b.base}/threads`, { rawBody: inString })).status).toBe(201);
  });
});

describe('paging numbers', () => {
  it('an offset or limit that cannot be served is 400 on both list routes, never 500', async () => {
    const lists = [`${b.base}/threads?resourceId=${resourceId}`, `${b.base}/threads/${threadId}/messages?resourceId=${resourceId}`];
    for (const list of lists) {
      expectInvalid(await http(`${list}&limit=10&offset=1000000000000000`), ['query.offset'], list);
      expectInvalid(await http(`${list}&limit=10&offset=99999999999999999999`), ['query.offset'], list);
      expectInvalid(await http(`${list}&limit=99999999999999999999`), ['query.limit'], list);
      expectInvalid(await http(`${list}&limit=1e3`), ['query.limit'], list);
      // Large, but servable: an empty page.
      expect((await http(`${list}&limit=1000&offset=1000000000000`)).body).toEqual([]);
      expect((await http(`${list}&limit=1000000000000000&offset=0`)).status).toBe(200);
      // Without a limit, offset is ignored (everything is returned).
      expect((await http(`${list}&offset=9007199254740991`)).status).toBe(200);
    }
  });
});

/** A server that counts the requests it gets: where a fetched URL would land. */
function useCountingServer(): { url: (path: string) => string; hits: () => number } {
  let server: Server;
  let hits = 0;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      hits++;
      res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from('89504e470d0a1a0a', 'hex'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: (path) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`, hits: () => hits };
}

const imageMessage = (value: string, type: 'url' | 'data' = 'url'): Message => ({
  id: uid('img'),
  role: 'user',
  content: [
    { type: 'text', text: 'what is this?' },
    { type: 'image', source: type === 'url' ? { type, value } : { type, value, mimeType: 'image/png' } },
  ],
});

describe('URLs in input messages (default: none allowed)', () => {
  const internal = useCountingServer();

  it('an image URL on /run is refused before the server fetches it', async () => {
    await refusedRun(runInput({ messages: [imageMessage(internal.url('/latest/meta-data'))] }), ['messages.0.content.1.source.value']);
    // Mastra fetches any value that parses as a URL, whatever the source type says.
    await refusedRun(runInput({ messages: [imageMessage(internal.url('/x'), 'data')] }), ['messages.0.content.1.source.value']);
    await refusedRun(runInput({ messages: [imageMessage('file:///etc/passwd')] }), ['messages.0.content.1.source.value']);
    expect(internal.hits()).toBe(0);
  });

  it('data: URLs and base64 are accepted', async () => {
    for (const message of [imageMessage('data:image/png;base64,iVBORw0KGgo='), imageMessage('iVBORw0KGgo=', 'data')]) {
      const res = await postRun(`${b.base}/run`, runInput({ messages: [message] }));
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('RUN_FINISHED');
    }
  });

  it('a file part with a URL on the signal routes is refused', async () => {
    const file = { type: 'file', data: internal.url('/x'), mediaType: 'image/png' };
    const url = (route: string) => `${b.base}/threads/${threadId}/${route}`;
    expectInvalid(await http(url('send-message'), { body: { resourceId, message: [file] } }), ['message.0.data']);
    expectInvalid(await http(url('queue-message'), { body: { resourceId, message: { contents: [{ type: 'text', text: 'a' }, file] } } }), [
      'message.contents.1.data',
    ]);
    expectInvalid(await http(url('signals'), { body: { resourceId, type: 'user', contents: [file] } }), ['contents.0.data']);
    expectInvalid(await http(url('state'), { body: { resourceId, id: 's', cacheKey: 'k', contents: [file] } }), ['contents.0.data']);
    expect(internal.hits()).toBe(0);
  });
});

describe('URLs in input messages, with allowedUrlHosts', () => {
  const allowed = useTestBridge({ config: { allowedUrlHosts: ['127.0.0.1', '*.example.com'] } });
  const cdn = useCountingServer();

  it('an allowed host is fetched (the reason for the policy), another is refused', async () => {
    const res = await postRun(`${allowed.base}/run`, runInput({ messages: [imageMessage(cdn.url('/a.png'))] }));
    expect(res.status).toBe(200);
    await res.text();
    expect(cdn.hits()).toBeGreaterThan(0);
    const other = await postRun(`${allowed.base}/run`, runInput({ messages: [imageMessage('http://localhost/a.png')] }));
    expectInvalid({ status: other.status, body: await other.json() }, ['messages.0.content.1.source.value']);
  });
});

describe('no input gives a 500', () => {
  const deep = nested(5000);
  const hostileBodies: Array<[string, string]> = [
    ['deep', `{"a":${deep}}`],
    ['deep object', '{"a":'.repeat(3000) + '1' + '}'.repeat(3000)],
    // Deep values in the fields each route accepts, so that they pass the schema.
    ['deep metadata', `{"resourceId":"${resourceId}","metadata":{"a":${deep}}}`],
    ['deep content', `{"content":${deep}}`],
    ['deep payload', `{"resourceId":"${resourceId}","source":"s","kind":"k","summary":"s","payload":${deep}}`],
    ['deep state value', `{"resourceId":"${resourceId}","id":"s","cacheKey":"${uid('k')}","contents":"c","value":${deep}}`],
    ['deep resumeData', `{"resourceId":"${resourceId}","toolCallId":"c","approved":true,"resumeData":${deep}}`],
    [
      'deep run state',
      JSON.stringify(runInput({ messages: [userMessage('hi')], forwardedProps: { resourceId } })).replace('"state":{}', `"state":{"a":${deep}}`),
    ],
    ['huge string', JSON.stringify({ resourceId, title: 'x'.repeat(500_000), content: 'x'.repeat(300_000) })],
    ['lone surrogates', JSON.stringify({ resourceId: 'a\ud800', agentId: '\udfff', threadId: 'a\ud800', runId: 'r', messages: [userMessage('x', 'm\ud800')] })],
    ['lone surrogate key', '{"\\ud800":1,"resourceId":"' + resourceId + '"}'],
    ['escaped lone surrogates', `{"resourceId":"\\ud800","title":"\\udc00","threadId":"\\ud800"}`],
    [
      'wrong types',
      JSON.stringify({ resourceId: 7, agentId: [], title: {}, metadata: 'x', message: 5, contents: null, type: 1, threadId: {}, runId: [], messages: {} }),
    ],
    ['__proto__', `{"__proto__":{"polluted":true},"resourceId":"${resourceId}","metadata":{"__proto__":{"x":1},"constructor":{"prototype":{"y":1}}}}`],
    ['huge numbers', `{"resourceId":"${resourceId}","metadata":{"n":1e400,"m":-1e400,"i":123456789012345678901234567890},"content":1e400,"approved":1e400}`],
    ['null bytes', JSON.stringify({ resourceId: 'a\u0000b', title: '\u0000', threadId: '\u0000' })],
    [
      'a run with everything',
      JSON.stringify({
        ...runInput({ messages: [userMessage('hi')] }),
        forwardedProps: { structuredOutput: '{"type":"x"}', memoryOptions: { lastMessages: 1e400 } },
        state: { __proto__: 1 },
      }),
    ],
  ];
  const hostileQueries = [
    'resourceId=%ED%A0%80',
    'resourceId=%00',
    `resourceId=${'x'.repeat(10_000)}`,
    'resourceId[]=a&resourceId[]=b',
    'resourceId=a&resourceId=b',
    `resourceId=${resourceId}&limit=1e400&offset=-0`,
    `resourceId=${resourceId}&limit=10&offset=1000000000000000`,
    `resourceId=${resourceId}&__proto__=x&constructor=y`,
    `resourceId=${resourceId}&status=%ED%A0%80&format=%00&snapshot=2&lastEventId=99999999999999999`,
  ];
  const hostileParams = ['%ED%A0%80', '%00', 'x'.repeat(600), '__proto__', 'constructor', '..%2F..%2Fetc'];

  /** One request; a stream that opens (200 event-stream) is closed at once, its status is what counts. */
  async function probe(method: string, url: string, rawBody?: string): Promise<{ status: number; body: any; type: string }> {
    const abort = new AbortController();
    const res = await fetch(url, { method, headers: { 'content-type': 'application/json' }, body: rawBody, signal: abort.signal });
    const type = res.headers.get('content-type') ?? '';
    if (type.startsWith('text/event-stream')) {
      abort.abort();
      return { status: res.status, body: undefined, type };
    }
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, type };
  }

  function expectNo500(res: { status: number; body: any; type: string }, label: string): void {
    expect(res.status, `${label}: ${JSON.stringify(res.body)?.slice(0, 300)}`).not.toBe(500);
    if (res.status >= 400) {
      expect(res.type, label).toMatch(/^application\/json/);
      expect(res.body, label).toEqual(expect.objectContaining({ error: expect.any(String), code: expect.any(String) }));
      expect(
        Object.keys(res.body).every((k) => ['error', 'code', 'details'].includes(k)),
        label,
      ).toBe(true);
    }
  }

  // A thread of its own: the probes include valid requests (DELETE, abort), which may remove it.
  const fuzzThread = uid('fuzz');
  const fill = (path: string, param?: string) =>
    path.replace(/:(\w+)/g, (_, name: string) => param ?? (name === 'threadId' ? fuzzThread : name === 'agentId' ? 'demo' : `${name}-1`));
  /** (Re)creates the fuzz thread, so that every probe meets an existing thread (a 409 means it is there). */
  const ensureThread = () => http(`${b.base}/threads`, { body: { resourceId, threadId: fuzzThread } });

  it('hostile bodies, on every route that reads one', async () => {
    for (const route of ROUTES.filter((r) => BODY_METHODS.has(r.method))) {
      for (const [label, raw] of hostileBodies) {
        await ensureThread();
        expectNo500(await probe(route.method, `${b.base}${fill(route.path)}?resourceId=${resourceId}`, raw), `${route.method} ${route.path} ${label}`);
      }
    }
  }, 120_000);

  it('hostile queries and path parameters, on every route', async () => {
    for (const route of ROUTES) {
      const body = BODY_METHODS.has(route.method) ? '{}' : undefined;
      for (const query of hostileQueries) {
        await ensureThread();
        expectNo500(await probe(route.method, `${b.base}${fill(route.path)}?${query}`, body), `${route.method} ${route.path} ?${query.slice(0, 60)}`);
      }
      if (!route.path.includes(':')) continue;
      for (const param of hostileParams) {
        expectNo500(
          await probe(route.method, `${b.base}${fill(route.path, param)}?resourceId=${resourceId}`, body),
          `${route.method} ${route.path} :${param.slice(0, 20)}`,
        );
      }
    }
  }, 120_000);

  it('the server is still up, the other thread is intact, and nothing was polluted', async () => {
    const thread = await http(`${b.base}/threads/${threadId}?resourceId=${resourceId}`);
    expect(thread.status).toBe(200);
    expect(thread.body.title).toBe('kept');
    expect(Object.prototype).not.toHaveProperty('polluted');
    const res = await postRun(`${b.base}/run`, runInput({ threadId, messages: [userMessage('still alive?')], forwardedProps: { resourceId } }));
    expect(await res.text()).toContain('Echo: ');
  });
});
