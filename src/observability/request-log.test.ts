import { describe, expect, it } from 'vitest';
import { requestIdFrom } from './request-log.js';

describe('requestIdFrom', () => {
  it('keeps a short id of safe characters', () => {
    expect(requestIdFrom('req-42')).toBe('req-42');
    expect(requestIdFrom('a1b2.c3:d4_e5')).toBe('a1b2.c3:d4_e5');
  });

  it('makes a new id for none, a long one, or one with unsafe characters', () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    expect(requestIdFrom(undefined)).toMatch(uuid);
    expect(requestIdFrom('')).toMatch(uuid);
    expect(requestIdFrom('x'.repeat(65))).toMatch(uuid);
    expect(requestIdFrom('a b')).toMatch(uuid);
    expect(requestIdFrom('forged\n{"level":50}')).toMatch(uuid);
    expect(requestIdFrom('<script>')).toMatch(uuid);
  });
});
