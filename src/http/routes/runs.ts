import { EventType, type Event } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import type { PreparedRun } from '../../runs/prepared-run.js';
import { invalidInput } from '../../errors.js';
import type { BridgeLogger } from '../../logger.js';
import { loggedRunFailure } from '../../runs/run-failure.js';
import { requestId } from '../../observability/context.js';
import { isRunEnd } from '../../translate/close-run.js';
import { encoderFor, EventStream, nodeResponseOf } from '../../sse/event-stream.js';
import { AcceptedSchema, RunEventSchema } from '../answers.js';
import { internalErrorMessage } from '../errors.js';
import { answer, route } from '../route.js';
import { AgentQuerySchema, ForwardedPropsSchema, RunIdsSchema, ToolResultBodySchema } from '../schemas.js';
import { messageUrlDetails } from '../url-policy.js';

/**
 * `POST /run`'s body: AG-UI's `RunAgentInput`, with the `forwardedProps` the bridge reads, and the
 * bounds on the ids it stores (`RunIdsSchema`), checked once the shape is right.
 */
const RunBodySchema = RunAgentInputSchema.extend({ forwardedProps: ForwardedPropsSchema.nullish() }).superRefine((input, ctx) => {
  const ids = RunIdsSchema.safeParse(input);
  for (const issue of ids.success ? [] : ids.error.issues) ctx.addIssue({ ...issue, code: 'custom', message: issue.message });
});

/** `POST /run`: one AG-UI run, streamed. Everything refusable is refused before the stream opens. */
export const runAgent = route({
  operationId: 'runAgent',
  method: 'POST',
  path: '/run',
  summary: 'Run an agent or a workflow and stream one AG-UI run',
  tag: 'runs',
  // `?agentId=` names the agent for a client that cannot set `forwardedProps` (an `HttpAgent` per agent, as CopilotKit's runtime registers them).
  query: AgentQuerySchema,
  body: RunBodySchema,
  example: {
    threadId: 't1',
    runId: 'r1',
    messages: [{ id: 'm1', role: 'user', content: 'hello' }],
    tools: [],
    context: [],
    state: {},
    forwardedProps: { agentId: 'demo' },
  },
  claim: ({ body, query }) => {
    const [props, q] = [
      (body as { forwardedProps?: { resourceId?: string; agentId?: string } | null }).forwardedProps ?? {},
      (query ?? {}) as { resourceId?: string; agentId?: string },
    ];
    return { resourceId: props.resourceId ?? q.resourceId, agentId: props.agentId ?? q.agentId };
  },
  ok: {
    200: {
      description: 'One run: `RUN_STARTED` first, exactly one `RUN_FINISHED` or `RUN_ERROR` last.',
      events: { name: 'RunEvent', schema: RunEventSchema },
    },
  },
  errors: ['AGENT_NOT_FOUND', 'THREAD_NOT_FOUND', 'RUN_NOT_FOUND', 'THREAD_BUSY', 'CONFLICT'],
  limited: true,
  startsWork: true,
  uses: ['config', 'limits', 'runs', 'urlPolicy', 'workflowRuns', 'workflows'],
  handle: async ({ c, query, body: input, resourceId }, s) => {
    const refusedUrls = messageUrlDetails(input.messages, s.urlPolicy);
    if (refusedUrls.length > 0) throw invalidInput('Input messages name URLs the server may not fetch', refusedUrls);
    const props = input.forwardedProps ?? {};
    // A run slot of the resource from here until the stream ends (`limits.runsPerResource`).
    const release = s.limits.startRun(resourceId);
    const agentId = props.agentId ?? query.agentId;
    const options = {
      agentId,
      resourceId,
      memoryOptions: props.memoryOptions,
      structuredOutput: props.structuredOutput,
      frontendToolMode: props.frontendToolMode ?? s.config.frontendToolMode,
      multitask: props.multitask ?? 'enqueue',
    } as const;
    // An id that names a workflow runs the workflow (docs/workflows.md); else an agent.
    const workflow = s.workflows.find(agentId);
    const run = await (workflow ? s.workflowRuns.prepare(workflow, input, options) : s.runs.prepare(input, options)).catch((error: unknown) => {
      release();
      throw error;
    });
    const out = new EventStream(encoderFor(c.req.header('accept')), {}, nodeResponseOf(c.env));
    const abort = new AbortController();
    out.onCancel(() => abort.abort());
    void pump(out, run, abort.signal, { threadId: input.threadId, runId: input.runId, requestId: requestId(c) }, s.config.logger).finally(release);
    return out.response;
  },
});

/** Writes the run's events; whatever escapes the run still ends the stream with `RUN_ERROR`. */
async function pump(
  out: EventStream,
  run: PreparedRun,
  signal: AbortSignal,
  { threadId, runId, requestId }: { threadId: string; runId: string; requestId?: string },
  logger: BridgeLogger,
): Promise<void> {
  let last: Event | undefined;
  const write = (batch: Event[]) => {
    out.send(batch);
    last = batch[batch.length - 1] ?? last;
    // Only a client that is behind makes the run wait: an await per batch costs more than the batch.
    return out.backlogged ? out.ready() : undefined;
  };
  try {
    await run.stream(write, signal);
  } catch (error) {
    const { message, code } = loggedRunFailure(logger, `Run ${runId} on thread ${threadId}`, error, 'INTERNAL_ERROR');
    // A defect's own message is for the log: the client gets the request id to quote.
    const told = code === 'UNAVAILABLE' ? message : internalErrorMessage(requestId);
    if (!last || !isRunEnd(last)) out.send([{ type: EventType.RUN_ERROR, message: told, code }]);
  } finally {
    out.close();
  }
}

/** `POST /runs/:runId/tool-calls/:toolCallId/result`: a frontend tool's answer (proxy mode); only the resource that started the run may answer its calls. */
export const postToolResult = route({
  operationId: 'postToolResult',
  method: 'POST',
  path: '/runs/:runId/tool-calls/:toolCallId/result',
  summary: "Answer a frontend tool call (proxy mode) of the caller's run",
  tag: 'runs',
  query: AgentQuerySchema,
  body: ToolResultBodySchema,
  example: { content: { color: 'teal' } },
  ok: { 202: { description: '`{ accepted: true }`', schema: AcceptedSchema } },
  errors: ['TOOL_CALL_NOT_FOUND', 'CONFLICT'],
  limited: true,
  startsWork: true,
  uses: ['proxy'],
  handle: async ({ params, body, resourceId }, s) => {
    await s.proxy.answer(params.runId, params.toolCallId, resourceId, { content: body.content, isError: body.isError });
    return answer(202, { accepted: true as const });
  },
});
