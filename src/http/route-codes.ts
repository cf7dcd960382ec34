import type { ErrorStatus, Route, RouteErrorCode } from './route.js';

/** The status each code is answered with (`BridgeError`): one each. */
export const STATUS_OF: Record<RouteErrorCode, ErrorStatus> = {
  INVALID_INPUT: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  AGENT_NOT_FOUND: 404,
  THREAD_NOT_FOUND: 404,
  RUN_NOT_FOUND: 404,
  TOOL_CALL_NOT_FOUND: 404,
  SCHEDULE_NOT_FOUND: 404,
  CONFLICT: 409,
  LIMIT_REACHED: 409,
  THREAD_BUSY: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  MEMORY_NOT_CONFIGURED: 500,
  INTERNAL_ERROR: 500,
  UNAVAILABLE: 503,
};

/** The codes answered with `status`. */
export function codesWith(status: ErrorStatus): RouteErrorCode[] {
  return (Object.keys(STATUS_OF) as RouteErrorCode[]).filter((code) => STATUS_OF[code] === status);
}

/** What any request may meet: a bad input, the caller refused, a defect, a dependency away. */
const EVERY_ROUTE: readonly RouteErrorCode[] = ['INVALID_INPUT', 'UNAUTHORIZED', 'FORBIDDEN', 'INTERNAL_ERROR', 'UNAVAILABLE'];

/**
 * Every code `route` can answer, in the order of `STATUS_OF`: those of every route, those its
 * flags add, and those it declares (`errors`).
 *
 * @example
 * codesOf(getThread); // ['INVALID_INPUT', 'UNAUTHORIZED', 'FORBIDDEN', 'AGENT_NOT_FOUND', 'THREAD_NOT_FOUND', …]
 */
export function codesOf(route: Route): RouteErrorCode[] {
  const codes = new Set<RouteErrorCode>([...EVERY_ROUTE, ...(route.errors ?? [])]);
  if (route.body) codes.add('PAYLOAD_TOO_LARGE');
  if (route.limited) codes.add('RATE_LIMITED');
  if (route.idempotent) codes.add('CONFLICT');
  return (Object.keys(STATUS_OF) as RouteErrorCode[]).filter((code) => codes.has(code));
}

/** The statuses of `codesOf(route)`, ascending. */
export function statusesOf(route: Route): ErrorStatus[] {
  return [...new Set(codesOf(route).map((code) => STATUS_OF[code]))].sort((a, b) => a - b);
}

/** Where docs/api.md holds `codesTable` (`scripts/route-codes.ts` writes it). */
export const CODES_START = '<!-- route codes: written by scripts/route-codes.ts -->';
export const CODES_END = '<!-- end of route codes -->';

/** docs/api.md's table of the codes each route can answer (beyond those of every route), from the route table. */
export function codesTable(routes: readonly Route[]): string {
  const rows = routes.map((route) => {
    const own = codesOf(route).filter((code) => !EVERY_ROUTE.includes(code));
    return `| ${route.method} | \`${route.path}\` | ${own.map((code) => `${STATUS_OF[code]} \`${code}\``).join(', ') || '–'} |`;
  });
  return ['| method | path | beyond 400, 401, 403, 500 `INTERNAL_ERROR` and 503 |', '|---|---|---|', ...rows].join('\n');
}
