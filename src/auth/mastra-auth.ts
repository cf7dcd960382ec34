import type { RequestContext } from '@mastra/core/request-context';
import { RESOURCE_ID_KEY, requestContextValue } from '../mastra/index.js';
import type { Context } from 'hono';
import type { ResolveResourceId } from '../config.js';
import { unauthorized } from '../errors.js';
import { resourceOf } from './resource.js';

/** Options of {@link mastraAuthResource}. */
export interface MastraAuthResourceOptions<TUser> {
  /** The resource of an authenticated user. Default: the resource Mastra's `mapUserToResourceId` set, else `user.id`. */
  resourceOf?: (user: TUser) => string | undefined;
}

/**
 * A `resolveResourceId` hook for the bridge mounted in a Mastra server with Mastra's own auth
 * (`server: { auth }`): the user that auth set on the request is the resource, and a request that
 * claims another `resourceId` is refused (`403`). Mastra answers `401` itself before the bridge
 * runs; a request that reaches the bridge with no user (a route left public) is `401` here.
 *
 * @example
 * const bridge = createBridge({ resolveResourceId: mastraAuthResource() });
 * new Mastra({ agents, storage, server: { auth: new SimpleAuth({ tokens: { [token]: { id: 'alice' } } }), apiRoutes: bridge.routes() } });
 */
export function mastraAuthResource<TUser = { id?: unknown }>(options: MastraAuthResourceOptions<TUser> = {}): ResolveResourceId {
  return (c: Context, claimed: string | undefined) => {
    const context = c.get('requestContext') as RequestContext | undefined;
    const user = requestContextValue(context, 'user') as TUser | undefined;
    if (user === undefined || user === null) throw unauthorized('No authenticated user on the request');
    const mapped = requestContextValue(context, RESOURCE_ID_KEY);
    const resource = options.resourceOf ? options.resourceOf(user) : typeof mapped === 'string' && mapped ? mapped : idOf(user);
    if (!resource) throw unauthorized('The authenticated user has no id to act as');
    return resourceOf(resource, claimed);
  };
}

function idOf(user: unknown): string | undefined {
  const id = (user as { id?: unknown } | null)?.id;
  return typeof id === 'string' && id.length > 0 ? id : undefined;
}
