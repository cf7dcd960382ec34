import type { AgentSignalDataPart } from '@mastra/core/agent';
import type { AgentChunkType } from '@mastra/core/stream';

/** A signal echo as it arrives on a thread subscription (Mastra's chunk union lacks it). */
export type SignalEchoChunk = AgentSignalDataPart & { runId: string };

/** A `data-*` part written by a tool or processor with `writer.custom`. */
export type CustomDataChunk = { type: `data-${string}`; data: unknown; id?: string; runId?: string; transient?: boolean };

/**
 * Every chunk the translator accepts: Mastra's agent chunks widened, once, by what really arrives
 * at run time (signal echoes and custom data parts).
 */
export type MastraChunk = AgentChunkType<unknown> | SignalEchoChunk | CustomDataChunk;

export function isSignalEcho(chunk: MastraChunk): chunk is SignalEchoChunk {
  return (chunk.type === 'data-user-message' || chunk.type === 'data-signal') && 'data' in chunk;
}

export function isDataChunk(chunk: MastraChunk): chunk is CustomDataChunk {
  return chunk.type.startsWith('data-') && 'data' in chunk;
}
