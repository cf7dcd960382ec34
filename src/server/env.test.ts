import { describe, expect, it } from 'vitest';
import { readServerEnv } from './env.js';

describe('readServerEnv', () => {
  it('fills the embedded defaults from an empty environment', () => {
    expect(readServerEnv({})).toEqual({
      PORT: 4111,
      HOST: '127.0.0.1',
      DATABASE_URL: 'file:.data/bridge.db',
      DEMO_DELAY_MS: 20,
      SLOW_TASK_MS: 2000,
      AGUI_PREFIX: '/agui',
      REDIS_PREFIX: 'mastra-agui-bridge',
      RATE_LIMIT_PER_MINUTE: 300,
      MAX_STREAMS_PER_RESOURCE: 50,
      MAX_STREAMS: 10_000,
      MAX_RUNS_PER_RESOURCE: 10,
      HEADERS_TIMEOUT_MS: 10_000,
      REQUEST_TIMEOUT_MS: 30_000,
      KEEP_ALIVE_TIMEOUT_MS: 5000,
      SHUTDOWN_GRACE_MS: 25_000,
      SCHEDULER_TICK_MS: 1000,
      SCHEDULE_MIN_INTERVAL_S: 60,
      MAX_SCHEDULES_PER_RESOURCE: 50,
      DATABASE_TIMEOUT_MS: 2500,
      ALLOWED_HOSTS: [],
      ALLOWED_URL_HOSTS: [],
      CORS_ORIGINS: [],
      WEBHOOK_URLS: [],
      MASTRA_SPANS: 'on',
    });
  });

  it('reads MASTRA_SPANS: on, all or off, and refuses anything else', () => {
    expect(readServerEnv({ MASTRA_SPANS: 'all' }).MASTRA_SPANS).toBe('all');
    expect(() => readServerEnv({ MASTRA_SPANS: 'some' })).toThrow(/MASTRA_SPANS/);
  });

  it('reads the limits (0: no cap), the timeouts and the lists', () => {
    const env = readServerEnv({
      RATE_LIMIT_PER_MINUTE: '0',
      MAX_STREAMS: '7',
      HEADERS_TIMEOUT_MS: '2000',
      ALLOWED_HOSTS: ' bridge.internal , ,api.example.com',
      CORS_ORIGINS: 'https://app.example.com',
    });
    expect(env).toMatchObject({
      RATE_LIMIT_PER_MINUTE: 0,
      MAX_STREAMS: 7,
      HEADERS_TIMEOUT_MS: 2000,
      ALLOWED_HOSTS: ['bridge.internal', 'api.example.com'],
      CORS_ORIGINS: ['https://app.example.com'],
    });
    expect(() => readServerEnv({ MAX_RUNS_PER_RESOURCE: '-1' })).toThrow(/MAX_RUNS_PER_RESOURCE/);
    expect(() => readServerEnv({ REQUEST_TIMEOUT_MS: '10' })).toThrow(/REQUEST_TIMEOUT_MS/);
  });

  it('reads REDIS_PREFIX: letters, digits and _ . : -, at most 100', () => {
    expect(readServerEnv({ REDIS_PREFIX: 'app:prod-1' }).REDIS_PREFIX).toBe('app:prod-1');
    expect(() => readServerEnv({ REDIS_PREFIX: 'has space' })).toThrow(/REDIS_PREFIX/);
    expect(() => readServerEnv({ REDIS_PREFIX: '' })).toThrow(/REDIS_PREFIX/);
  });

  it('reads IDEMPOTENCY_TTL_MS as a whole number of milliseconds, and refuses anything else', () => {
    expect(readServerEnv({ IDEMPOTENCY_TTL_MS: '60000' }).IDEMPOTENCY_TTL_MS).toBe(60_000);
    expect(() => readServerEnv({ IDEMPOTENCY_TTL_MS: '1.5' })).toThrow(/IDEMPOTENCY_TTL_MS/);
    expect(() => readServerEnv({ IDEMPOTENCY_TTL_MS: '-1' })).toThrow(/IDEMPOTENCY_TTL_MS/);
  });

  it('reads the authentication variables; refuses a short secret, both secret and JWKS, and malformed API keys, never echoing a value', () => {
    const secret = 's'.repeat(32);
    const env = readServerEnv({
      AUTH_JWT_SECRET: secret,
      AUTH_ISSUER: 'https://id/',
      AUTH_AUDIENCE: 'agents',
      AUTH_RESOURCE_CLAIM: 'uid',
      AUTH_API_KEYS: 'k-0123456789abcdef:billing, k-fedcba9876543210:reports',
    });
    expect(env).toMatchObject({ AUTH_JWT_SECRET: secret, AUTH_ISSUER: 'https://id/', AUTH_AUDIENCE: 'agents', AUTH_RESOURCE_CLAIM: 'uid' });
    expect(env.AUTH_API_KEYS).toEqual({ 'k-0123456789abcdef': 'billing', 'k-fedcba9876543210': 'reports' });
    expect(readServerEnv({ AUTH_JWT_SECRET: '', AUTH_API_KEYS: '' })).not.toHaveProperty('AUTH_JWT_SECRET', '');
    expect(() => readServerEnv({ AUTH_JWT_SECRET: 'short-secret' })).toThrow(/AUTH_JWT_SECRET: must be at least 32 bytes/);
    expect(() => readServerEnv({ AUTH_JWT_SECRET: 'short-secret' })).not.toThrow(/short-secret/);
    expect(() => readServerEnv({ AUTH_JWT_SECRET: secret, AUTH_JWKS_URL: 'https://id/jwks.json' })).toThrow(/not both/);
    expect(() => readServerEnv({ AUTH_JWKS_URL: 'ftp://id/jwks.json' })).toThrow(/AUTH_JWKS_URL/);
    expect(() => readServerEnv({ AUTH_API_KEYS: 'no-resource-0123456789' })).toThrow(/key:resourceId/);
    expect(() => readServerEnv({ AUTH_API_KEYS: 'short:billing' })).toThrow(/at least 16/);
    expect(() => readServerEnv({ AUTH_API_KEYS: 'k-0123456789abcdef:a,k-0123456789abcdef:b' })).toThrow(/twice/);
    expect(() => readServerEnv({ AUTH_API_KEYS: 'short:billing' })).not.toThrow(/short:billing/);
  });
});
