/**
 * Writes docs/api.md's table of the codes each route can answer, from the route table
 * (`codesOf`). `src/http/route-codes.test.ts` fails while the table in the docs differs.
 *
 * @example
 * npx tsx scripts/route-codes.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { CODES_END, CODES_START, codesTable } from '../src/http/route-codes.js';
import { ROUTES } from '../src/http/routes/index.js';

const path = new URL('../docs/api.md', import.meta.url);
const docs = readFileSync(path, 'utf8');
const [before, rest] = docs.split(CODES_START);
const [, after] = rest.split(CODES_END);
writeFileSync(path, `${before}${CODES_START}\n${codesTable(ROUTES)}\n${CODES_END}${after}`);
