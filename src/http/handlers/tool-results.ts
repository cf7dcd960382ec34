import type { Context } from 'hono';
import { parseBody, parseInput } from '../request.js';
import { PathIdSchema, ToolResultBodySchema } from '../schemas.js';
import type { Services } from '../services.js';

/** `POST /runs/:runId/tool-calls/:toolCallId/result`: a frontend tool's answer (proxy mode). */
export async function postToolResult(c: Context, s: Services): Promise<Response> {
  const runId = parseInput(PathIdSchema, c.req.param('runId'), 'path');
  const toolCallId = parseInput(PathIdSchema, c.req.param('toolCallId'), 'path');
  const body = await parseBody(c, ToolResultBodySchema, s.config.maxBodyBytes);
  s.proxy.answer(runId, toolCallId, { content: body.content, isError: body.isError });
  return c.json({ accepted: true }, 202);
}
