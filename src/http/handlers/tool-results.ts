import type { Context } from 'hono';
import { parseBody, parseInput, pathParam } from '../request.js';
import { AgentQuerySchema, ToolResultBodySchema } from '../schemas.js';
import type { Services } from '../services.js';

/** `POST /runs/:runId/tool-calls/:toolCallId/result`: a frontend tool's answer (proxy mode). */
export async function postToolResult(c: Context, s: Services): Promise<Response> {
  const runId = pathParam(c, 'runId');
  const toolCallId = pathParam(c, 'toolCallId');
  const body = await parseBody(c, ToolResultBodySchema, s.config.maxBodyBytes);
  // Only the resource that started the run may answer its calls.
  const resourceId = await s.resources.resolve(c, parseInput(AgentQuerySchema, c.req.query(), 'query').resourceId);
  await s.proxy.answer(runId, toolCallId, resourceId, { content: body.content, isError: body.isError });
  return c.json({ accepted: true }, 202);
}
