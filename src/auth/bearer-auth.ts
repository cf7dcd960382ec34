import type { Context } from 'hono';
import type { ResolveResourceId } from '../config.js';
import { unauthorized } from '../errors.js';
import { apiKeyVerifier } from './api-keys.js';
import { bearerToken, type TokenVerifier } from './credentials.js';
import { jwtVerifier, type JwtOptions } from './jwt.js';
import { resourceOf } from './resource.js';

/**
 * A `resolveResourceId` hook that requires a bearer token (see `bearerToken`) and asks each
 * verifier in turn: the first to answer names the resource. A `resourceId` the request claims
 * must be that resource (`403` otherwise); no token, or one no verifier accepts, is `401`.
 *
 * @example
 * createBridge({ resolveResourceId: bearerAuth(apiKeyVerifier(keys), jwtVerifier({ secret })) });
 */
export function bearerAuth(...verifiers: TokenVerifier[]): BearerAuth {
  // One verification per request: `authenticate` runs before the handler, the hook within it.
  const verified = new WeakMap<Request, Promise<string>>();
  const verify = async (c: Context) => {
    const token = bearerToken(c);
    if (token === undefined) throw unauthorized('A bearer token is required');
    for (const verifier of verifiers) {
      const resource = await verifier(token);
      if (resource !== undefined) return resource;
    }
    throw unauthorized('The token is not accepted', true);
  };
  const authenticate = (c: Context) => {
    let subject = verified.get(c.req.raw);
    if (!subject) verified.set(c.req.raw, (subject = verify(c)));
    return subject;
  };
  return Object.assign(async (c: Context, claimed: string | undefined) => resourceOf(await authenticate(c), claimed), { authenticate });
}

/**
 * A `resolveResourceId` hook that can also check the credentials alone, before the request is
 * read: the bridge calls `authenticate` first, so that a caller without valid credentials gets
 * `401` on every route, whatever it sent.
 */
export interface BearerAuth extends ResolveResourceId {
  authenticate(c: Context): Promise<string>;
}

/**
 * The credential check to run before a route's handler: the hook's `authenticate` when it has one
 * (`bearerAuth`, `jwtAuth`, `apiKeyAuth`), else nothing (a hook of the caller's runs in the handler).
 */
export function authenticatorOf(hook: ResolveResourceId | undefined): ((c: Context) => Promise<unknown>) | undefined {
  const authenticate = (hook as Partial<BearerAuth> | undefined)?.authenticate;
  return typeof authenticate === 'function' ? authenticate : undefined;
}

/**
 * JWT authentication for `createBridge`: the token's subject (or `resourceClaim`) is the resource.
 *
 * @example
 * createBridge({ resolveResourceId: jwtAuth({ jwksUrl: 'https://id.example.com/.well-known/jwks.json', audience: 'agents' }) });
 */
export const jwtAuth = (options: JwtOptions): BearerAuth => bearerAuth(jwtVerifier(options));

/**
 * API-key authentication for `createBridge`: `keys` maps each key to its resource.
 *
 * @example
 * createBridge({ resolveResourceId: apiKeyAuth({ keys: { [process.env.BILLING_KEY!]: 'billing-service' } }) });
 */
export const apiKeyAuth = (options: { keys: Readonly<Record<string, string>> }): BearerAuth => bearerAuth(apiKeyVerifier(options.keys));
