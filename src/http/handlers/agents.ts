import type { Context } from 'hono';
import { parseInput } from '../request.js';
import { PathIdSchema } from '../schemas.js';
import type { Services } from '../services.js';

/** `GET /agents` */
export async function listAgents(c: Context, s: Services): Promise<Response> {
  return c.json(await Promise.all(s.agents.entries().map(([, agent]) => s.agents.info(agent))));
}

/** `GET /agents/:agentId` */
export async function getAgent(c: Context, s: Services): Promise<Response> {
  const agentId = parseInput(PathIdSchema, c.req.param('agentId'), 'path');
  return c.json(await s.agents.info(s.agents.get(agentId)));
}
