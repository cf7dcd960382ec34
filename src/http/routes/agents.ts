import { z } from 'zod';
import { AgentInfoSchema } from '../../agents/agent-provider.js';
import { answer, route } from '../route.js';
import { AgentQuerySchema } from '../schemas.js';

// The `resolveResourceId` hook is the bridge's only notion of who may call it, so the agent routes
// ask it too (a rejected caller gets 401 here as on every other route); the answer itself is unused.

export const listAgents = route({
  operationId: 'listAgents',
  method: 'GET',
  path: '/agents',
  summary: 'List the agents and workflows',
  tag: 'agents',
  query: AgentQuerySchema,
  ok: { 200: { description: '`AgentInfo[]`', schema: z.array(AgentInfoSchema) } },
  uses: ['agents', 'workflows'],
  handle: async (_, s) => {
    const agents = await Promise.all(s.agents.entries().map(([, agent]) => s.agents.info(agent)));
    return answer(200, [...agents, ...s.workflows.entries().map(([, workflow]) => s.workflows.info(workflow))]);
  },
});

export const getAgent = route({
  operationId: 'getAgent',
  method: 'GET',
  path: '/agents/:agentId',
  summary: 'Describe one agent or workflow',
  tag: 'agents',
  query: AgentQuerySchema,
  ok: { 200: { description: '`AgentInfo`', schema: AgentInfoSchema } },
  errors: ['AGENT_NOT_FOUND'],
  uses: ['agents', 'workflows'],
  handle: async ({ params }, s) => {
    const workflow = s.workflows.find(params.agentId);
    return answer(200, workflow ? s.workflows.info(workflow) : await s.agents.info(s.agents.get(params.agentId)));
  },
});
