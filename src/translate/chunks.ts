import type { AgentSignalDataPart } from '@mastra/core/agent';
import type { AgentChunkType } from '@mastra/core/stream';

/** A signal echo as it arrives on a thread subscription (Mastra's chunk union lacks it). */
export type SignalEchoChunk = AgentSignalDataPart & { runId: string };

/** A `data-*` part written by a tool or processor with `writer.custom`. */
export type CustomDataChunk = { type: `data-${string}`; data: unknown; id?: string; runId?: string; transient?: boolean };

/** The chunk type of `CapturedToolResultsChunk`: the bridge's own, so it never meets a Mastra type. */
export const CAPTURED_TOOL_RESULTS = 'agui-bridge-captured-tool-results';

/** A server tool's outcome as Mastra reported it to `onStepFinish`. */
export interface CapturedToolResult {
  toolCallId: string;
  result: unknown;
  isError: boolean;
}

/**
 * The outcomes of a step's server tools, captured when they ran, which a run passes its translator
 * just before the step ends: the results of calls whose `tool-result` Mastra's stream left out.
 */
export type CapturedToolResultsChunk = { type: typeof CAPTURED_TOOL_RESULTS; results: readonly CapturedToolResult[] };

/**
 * Every chunk the translator accepts: Mastra's agent chunks widened, once, by what really arrives
 * at run time (signal echoes and custom data parts), and the captured tool results a run adds.
 */
export type MastraChunk = AgentChunkType<unknown> | SignalEchoChunk | CustomDataChunk | CapturedToolResultsChunk;

export function isSignalEcho(chunk: MastraChunk): chunk is SignalEchoChunk {
  return (chunk.type === 'data-user-message' || chunk.type === 'data-signal') && 'data' in chunk;
}

/** A pause for a human: the run ends (or its bracket does) until the call is answered. */
export function isPause(chunk: MastraChunk): chunk is Extract<MastraChunk, { type: 'tool-call-approval' | 'tool-call-suspended' }> {
  return chunk.type === 'tool-call-approval' || chunk.type === 'tool-call-suspended';
}

export function isDataChunk(chunk: MastraChunk): chunk is CustomDataChunk {
  return chunk.type.startsWith('data-') && 'data' in chunk;
}

/** The run a chunk says it belongs to. Task-manager chunks carry none at the top level. */
export function topLevelRunId(chunk: MastraChunk): string | undefined {
  return 'runId' in chunk && typeof chunk.runId === 'string' && chunk.runId ? chunk.runId : undefined;
}

/** The run a task-manager chunk names in its payload, if any. */
export function payloadRunId(chunk: MastraChunk): string | undefined {
  const payload = 'payload' in chunk ? (chunk.payload as { runId?: unknown } | undefined) : undefined;
  return typeof payload?.runId === 'string' ? payload.runId : undefined;
}

const RUN_END_TYPES: ReadonlySet<unknown> = new Set(['finish', 'error', 'abort', 'tripwire']);

/** Mastra's working-memory tool, as the model calls it. */
export const WORKING_MEMORY_TOOL = 'updateWorkingMemory';

export function endsRun(type: unknown): boolean {
  return RUN_END_TYPES.has(type);
}

/** The chunks that end a step: a run's captured tool outcomes must reach the translator before them. */
export function endsStep(chunk: MastraChunk): boolean {
  return chunk.type === 'step-finish' || chunk.type === 'finish';
}

/**
 * Mastra's error for a run of another process whose lease lapsed before its terminal chunk reached
 * this one: how the run ended is not known here, only storage can tell.
 */
export function isLostRemoteRun(chunk: MastraChunk): boolean {
  if (chunk.type !== 'error') return false;
  const error = (chunk.payload as { error?: { message?: unknown } } | undefined)?.error;
  return typeof error?.message === 'string' && error.message.includes('lost its lease before publishing a terminal event');
}
