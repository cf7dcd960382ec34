import type { Context } from 'hono';
import { inject, injectable } from 'inversify';
import type { ResolvedConfig, ResolveResourceId } from '../config.js';
import { BridgeError, unauthorized } from '../errors.js';
import { setRequestResource } from '../observability/context.js';
import { TOKENS } from '../tokens.js';

/** The resource of callers who claim none, under the default policy. */
export const DEFAULT_RESOURCE_ID = 'default';

/**
 * Decides who the caller is, through the `resolveResourceId` hook; the default trusts the claimed
 * id (body, query or `forwardedProps`) and falls back to `"default"`.
 */
@injectable()
export class ResourceResolver {
  private readonly hook?: ResolveResourceId;

  constructor(@inject(TOKENS.Config) config: ResolvedConfig) {
    this.hook = config.resolveResourceId;
  }

  /** The caller's resource; also kept on the context, for the request's log line. */
  async resolve(c: Context, claimed: string | undefined): Promise<string> {
    const resourceId = await this.decide(c, claimed);
    setRequestResource(c, resourceId);
    return resourceId;
  }

  private async decide(c: Context, claimed: string | undefined): Promise<string> {
    if (!this.hook) return claimed ?? DEFAULT_RESOURCE_ID;
    let resourceId: string | null | undefined;
    try {
      resourceId = await this.hook(c, claimed);
    } catch (error) {
      if (error instanceof BridgeError) throw error;
      throw unauthorized(error instanceof Error && error.message ? error.message : 'Unauthorized');
    }
    if (typeof resourceId !== 'string' || resourceId.length === 0) throw unauthorized();
    return resourceId;
  }
}
