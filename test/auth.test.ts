import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../src/http/routes/index.js';
import { apiKeyVerifier, bearerAuth, jwtAuth, jwtVerifier } from '../src/index.js';
import { runInput, uid, userMessage } from './support/agui.js';
import { postRun } from './support/run.js';
import { http, startTestBridge, useTestBridge, type TestBridge } from './support/server.js';
import { openSse } from './support/sse.js';

const SECRET = 'a-test-secret-that-is-at-least-32-bytes-long';
const ISSUER = 'https://id.example.test/';
const AUDIENCE = 'agents';
const API_KEY = 'svc-key-0123456789abcdef';
const encoded = new TextEncoder().encode(SECRET);

/** An HS256 token for `sub`, valid for an hour unless `shape` says otherwise. */
async function hsToken(sub: string, shape: (jwt: SignJWT) => SignJWT = (j) => j, key: Uint8Array = encoded) {
  const jwt = new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('1h')
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE);
  return shape(jwt).sign(key);
}

/** An unsigned token (`alg: none`), as an attacker would write it. */
function noneToken(sub: string): string {
  const part = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ sub, iss: ISSUER, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 3600 })}.`;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Every route of the table, with its parameters filled in (a thread of `threadId`). */
const concreteRoutes = (threadId: string) =>
  ROUTES.map((r) => ({
    method: r.method,
    example: r.example,
    path: r.path
      .replace(':threadId', threadId)
      .replace(':runId', 'run-1')
      .replace(':toolCallId', 'call-1')
      .replace(':agentId', 'demo')
      .replace(':signalId', 'sig-1')
      .replace(':scheduleId', 'agent_1'),
  }));

const send = (base: string, route: { method: string; path: string }, headers: Record<string, string> = {}) =>
  http(`${base}${route.path}`, { method: route.method, headers, ...(route.method === 'POST' || route.method === 'PATCH' ? { body: {} } : {}) });

describe('JWT (HS256) and API keys on every route', () => {
  const tb = useTestBridge({
    config: {
      resolveResourceId: bearerAuth(apiKeyVerifier({ [API_KEY]: 'billing-service' }), jwtVerifier({ secret: SECRET, issuer: ISSUER, audience: AUDIENCE })),
    },
  });
  const alice = uid('alice');
  const bob = uid('bob');
  let threadId: string;

  beforeAll(async () => {
    const created = await http(`${tb.base}/threads`, { body: { title: 'alice’s' }, headers: bearer(await hsToken(alice)) });
    expect(created.status).toBe(201);
    expect(created.body.resourceId).toBe(alice);
    threadId = created.body.id;
  });

  it('without credentials every route is 401 UNAUTHORIZED with a Bearer challenge, before anything is read', async () => {
    for (const route of concreteRoutes(threadId)) {
      const res = await send(tb.base, route);
      expect(res.status, `${route.method} ${route.path}`).toBe(401);
      expect(res.body).toEqual({ error: 'A bearer token is required', code: 'UNAUTHORIZED' });
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="mastra-agui-bridge"');
    }
  });

  it('a bad credential is 401 invalid_token on every route, and the token is never echoed', async () => {
    const other = new TextEncoder().encode('another-secret-that-is-32-bytes-or-more!');
    const bad: Record<string, string> = {
      expired: await hsToken(alice, (j) => j.setExpirationTime(Math.floor(Date.now() / 1000) - 60)),
      'not yet valid': await hsToken(alice, (j) => j.setNotBefore('10m')),
      'wrong signature': await hsToken(alice, (j) => j, other),
      'wrong issuer': await hsToken(alice, (j) => j.setIssuer('https://evil.example/')),
      'wrong audience': await hsToken(alice, (j) => j.setAudience('someone-else')),
      'alg none': noneToken(alice),
      'not a token': 'garbage',
      'unknown API key': 'svc-key-ffffffffffffffff',
    };
    for (const [label, token] of Object.entries(bad)) {
      for (const route of concreteRoutes(threadId)) {
        const res = await send(tb.base, route, bearer(token));
        expect(res.status, `${label}: ${route.method} ${route.path}`).toBe(401);
        expect(res.body.code).toBe('UNAUTHORIZED');
        expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
        expect(JSON.stringify(res.body)).not.toContain(token);
      }
    }
    const basic = await http(`${tb.base}/threads`, { headers: { authorization: 'Basic YWxpY2U6cHc=' } });
    expect(basic.status).toBe(401);
    expect(basic.body.error).toMatch(/Bearer/);
  });

  it('the messages say what was wrong', async () => {
    const says = async (token: string) => (await http(`${tb.base}/agents`, { headers: bearer(token) })).body.error;
    expect(await says(await hsToken(alice, (j) => j.setExpirationTime(Math.floor(Date.now() / 1000) - 60)))).toBe('The token has expired');
    expect(await says(await hsToken(alice, (j) => j.setIssuer('https://evil.example/')))).toMatch(/"iss" claim/);
    expect(await says(await hsToken(alice, (j) => j.setAudience('x')))).toMatch(/"aud" claim/);
    expect(await says(noneToken(alice))).toMatch(/not accepted|malformed/);
  });

  it('the subject is the resource: another resource’s token gets 404 THREAD_NOT_FOUND on every route of the thread, and its stream shows nothing', async () => {
    const token = await hsToken(bob);
    const threadRoutes = concreteRoutes(threadId).filter((r) => r.path.startsWith(`/threads/${threadId}`) && !r.path.endsWith('/events'));
    expect(threadRoutes.length).toBeGreaterThanOrEqual(14);
    for (const route of threadRoutes) {
      const label = `${route.method} ${route.path}`;
      const res = await http(`${tb.base}${route.path}`, {
        method: route.method,
        headers: bearer(token),
        // The route's own example body, so that nothing but the thread's owner decides the answer.
        ...(route.example !== undefined ? { body: route.example } : route.method === 'POST' ? { body: {} } : {}),
      });
      expect(res.status, `${label}: ${JSON.stringify(res.body)}`).toBe(404);
      expect(res.body.code, label).toBe('THREAD_NOT_FOUND');
    }
    const read = await http(`${tb.base}/threads/${threadId}`, { headers: bearer(token) });
    expect(read.status).toBe(404);
    // Its events stream is the one a thread not created yet has: empty (docs/security.md).
    const stream = await openSse(`${tb.base}/threads/${threadId}/events?snapshot=1`, { headers: bearer(token) });
    expect(stream.status).toBe(200);
    await stream.waitForEvent((e) => e.type === 'RUN_FINISHED');
    await stream.close();
    expect(stream.list.map((e) => e.type)).toEqual(['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED']);
    const listed = await http(`${tb.base}/threads?resourceId=${bob}`, { headers: bearer(token) });
    expect(listed.body.threads ?? listed.body).not.toContainEqual(expect.objectContaining({ id: threadId }));
  });

  it('a claimed resourceId other than the token’s is 403 FORBIDDEN: body, query, forwardedProps', async () => {
    const token = await hsToken(bob);
    const body = await http(`${tb.base}/threads`, { body: { resourceId: alice }, headers: bearer(token) });
    expect(body.status).toBe(403);
    expect(body.body).toEqual({ error: expect.stringContaining('resourceId'), code: 'FORBIDDEN' });
    const query = await http(`${tb.base}/threads/${threadId}?resourceId=${alice}`, { headers: bearer(token) });
    expect(query.status).toBe(403);
    const run = await postRun(`${tb.base}/run`, runInput({ threadId, messages: [userMessage('hi')], forwardedProps: { resourceId: alice } }), {
      headers: bearer(token),
    });
    expect(run.status).toBe(403);
    // The same claim as the token is fine.
    const own = await http(`${tb.base}/threads/${threadId}?resourceId=${alice}`, { headers: bearer(await hsToken(alice)) });
    expect(own.status).toBe(200);
  });

  it('access_token works on the events stream, and nowhere else', async () => {
    const token = await hsToken(alice);
    const reader = await openSse(`${tb.base}/threads/${threadId}/events?access_token=${token}`);
    await reader.waitForComment('connected');
    await reader.close();
    const elsewhere = await http(`${tb.base}/threads/${threadId}?access_token=${token}`);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.body.error).toMatch(/events stream only/);
    expect(JSON.stringify(elsewhere.body)).not.toContain(token);
    const bad = await http(`${tb.base}/threads/${threadId}/events?access_token=${token}x`);
    expect(bad.status).toBe(401);
  });

  it('the OpenAPI document wants credentials like the routes it describes', async () => {
    expect((await http(`${tb.base}/openapi.json`)).status).toBe(401);
    const doc = await http(`${tb.base}/openapi.json`, { headers: bearer(API_KEY) });
    expect(doc.status).toBe(200);
    expect(doc.body.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('an API key stands for its resource', async () => {
    const created = await http(`${tb.base}/threads`, { body: { title: 'billing' }, headers: bearer(API_KEY) });
    expect(created.status).toBe(201);
    expect(created.body.resourceId).toBe('billing-service');
    const foreign = await http(`${tb.base}/threads/${threadId}`, { headers: bearer(API_KEY) });
    expect(foreign.status).toBe(404);
  });
});

/** A JWKS endpoint whose keys the test swaps (key rotation). */
async function jwksServer() {
  let keys: JWK[] = [];
  let fetches = 0;
  const server: Server = createServer((_req, res) => {
    fetches++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`,
    setKeys: (next: JWK[]) => void (keys = next),
    fetches: () => fetches,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function signingKey(alg: 'RS256' | 'ES256', kid: string) {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  const sign = (sub: string) => new SignJWT({}).setProtectedHeader({ alg, kid }).setSubject(sub).setExpirationTime('1h').sign(privateKey);
  return { jwk, sign, publicKey };
}

