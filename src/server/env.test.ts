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
    });
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
});
