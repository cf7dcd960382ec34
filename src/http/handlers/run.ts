import { EventType, type Event } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import type { Context } from 'hono';
import type { PreparedRun } from '../../runs/run-service.js';
import { invalidInput } from '../../errors.js';
import { errorMessage } from '../../translate/values.js';
import { runFailure } from '../../translate/failure.js';
import { requestId } from '../../observability/context.js';
import { internalErrorMessage } from '../errors.js';
import { encoderFor, EventStream } from '../../sse/event-stream.js';
import { parseInput, readJsonBody } from '../request.js';
import { ForwardedPropsSchema, RunIdsSchema } from '../schemas.js';
import type { Services } from '../services.js';
import { messageUrlDetails } from '../url-policy.js';

const isTerminal = (event: Event | undefined) => event?.type === EventType.RUN_FINISHED || event?.type === EventType.RUN_ERROR;

/** `POST /run`: one AG-UI run, streamed. Everything refusable is refused before the stream opens. */
export async function runAgent(c: Context, s: Services): Promise<Response> {
  const input = parseInput(RunAgentInputSchema, await readJsonBody(c, s.config.maxBodyBytes), 'body');
  parseInput(RunIdsSchema, input, 'body');
  const refusedUrls = messageUrlDetails(input.messages, s.urlPolicy);
  if (refusedUrls.length > 0) throw invalidInput('Input messages name URLs the server may not fetch', refusedUrls);
  const props = parseInput(ForwardedPropsSchema, input.forwardedProps ?? {}, 'body', 'forwardedProps');
  const resourceId = await s.resources.resolve(c, props.resourceId);
  // A run slot of the resource from here until the stream ends (`limits.runsPerResource`).
  const release = s.limits.startRun(resourceId);
  const run = await s.runs
    .prepare(input, {
      agentId: props.agentId,
      resourceId,
      memoryOptions: props.memoryOptions,
      structuredOutput: props.structuredOutput,
      frontendToolMode: props.frontendToolMode ?? s.config.frontendToolMode,
    })
    .catch((error: unknown) => {
      release();
      throw error;
    });
  const out = new EventStream(encoderFor(c.req.header('accept')));
  const abort = new AbortController();
  out.onCancel(() => abort.abort());
  void pump(out, run, abort.signal, { threadId: input.threadId, runId: input.runId, requestId: requestId(c) }, s).finally(release);
  return out.response;
}

/** Writes the run's events; whatever escapes the run still ends the stream with `RUN_ERROR`. */
async function pump(
  out: EventStream,
  run: PreparedRun,
  signal: AbortSignal,
  { threadId, runId, requestId }: { threadId: string; runId: string; requestId?: string },
  s: Services,
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
    const { message, code } = runFailure(error, 'INTERNAL_ERROR');
    if (code === 'UNAVAILABLE') s.config.logger.warn(`Run ${runId} on thread ${threadId} cut by an outage: ${errorMessage(error)}`);
    else s.config.logger.error(`Run ${runId} on thread ${threadId} broke: ${errorMessage(error)}`, { stack: (error as Error)?.stack });
    // A defect's own message is for the log: the client gets the request id to quote.
    const told = code === 'UNAVAILABLE' ? message : internalErrorMessage(requestId);
    if (!isTerminal(last)) out.send([{ type: EventType.RUN_ERROR, message: told, code }]);
  } finally {
    out.close();
  }
}
