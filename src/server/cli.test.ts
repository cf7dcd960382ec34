import { describe, expect, it } from 'vitest';
import { jwtVerifier } from '../auth/jwt.js';
import { ServerEnvSchema } from './env.js';
import { helpText, mintToken, parseCli, UsageError } from './cli.js';

const SECRET = 'a-secret-of-at-least-thirty-two-bytes!';

describe('parseCli', () => {
  it('takes no argument, --help / -h, --version / -v and token --sub [--ttl]', () => {
    expect(parseCli([])).toEqual({ kind: 'serve' });
    expect(parseCli(['--help'])).toEqual({ kind: 'help' });
    expect(parseCli(['-h'])).toEqual({ kind: 'help' });
    expect(parseCli(['--version'])).toEqual({ kind: 'version' });
    expect(parseCli(['-v'])).toEqual({ kind: 'version' });
    expect(parseCli(['token', '--sub', 'alice'])).toEqual({ kind: 'token', sub: 'alice', ttl: '1h' });
    expect(parseCli(['token', '--sub', 'alice', '--ttl', '15m'])).toEqual({ kind: 'token', sub: 'alice', ttl: '15m' });
  });

  it.each([
    [['--bogus'], "Unknown option '--bogus'"],
    [['serve'], "Unknown command 'serve'"],
    [['token'], 'token needs --sub'],
    [['token', '--sub'], "Option '--sub <value>' argument missing"],
    [['token', '--sub', 'alice', 'extra'], "Unexpected argument 'extra'"],
    [['--sub', 'alice'], '--sub and --ttl go with the token command'],
  ])('refuses %j: %s', (args, message) => {
    expect(() => parseCli(args)).toThrow(UsageError);
    expect(() => parseCli(args)).toThrow(message);
  });
});

describe('helpText', () => {
  it('has a line for every environment variable the server reads', () => {
    const text = helpText();
    for (const name of Object.keys(ServerEnvSchema.shape)) expect(text).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
  });
});

describe('mintToken', () => {
  it('signs a token the server’s own verifier accepts, naming the resource in the configured claim', async () => {
    const plain = await mintToken({ AUTH_JWT_SECRET: SECRET }, 'alice', '1h');
    expect(await jwtVerifier({ secret: SECRET })(plain)).toBe('alice');
    const env = { AUTH_JWT_SECRET: SECRET, AUTH_ISSUER: 'https://id.example', AUTH_AUDIENCE: 'bridge', AUTH_RESOURCE_CLAIM: 'tenant' };
    const scoped = await mintToken(env, 'acme', '5m');
    expect(await jwtVerifier({ secret: SECRET, issuer: env.AUTH_ISSUER, audience: env.AUTH_AUDIENCE, resourceClaim: 'tenant' })(scoped)).toBe('acme');
  });

  it('expires after --ttl', async () => {
    const token = await mintToken({ AUTH_JWT_SECRET: SECRET }, 'alice', '2h');
    const payload = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { iat: number; exp: number };
    expect(payload.exp - payload.iat).toBe(7200);
  });

  it('needs AUTH_JWT_SECRET and a time span', async () => {
    await expect(mintToken({}, 'alice', '1h')).rejects.toThrow(/AUTH_JWT_SECRET/);
    await expect(mintToken({ AUTH_JWT_SECRET: SECRET }, 'alice', 'soon')).rejects.toThrow(/not a time span/);
  });
});
