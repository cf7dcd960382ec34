import type { ResolveResourceId } from '../config.js';
import { apiKeyVerifier } from '../auth/api-keys.js';
import { bearerAuth } from '../auth/bearer-auth.js';
import type { TokenVerifier } from '../auth/credentials.js';
import { jwtVerifier } from '../auth/jwt.js';
import type { ServerEnv } from './env.js';
import { isLoopback } from './host-check.js';

/**
 * The standalone server's authentication from its environment: API keys (`AUTH_API_KEYS`) and
 * JWTs (`AUTH_JWT_SECRET` or `AUTH_JWKS_URL`), either or both; `undefined` when none is set (the
 * embedded demo trusts the claimed `resourceId`).
 */
export function authFromEnv(env: ServerEnv): ResolveResourceId | undefined {
  const verifiers: TokenVerifier[] = [];
  if (env.AUTH_API_KEYS) verifiers.push(apiKeyVerifier(env.AUTH_API_KEYS));
  if (env.AUTH_JWT_SECRET || env.AUTH_JWKS_URL) {
    verifiers.push(
      jwtVerifier({
        secret: env.AUTH_JWT_SECRET,
        jwksUrl: env.AUTH_JWKS_URL,
        issuer: env.AUTH_ISSUER,
        audience: env.AUTH_AUDIENCE,
        resourceClaim: env.AUTH_RESOURCE_CLAIM,
      }),
    );
  }
  return verifiers.length > 0 ? bearerAuth(...verifiers) : undefined;
}

/** The warning to print when the server is reachable from other machines with auth off, else `undefined`. */
export function exposureWarning(env: ServerEnv, authOn: boolean): string | undefined {
  if (authOn || isLoopback(env.HOST)) return undefined;
  return `HOST=${env.HOST} with authentication off: anyone who can reach this port can read and steer every thread by claiming its resourceId. Set AUTH_JWT_SECRET, AUTH_JWKS_URL or AUTH_API_KEYS (docs/security.md).`;
}
