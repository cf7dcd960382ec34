import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { readServerEnv } from '../src/server/env.js';
import { startServer, type RunningServer } from '../src/server/standalone.js';
import { ThreadStore } from '../src/threads/thread-store.js';
import { runInput, uid, userMessage } from './support/agui.js';
import { http } from './support/server.js';
import { openSse } from './support/sse.js';

const API_KEY = 'svc-key-request-log-0123456789';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type Line = Record<string, unknown> & { level: number; msg: string };

/** Everything the server's pino logger wrote, as text and as parsed lines. */
class Captured {
  text = '';
  readonly stream = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      this.text += chunk.toString();
      done();
    },
  });

  get lines(): Line[] {
    return this.text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Line);
  }

  /** The lines of one request. */
  of(reqId: string): Line[] {
    return this.lines.filter((l) => l.reqId === reqId);
  }
}

describe('request log of the standalone server (pino, JSON lines)', () => {
  const log = new Captured();
  let dir: string;
  let server: RunningServer;
  const auth = { authorization: `Bearer ${API_KEY}` };
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agui-request-log-'));
    // Auth on (the key's resource is `ops`): tokens go by on every request, and none may be logged.
    const env = readServerEnv({
      PORT: '0',
      DATABASE_URL: `file:${join(dir, 'bridge.db')}`,
      DEMO_DELAY_MS: '0',
      AUTH_API_KEYS: `${API_KEY}:ops`,
      LOG_LEVEL: 'info',
    });
    server = await startServer(env, {}, { log: pino({ level: 'info' }, log.stream) });
  });
  afterEach(() => vi.restoreAllMocks());
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
    // Whatever any test did, the credential never reached the log.
    expect(log.text).not.toContain(API_KEY);
  });

  it('one info line per request: request id, method, route pattern, status, duration, resource; X-Request-Id echoed', async () => {
    const threadId = uid('log-thread');
    const res = await http(`${server.url}/threads/${threadId}?resourceId=ops`, { headers: { ...auth, 'x-request-id': 'req-abc-1' } });
    expect(res.status).toBe(404);
    expect(res.headers.get('x-request-id')).toBe('req-abc-1');
    const lines = log.of('req-abc-1');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, msg: 'request', method: 'GET', route: '/agui/threads/:threadId', status: 404, resourceId: 'ops' });
    expect(lines[0].durationMs).toBeTypeOf('number');
    // The route pattern, not the path: no thread id, no query.
    expect(JSON.stringify(lines[0])).not.toContain(threadId);
  });

  it('makes a request id when none (or an unsafe one) is sent', async () => {
    const none = await http(`${server.url}/agents`, { headers: auth });
    const id = none.headers.get('x-request-id')!;
    expect(id).toMatch(UUID);
    expect(log.of(id)).toMatchObject([{ msg: 'request', route: '/agui/agents', status: 200 }]);
    const forged = await http(`${server.url}/agents`, { headers: { ...auth, 'x-request-id': 'evil id {"level":60}' } });
    expect(forged.headers.get('x-request-id')).toMatch(UUID);
    expect(log.text).not.toContain('evil id');
  });

  it('no token in any line: neither the Authorization header nor the access_token query parameter', async () => {
    const refused = await http(`${server.url}/agents`, { headers: { authorization: 'Bearer not-a-key-0123456789', 'x-request-id': 'req-refused' } });
    expect(refused.status).toBe(401);
    expect(log.of('req-refused')).toMatchObject([{ status: 401, route: '/agui/agents' }]);
    expect(log.text).not.toContain('not-a-key-0123456789');

    const threadId = uid('log-thread');
    const sse = await openSse(`${server.url}/threads/${threadId}/events?access_token=${API_KEY}`, { headers: { 'x-request-id': 'req-events' } });
    await sse.waitForComment('connected');
    const [opened] = log.of('req-events');
    expect(opened).toMatchObject({ level: 30, msg: 'stream opened', method: 'GET', route: '/agui/threads/:threadId/events', status: 200, resourceId: 'ops' });
    await sse.close();
    await vi.waitFor(() => expect(log.of('req-events').map((l) => l.msg)).toEqual(['stream opened', 'stream closed']));
    const closed = log.of('req-events')[1];
    expect(closed.durationMs).toBeGreaterThanOrEqual(opened.durationMs as number);
    for (const line of log.lines) expect(JSON.stringify(line)).not.toContain(API_KEY);
  });

  it('a /run is logged when its stream opens and when it ends, without the message it carries', async () => {
    const secret = `secret words ${uid('content')}`;
    const res = await fetch(`${server.url}/run`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'x-request-id': 'req-run' },
      body: JSON.stringify(runInput({ messages: [userMessage(secret)] })),
    });
    expect(res.headers.get('x-request-id')).toBe('req-run');
    await res.text();
    await vi.waitFor(() => expect(log.of('req-run').map((l) => l.msg)).toEqual(['stream opened', 'stream closed']));
    expect(log.of('req-run')[0]).toMatchObject({ route: '/agui/run', method: 'POST', status: 200, resourceId: 'ops' });
    expect(log.text).not.toContain('secret words');
  });

  it('an unexpected error: one line at error level, with the stack and the request id', async () => {
    vi.spyOn(ThreadStore.prototype, 'list').mockRejectedValueOnce(new TypeError('boom from the store'));
    const res = await http(`${server.url}/threads?resourceId=ops`, { headers: { ...auth, 'x-request-id': 'req-boom' } });
    expect(res).toMatchObject({ status: 500, body: { code: 'INTERNAL_ERROR' } });
    const lines = log.of('req-boom');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 50,
      msg: 'request failed',
      route: '/agui/threads',
      status: 500,
      resourceId: 'ops',
      err: { type: 'TypeError', message: 'boom from the store' },
    });
    expect((lines[0].err as { stack: string }).stack).toContain('boom from the store\n    at ');
    // Not a second time on a line of its own.
    expect(log.lines.filter((l) => String(l.msg).includes('boom from the store'))).toEqual([]);
  });
});
