import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readServerEnv } from '../src/server/env.js';
import { startServer, type RunningServer } from '../src/server/standalone.js';
import { silentLogger } from './support/server.js';

/** The standalone server serves the demo page (no browser needed for these). */
describe('the standalone server serves the demo page', () => {
  let dir: string;
  const servers: RunningServer[] = [];
  const start = async (prefix: string) => {
    const server = await startServer(
      readServerEnv({ PORT: '0', DATABASE_URL: `file:${join(dir, `${servers.length}.db`)}`, DEMO_DELAY_MS: '0', SLOW_TASK_MS: '100', AGUI_PREFIX: prefix }),
      { logger: silentLogger },
    );
    servers.push(server);
    return new URL(server.url).origin;
  };
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'agui-serve-'));
  });
  afterAll(async () => {
    for (const server of servers) await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('GET / is the page with the prefix filled in and a strict CSP; /ui/<file> are its assets', async () => {
    const origin = await start('/agui');
    const page = await fetch(`${origin}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).toContain('<meta name="agui-prefix" content="/agui" />');
    expect(html).not.toContain('%AGUI_PREFIX%');
    for (const [file, type] of [
      ['app.js', /^text\/javascript/],
      ['transcript.js', /^text\/javascript/],
      ['style.css', /^text\/css/],
      ['icon.svg', /^image\/svg\+xml/],
    ] as const) {
      const res = await fetch(`${origin}/ui/${file}`);
      expect(res.status, file).toBe(200);
      expect(res.headers.get('content-type'), file).toMatch(type);
      expect(await res.text()).toBe(readFileSync(new URL(`../web/${file}`, import.meta.url), 'utf8'));
    }
    // Only files of the page's folder, by plain name and known type (the client bundle aside).
    for (const path of ['/ui/missing.js', '/ui/api.js', '/ui/stream.js', '/ui/index.html', '/ui/..%2Fpackage.json', '/ui/%2E%2E%2Fsrc%2Findex.ts']) {
      const res = await fetch(`${origin}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toMatchObject({ code: 'NOT_FOUND' });
    }
    // The bridge routes are untouched.
    expect((await fetch(`${origin}/agui/agents`)).status).toBe(200);
  });

  it('GET /ui/client.js is mastra-agui-bridge/client as one self-contained ES module (bundled from src/client/)', async () => {
    const origin = await start('/agui');
    const res = await fetch(`${origin}/ui/client.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/javascript/);
    const code = await res.text();
    // Self-contained: imported from a folder with no node_modules, it needs nothing else.
    const file = join(dir, 'client.mjs');
    writeFileSync(file, code);
    const client = await import(pathToFileURL(file).href);
    expect(Object.keys(client)).toEqual(expect.arrayContaining(['BridgeAgent', 'BridgeClient', 'BridgeRequestError', 'followThreadEvents', 'SseParser']));
    expect(new client.BridgeAgent({ baseUrl: '/agui', threadId: 't1' }).url).toBe('/agui/run');
    // One zod, without its translations (scripts/browser-client.ts): German's “invalid input” is not in it, English is.
    expect(code).not.toContain('Ungültige Eingabe');
    expect(code).toContain('Invalid input');
    expect(code.match(/major:4,minor:\d+/g)).toHaveLength(1); // zod's version object: one zod
    // Made once: the second request gets the same bundle.
    expect(await (await fetch(`${origin}/ui/client.js`)).text()).toBe(code);
  });

  it('with the bridge at the root (AGUI_PREFIX=/), the page gets an empty prefix', async () => {
    const origin = await start('/');
    const html = await (await fetch(`${origin}/`)).text();
    expect(html).toContain('<meta name="agui-prefix" content="" />');
    expect((await fetch(`${origin}/agents`)).status).toBe(200);
  });
});
