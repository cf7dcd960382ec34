import { z } from 'zod';
import { AgentInfoSchema } from '../answers.js';
import { answer, route } from '../route.js';
import { AgentQuerySchema } from '../schemas.js';

// The `resolveResourceId` hook is the bridge's only notion of who may call it, so the agent routes
// ask it too (a rejected caller gets 401 here as on every other route); the answer itself is unused.

/** `GET /agents` */
export const listAgents = route({
  method: 'GET',
  path: '/agents',
  summary: 'List the agents',
  tag: 'agents',
  query: AgentQuerySchema,
  ok: { 200: { description: '`AgentInfo[]`', schema: z.array(AgentInfoSchema) } },
  handle: async (_, s) => answer(200, await Promise.all(s.agents.entries().map(([, agent]) => s.agents.info(agent)))),
});

/** `GET /agents/:agentId` */
export const getAgent = route({
  method: 'GET',
  path: '/agents/:agentId',
  summary: 'Describe one agent',
  tag: 'agents',
  query: AgentQuerySchema,
  ok: { 200: { description: '`AgentInfo`', schema: AgentInfoSchema } },
  errors: [404],
  handle: async ({ params }, s) => answer(200, await s.agents.info(s.agents.get(params.agentId))),
});
