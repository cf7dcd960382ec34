import type { Context } from 'hono';
import { unauthorized } from '../errors.js';

/** Checks a bearer token: its resource, `undefined` when the token is not its kind, or a thrown `BridgeError`. */
export type TokenVerifier = (token: string) => Promise<string | undefined>;

/** The one route a token may come in the query on: a browser `EventSource` cannot send headers. */
const QUERY_TOKEN_ROUTE = /\/threads\/:threadId\/events$/;

/**
 * The bearer credential of a request: `Authorization: Bearer <token>`, or `?access_token=` on
 * `GET …/threads/:threadId/events` only. `undefined` when none was sent; a malformed header, or an
 * `access_token` on any other route, is refused (`401`).
 *
 * @example
 * const token = bearerToken(c);
 * if (!token) throw unauthorized('A bearer token is required');
 */
export function bearerToken(c: Context): string | undefined {
  const header = c.req.header('authorization');
  const query = c.req.query('access_token');
  if (header !== undefined) {
    const token = bearerIn(header);
    if (token === undefined) throw unauthorized('Authorization must be "Bearer <token>"', true);
    return token;
  }
  if (query === undefined) return undefined;
  if (c.req.method !== 'GET' || !QUERY_TOKEN_ROUTE.test(c.req.routePath)) {
    throw unauthorized('access_token is accepted on the events stream only: send "Authorization: Bearer <token>"', true);
  }
  if (query.length === 0) throw unauthorized('access_token is empty', true);
  return query;
}

/**
 * The token of an `Authorization: Bearer <token>` header, or `undefined` for any other header.
 *
 * @example
 * bearerIn('Bearer abc'); // 'abc'
 * bearerIn('Basic abc');  // undefined
 */
export function bearerIn(header: string | undefined): string | undefined {
  return /^Bearer +(\S+) *$/i.exec(header ?? '')?.[1];
}
