import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { BridgeError, unauthorized, unavailable } from '../errors.js';
import type { TokenVerifier } from './credentials.js';

/** Options of {@link jwtVerifier}: `secret` or `jwksUrl`, not both. */
export interface JwtOptions {
  /** HS256 shared secret, at least 32 bytes. */
  secret?: string;
  /** A JWKS endpoint with the RS256 / ES256 public keys: cached, fetched again when a token names an unknown `kid`. */
  jwksUrl?: string | URL;
  /** The `iss` every token must carry. */
  issuer?: string;
  /** An `aud` every token must carry. */
  audience?: string;
  /** The claim that names the resource. Default `sub`. */
  resourceClaim?: string;
  /** Leeway on `exp` and `nbf`, in seconds. Default 5. */
  clockToleranceSec?: number;
  /** The least time between two JWKS fetches for unknown `kid`s, in ms (jose's cooldown). Default 30000. */
  jwksCooldownMs?: number;
}

const MIN_SECRET_BYTES = 32;
/** Asymmetric algorithms only with a JWKS: an HS256 token "signed" with a public key is refused. */
const JWKS_ALGORITHMS = ['RS256', 'ES256'];

/**
 * Verifies JSON Web Tokens: signature (HS256 with `secret`, or RS256 / ES256 with keys from
 * `jwksUrl`; `alg: none` and any other algorithm are refused), `exp` and `nbf` when present,
 * `iss` and `aud` when configured. Answers the token's resource (`resourceClaim`).
 *
 * @example
 * const verify = jwtVerifier({ jwksUrl: 'https://id.example.com/.well-known/jwks.json', issuer: 'https://id.example.com/' });
 * await verify(token); // 'user-42'
 */
export function jwtVerifier(options: JwtOptions): TokenVerifier {
  const key = verificationKey(options);
  const algorithms = options.secret ? ['HS256'] : JWKS_ALGORITHMS;
  const claim = options.resourceClaim ?? 'sub';
  const verifyOptions = { algorithms, issuer: options.issuer, audience: options.audience, clockTolerance: options.clockToleranceSec ?? 5 };
  return async (token) => {
    let payload: JWTPayload;
    try {
      // Two calls for jose's two overloads (a key, or a key lookup), the same options.
      ({ payload } = await (typeof key === 'function' ? jwtVerify(token, key, verifyOptions) : jwtVerify(token, key, verifyOptions)));
    } catch (error) {
      throw refusal(error);
    }
    const resource = payload[claim];
    if (typeof resource !== 'string' || resource.length === 0 || resource.length > 512) {
      throw unauthorized(`The token's "${claim}" claim must name the resource (a string of 1 to 512 characters)`, true);
    }
    return resource;
  };
}

function verificationKey(options: JwtOptions): Uint8Array | JWTVerifyGetKey {
  if (options.secret && options.jwksUrl) throw new Error('JWT auth: give secret or jwksUrl, not both');
  if (options.jwksUrl) {
    return createRemoteJWKSet(new URL(options.jwksUrl), { cooldownDuration: options.jwksCooldownMs ?? 30_000, timeoutDuration: 5000 });
  }
  const secret = new TextEncoder().encode(options.secret ?? '');
  if (secret.byteLength < MIN_SECRET_BYTES) throw new Error(`JWT auth: the HS256 secret must be at least ${MIN_SECRET_BYTES} bytes`);
  return secret;
}

/** What a refused token is answered with: what was wrong, never the token. */
function refusal(error: unknown): BridgeError {
  if (error instanceof BridgeError) return error;
  if (error instanceof errors.JWKSTimeout || (error instanceof Error && !(error instanceof errors.JOSEError))) {
    // The key server did not answer (a network failure is a plain error): not the caller's fault.
    return unavailable('The token keys could not be fetched');
  }
  if (error instanceof errors.JWTExpired) return unauthorized('The token has expired', true);
  if (error instanceof errors.JWTClaimValidationFailed) return unauthorized(`The token's "${error.claim}" claim is not accepted (${error.reason})`, true);
  if (error instanceof errors.JOSEAlgNotAllowed) return unauthorized('The token is signed with an algorithm that is not accepted', true);
  if (error instanceof errors.JWSSignatureVerificationFailed) return unauthorized('The token signature is invalid', true);
  if (error instanceof errors.JWKSNoMatchingKey) return unauthorized('The token is signed with an unknown key', true);
  return unauthorized('The token is malformed or not accepted', true);
}
