import { describe, expect, it } from 'vitest';
import { authFromEnv, exposureWarning } from './auth.js';
import { readServerEnv } from './env.js';

describe('authentication of the standalone server from its environment', () => {
  it('is off when no AUTH_ variable is set, on with a secret, a JWKS URL or API keys', () => {
    expect(authFromEnv(readServerEnv({}))).toBeUndefined();
    expect(authFromEnv(readServerEnv({ AUTH_JWT_SECRET: 's'.repeat(32) }))).toBeTypeOf('function');
    expect(authFromEnv(readServerEnv({ AUTH_JWKS_URL: 'https://id.example/jwks.json' }))).toBeTypeOf('function');
    expect(authFromEnv(readServerEnv({ AUTH_API_KEYS: 'k-0123456789abcdef:billing' }))).toBeTypeOf('function');
  });

  it('warns when bound beyond loopback with auth off, and only then', () => {
    expect(exposureWarning(readServerEnv({ HOST: '0.0.0.0' }), false)).toMatch(/HOST=0\.0\.0\.0 with authentication off/);
    expect(exposureWarning(readServerEnv({ HOST: '0.0.0.0' }), true)).toBeUndefined();
    for (const host of ['127.0.0.1', '::1', 'localhost']) expect(exposureWarning(readServerEnv({ HOST: host }), false)).toBeUndefined();
  });
});
