import type { Context } from 'hono';
import { parseInput, pathParam } from '../request.js';
import { AgentQuerySchema } from '../schemas.js';
import type { Services } from '../services.js';

/**
 * The `resolveResourceId` hook is the bridge's only notion of who may call it, so the agent routes
 * ask it too (a rejected caller gets 401 here as on every other route); the answer itself is unused.
 */
async function authorize(c: Context, s: Services): Promise<void> {
  await s.resources.resolve(c, parseInput(AgentQuerySchema, c.req.query(), 'query').resourceId);
}

/** `GET /agents` */
export async function listAgents(c: Context, s: Services): Promise<Response> {
  await authorize(c, s);
  return c.json(await Promise.all(s.agents.entries().map(([, agent]) => s.agents.info(agent))));
}

/** `GET /agents/:agentId` */
export async function getAgent(c: Context, s: Services): Promise<Response> {
  const agentId = pathParam(c, 'agentId');
  await authorize(c, s);
  return c.json(await s.agents.info(s.agents.get(agentId)));
}
