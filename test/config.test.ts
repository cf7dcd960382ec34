import { describe, expect, it } from 'vitest';
import { BridgeConfigError, createBridge, type BridgeConfig } from '../src/index.js';
import { assistantText, runInput, runStrict, uid, userMessage } from './support/agui.js';
import { http, startTestBridge } from './support/server.js';

/** The BridgeConfigError `createBridge(config)` throws (fails the test when it does not throw). */
function configError(config: unknown): BridgeConfigError {
  try {
    createBridge(config as BridgeConfig);
  } catch (error) {
    expect(error).toBeInstanceOf(BridgeConfigError);
    return error as BridgeConfigError;
  }
  throw new Error(`createBridge(${JSON.stringify(config)}) did not throw`);
}

describe('createBridge validates its config once, up front', () => {
  it('a prefix without a leading slash throws BridgeConfigError saying what a prefix must look like', () => {
    const error = configError({ prefix: 'no-slash' });
    expect(error.name).toBe('BridgeConfigError');
    expect(error.message).toMatch(/^Invalid mastra-agui-bridge config: /);
    expect(error.message).toContain('prefix');
    expect(error.message).toContain('must start with "/"');
    expect(error.message).toContain('"/agui"');
    expect(error.details).toEqual([{ path: 'prefix', message: expect.stringContaining('must start with "/"') }]);
  });

  it('other malformed prefixes throw too', () => {
    for (const prefix of ['/agui/', '', 'agui/', '/a b', '/a//b', '//']) {
      expect(
        configError({ prefix }).details.map((d) => d.path),
        JSON.stringify(prefix),
      ).toEqual(['prefix']);
    }
  });

  it('an unknown key throws and names the key (a typo is not silently ignored)', () => {
    const error = configError({ prefx: '/x' });
    expect(error.message).toContain('prefx');
    expect(error.details).toHaveLength(1);
    expect(error.details[0].message).toContain('prefx');
  });

  it('a negative, zero, fractional or non-numeric maxBodyBytes throws', () => {
    for (const maxBodyBytes of [-1, 0, 1.5, '1024', Number.NaN]) {
      const error = configError({ maxBodyBytes });
      expect(
        error.details.map((d) => d.path),
        String(maxBodyBytes),
      ).toEqual(['maxBodyBytes']);
      expect(error.message).toContain('maxBodyBytes');
    }
  });

  it('every problem is listed at once', () => {
    const error = configError({ prefix: 'x', maxBodyBytes: -5, frontendToolMode: 'bogus', resolveResourceId: 'nope', logger: { info() {} } });
    expect(error.details.map((d) => d.path).sort()).toEqual(['frontendToolMode', 'logger', 'maxBodyBytes', 'prefix', 'resolveResourceId']);
    for (const d of error.details) expect(error.message).toContain(d.message);
  });

  it('no config gives the documented defaults', () => {
    const { config } = createBridge();
    expect(config).toMatchObject({
      prefix: '/agui',
      frontendToolMode: 'proxy',
      frontendToolTimeoutMs: 300_000,
      maxBodyBytes: 1024 * 1024,
      heartbeatMs: 15_000,
      replayBufferSize: 1000,
    });
    expect(config.cors).toBeUndefined();
    expect(config.defaultAgentId).toBeUndefined();
    expect(typeof config.logger.error).toBe('function');
  });

  it('routes() are registered under the prefix', () => {
    const routes = createBridge({ prefix: '/ag' }).routes();
    expect(routes.length).toBeGreaterThan(0);
    for (const route of routes) expect(route.path.startsWith('/ag/')).toBe(true);
    expect(routes.map((r) => `${r.method} ${r.path}`)).toContain('POST /ag/run');
  });
});

describe('a custom prefix end to end', () => {
  it('"/ag": agents, threads and /run answer under /ag, nothing under /agui', async () => {
    const b = await startTestBridge({ config: { prefix: '/ag' } });
    try {
      const origin = new URL(b.base).origin;
      expect(b.base).toBe(`${origin}/ag`);
      expect((await http(`${origin}/ag/agents`)).body.map((a: { id: string }) => a.id)).toEqual(['demo']);
      const resourceId = uid('r');
      const thread = await http(`${origin}/ag/threads`, { body: { resourceId, title: 'prefixed' } });
      expect(thread.status).toBe(201);
      const run = await runStrict(`${origin}/ag/run`, runInput({ threadId: thread.body.id, messages: [userMessage('hello')], forwardedProps: { resourceId } }));
      expect(assistantText(run.events)).toBe('Echo: hello');
      const history = await http(`${origin}/ag/threads/${thread.body.id}/messages?resourceId=${resourceId}`);
      expect(history.body.map((m: { content: string }) => m.content)).toEqual(['hello', 'Echo: hello']);
      for (const path of ['/agui/agents', '/agents', '/ag', '/agx/agents', '/ag/agents/demo/x']) {
        const res = await http(`${origin}${path}`);
        expect(res.status, path).toBe(404);
        expect(res.body.code, path).toBe('NOT_FOUND');
      }
    } finally {
      await b.close();
    }
  });

  it('a nested prefix works the same', async () => {
    const b = await startTestBridge({ config: { prefix: '/api/v1/agui' } });
    try {
      const origin = new URL(b.base).origin;
      expect((await http(`${origin}/api/v1/agui/agents/demo`)).body.id).toBe('demo');
      expect((await http(`${origin}/api/v1/agents/demo`)).status).toBe(404);
    } finally {
      await b.close();
    }
  });

  // "/" is the root: routes are joined as prefix + path, so it becomes the empty prefix.
  it('prefix "/" serves the routes at the root', async () => {
    const b = await startTestBridge({ config: { prefix: '/' } });
    try {
      const origin = new URL(b.base).origin;
      expect((await http(`${origin}/agents`)).status).toBe(200);
    } finally {
      await b.close();
    }
  });
});

describe('cors', () => {
  it('is off by default: no Access-Control-Allow-Origin, preflight not answered', async () => {
    const b = await startTestBridge();
    try {
      const res = await fetch(`${b.base}/agents`, { headers: { origin: 'https://app.example' } });
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      const preflight = await fetch(`${b.base}/run`, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
      });
      expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await b.close();
    }
  });

  it('config.cors takes hono/cors options, on every route under the prefix', async () => {
    const b = await startTestBridge({ config: { cors: { origin: 'https://app.example', allowHeaders: ['content-type', 'x-user'] } } });
    try {
      const preflight = await fetch(`${b.base}/run`, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
      expect(preflight.status).toBeLessThan(300);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example');
      expect(preflight.headers.get('access-control-allow-headers')).toContain('content-type');
      const res = await fetch(`${b.base}/agents`, { headers: { origin: 'https://app.example' } });
      expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example');
      // Error answers carry the header too, so a browser can read them.
      const missing = await fetch(`${b.base}/agents/nope`, { headers: { origin: 'https://app.example' } });
      expect(missing.status).toBe(404);
      expect(missing.headers.get('access-control-allow-origin')).toBe('https://app.example');
    } finally {
      await b.close();
    }
  });
});
