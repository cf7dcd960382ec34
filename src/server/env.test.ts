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
    });
  });

  it('reads IDEMPOTENCY_TTL_MS as a whole number of milliseconds, and refuses anything else', () => {
    expect(readServerEnv({ IDEMPOTENCY_TTL_MS: '60000' }).IDEMPOTENCY_TTL_MS).toBe(60_000);
    expect(() => readServerEnv({ IDEMPOTENCY_TTL_MS: '1.5' })).toThrow(/IDEMPOTENCY_TTL_MS/);
    expect(() => readServerEnv({ IDEMPOTENCY_TTL_MS: '-1' })).toThrow(/IDEMPOTENCY_TTL_MS/);
  });
});
