import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CODES_END, CODES_START, codesOf, codesTable, STATUS_OF } from './route-codes.js';
import { ROUTES } from './routes/index.js';

describe('the codes each route can answer', () => {
  it('are what docs/api.md lists (run `npx tsx scripts/route-codes.ts` after changing a route)', () => {
    const docs = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const listed = docs.slice(docs.indexOf(CODES_START) + CODES_START.length, docs.indexOf(CODES_END)).trim();
    expect(listed).toBe(codesTable(ROUTES));
  });

  it('add, to every route, what its flags imply: a body can be too large, a limited route limited, an idempotent one in conflict', () => {
    for (const route of ROUTES) {
      const codes = codesOf(route);
      expect(codes).toEqual(expect.arrayContaining(['INVALID_INPUT', 'UNAUTHORIZED', 'FORBIDDEN', 'INTERNAL_ERROR', 'UNAVAILABLE']));
      expect(codes.includes('PAYLOAD_TOO_LARGE'), route.path).toBe(route.body !== undefined);
      if (route.limited) expect(codes).toContain('RATE_LIMITED');
      if (route.idempotent) expect(codes).toContain('CONFLICT');
      expect(codes.every((code) => code in STATUS_OF)).toBe(true);
    }
  });
});
