import { createHash } from 'node:crypto';
import type { TokenVerifier } from './credentials.js';

const digest = (key: string) => createHash('sha256').update(key).digest('base64');

/**
 * Verifies API keys for server-to-server callers: each key stands for one resource. Keys are
 * kept and looked up as SHA-256 digests, so a lookup's timing says nothing about a key's bytes.
 * Answers `undefined` for a token that is not one of the keys (another verifier may know it).
 *
 * @example
 * const verify = apiKeyVerifier({ 'k-3f9a…': 'billing-service' });
 * await verify('k-3f9a…'); // 'billing-service'
 */
export function apiKeyVerifier(keys: Readonly<Record<string, string>>): TokenVerifier {
  const byDigest = new Map(Object.entries(keys).map(([key, resource]) => [digest(key), resource]));
  return async (token) => byDigest.get(digest(token));
}

/**
 * Reads `key:resourceId` pairs, comma-separated (`AUTH_API_KEYS`). Throws on a pair without both
 * parts, or a key given twice.
 *
 * @example
 * parseApiKeys('k1:billing,k2:reports'); // { k1: 'billing', k2: 'reports' }
 */
export function parseApiKeys(text: string): Record<string, string> {
  const keys: Record<string, string> = {};
  for (const pair of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const at = pair.indexOf(':');
    const [key, resource] = [pair.slice(0, at), pair.slice(at + 1)];
    if (at <= 0 || resource.length === 0) throw new Error('each API key must be written key:resourceId');
    if (key.length < 16) throw new Error('each API key must be at least 16 characters');
    if (Object.hasOwn(keys, key)) throw new Error('an API key is given twice');
    keys[key] = resource;
  }
  return keys;
}