describe('JWT from a JWKS endpoint (RS256, ES256), with key rotation', () => {
  let jwks: Awaited<ReturnType<typeof jwksServer>>;
  let rsa: Awaited<ReturnType<typeof signingKey>>;
  let ec: Awaited<ReturnType<typeof signingKey>>;
  beforeAll(async () => {
    jwks = await jwksServer();
    [rsa, ec] = await Promise.all([signingKey('RS256', 'rsa-1'), signingKey('ES256', 'ec-1')]);
    jwks.setKeys([rsa.jwk, ec.jwk]);
  });
  let bridge: TestBridge;
  let base: string;
  beforeAll(async () => {
    bridge = await startTestBridge({ config: { resolveResourceId: jwtAuth({ jwksUrl: jwks.url, jwksCooldownMs: 0 }) } });
    base = bridge.base;
  });
  afterAll(async () => {
    await bridge?.close();
    await jwks?.close();
  });

  it('RS256 and ES256 tokens with a known kid are accepted; their subject is the resource', async () => {
    for (const key of [rsa, ec]) {
      const sub = uid('jwks');
      const res = await http(`${base}/threads`, { body: {}, headers: bearer(await key.sign(sub)) });
      expect(res.status).toBe(201);
      expect(res.body.resourceId).toBe(sub);
    }
  });

  it('an unknown kid is refused; an HS256 token keyed with the public key (algorithm confusion) is refused', async () => {
    const stranger = await signingKey('RS256', 'nobody');
    const strangerToken = await stranger.sign('x');
    for (const route of concreteRoutes(uid('t'))) {
      const unknown = await send(base, route, bearer(strangerToken));
      expect(unknown.status, `${route.method} ${route.path}`).toBe(401);
      expect(unknown.body.error).toBe('The token is signed with an unknown key');
    }
    const pem = new TextEncoder().encode(await exportSPKI(rsa.publicKey));
    const confused = await new SignJWT({}).setProtectedHeader({ alg: 'HS256', kid: 'rsa-1' }).setSubject('x').setExpirationTime('1h').sign(pem);
    const res = await http(`${base}/agents`, { headers: bearer(confused) });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('The token is signed with an algorithm that is not accepted');
  });

  it('rotation: a token with the new kid is accepted once the endpoint publishes it (fetched again); the retired key is refused', async () => {
    const next = await signingKey('RS256', 'rsa-2');
    const before = jwks.fetches();
    jwks.setKeys([next.jwk, ec.jwk]);
    const res = await http(`${base}/threads`, { body: {}, headers: bearer(await next.sign(uid('rotated'))) });
    expect(res.status).toBe(201);
    expect(jwks.fetches()).toBeGreaterThan(before);
    const retired = await http(`${base}/agents`, { headers: bearer(await rsa.sign('x')) });
    expect(retired.status).toBe(401);
  });
});
