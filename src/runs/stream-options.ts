import type { RunAgentInput } from '@ag-ui/core';
import { requestContext } from '../mastra/index.js';
import type { LevelGauge } from '../observability/metrics.js';
import { frontendToolOptions } from './frontend-tools.js';
import type { ToolProxy } from './tool-proxy.js';

/** The request-context key under which tools find the AG-UI `context`, `state` and `forwardedProps`. */
export const AGUI_CONTEXT_KEY = 'ag-ui';

/**
 * What a run's Mastra options are made of that is plain data: the run's input as the client gave
 * it, and what the bridge decided for it. It can travel to another process, which builds the same
 * options there (a resume where the run stopped: `Resumer`).
 */
export interface RunShape {
  /** AG-UI types `state` and `forwardedProps` as `any`; read here as what they are: unknown JSON. */
  input: Pick<RunAgentInput, 'threadId' | 'runId' | 'context' | 'tools'> & { state?: unknown; forwardedProps?: unknown };
  resourceId: string;
  frontendToolMode: 'proxy' | 'return';
  /** Stored in memory (absent: a run without memory). */
  memory?: { options?: Record<string, unknown>; savePerStep: boolean };
}

/** What a run's options hold that lives in the process reading the run. */
export interface RunLive {
  signal: AbortSignal;
  onStepFinish: (step: unknown) => void;
  proxy: ToolProxy;
  waiting?: LevelGauge;
}

/**
 * Mastra's stream options for a run: request context, memory, abort signal, step hook, frontend tools.
 */
export function streamOptions(
  { input, resourceId, frontendToolMode, memory }: RunShape,
  { signal, onStepFinish, proxy, waiting }: RunLive,
): Record<string, unknown> {
  return {
    // What tools and processors may read of the AG-UI input: `requestContext.get('ag-ui')`.
    requestContext: requestContext([[AGUI_CONTEXT_KEY, { context: input.context ?? [], state: input.state, forwardedProps: input.forwardedProps }]]),
    ...(memory && { memory: { thread: input.threadId, resource: resourceId, ...(memory.options && { options: memory.options }) } }),
    // Each finished step is stored at once: a crash loses at most the step in progress.
    ...(memory?.savePerStep && { savePerStep: true }),
    abortSignal: signal,
    onStepFinish,
    ...(input.tools?.length && frontendToolOptions(input.tools, { runId: input.runId, resourceId, proxy, signal, waiting }, frontendToolMode)),
  };
}
