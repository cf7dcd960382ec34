import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { useStandaloneServer } from './support/standalone.js';

/** A GET with a `Host` of our choosing (fetch would not let us set it). */
function getWithHost(
  url: string,
  host: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host, ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the standalone server’s Host check and CORS', () => {
  const s = useStandaloneServer({ ALLOWED_HOSTS: 'bridge.internal', CORS_ORIGINS: 'https://app.example.com' });

  it('bound to loopback, a foreign Host is 403 (DNS rebinding); loopback names and ALLOWED_HOSTS are served; probes answer any Host', async () => {
    expect((await getWithHost(`${s.server.url}/agents`, 'evil.example:4111')).status).toBe(403);
    expect((await getWithHost(`${s.origin}/`, 'evil.example')).status).toBe(403);
    expect((await getWithHost(`${s.server.url}/agents`, 'localhost:4111')).status).toBe(200);
    expect((await getWithHost(`${s.server.url}/agents`, 'bridge.internal')).status).toBe(200);
    expect((await getWithHost(`${s.origin}/healthz`, '10.1.2.3:4111')).status).toBe(200);
    expect((await getWithHost(`${s.origin}/metrics`, '10.1.2.3:4111')).status).toBe(200);
  });

  it('CORS_ORIGINS: a listed origin gets its preflight answered and may read X-Request-Id; another origin gets no grant', async () => {
    const preflight = await fetch(`${s.server.url}/threads`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    const listed = await fetch(`${s.server.url}/agents`, { headers: { origin: 'https://app.example.com' } });
    expect(listed.headers.get('access-control-expose-headers')).toContain('X-Request-Id');
    const other = await fetch(`${s.server.url}/agents`, { headers: { origin: 'https://evil.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});
