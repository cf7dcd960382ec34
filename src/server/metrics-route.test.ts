import { describe, expect, it } from 'vitest';
import { bearerMatches } from './metrics-route.js';

describe('bearerMatches', () => {
  it('takes exactly the token, as a bearer token', () => {
    expect(bearerMatches('Bearer s3cret-token', 's3cret-token')).toBe(true);
    expect(bearerMatches('bearer s3cret-token', 's3cret-token')).toBe(true);
  });

  it('refuses anything else', () => {
    expect(bearerMatches(undefined, 's3cret-token')).toBe(false);
    expect(bearerMatches('', 's3cret-token')).toBe(false);
    expect(bearerMatches('s3cret-token', 's3cret-token')).toBe(false);
    expect(bearerMatches('Basic s3cret-token', 's3cret-token')).toBe(false);
    expect(bearerMatches('Bearer s3cret-toke', 's3cret-token')).toBe(false);
    expect(bearerMatches('Bearer s3cret-token2', 's3cret-token')).toBe(false);
    expect(bearerMatches('Bearer ', 's3cret-token')).toBe(false);
  });
});
