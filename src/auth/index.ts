export { apiKeyVerifier, parseApiKeys } from './api-keys.js';
export { apiKeyAuth, bearerAuth, jwtAuth, type BearerAuth } from './bearer-auth.js';
export type { TokenVerifier } from './credentials.js';
export { bearerToken } from './credentials.js';
export { jwtVerifier, type JwtOptions } from './jwt.js';
export { mastraAuthResource, type MastraAuthResourceOptions } from './mastra-auth.js';
