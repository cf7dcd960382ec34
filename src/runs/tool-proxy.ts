import { inject, injectable } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import { conflict, notFound } from '../errors.js';
import { TOKENS } from '../tokens.js';

/** What a client posts for a frontend tool call. */
export interface ToolCallAnswer {
  content: unknown;
  isError?: boolean;
}

type Pending = {
  promise: Promise<ToolCallAnswer>;
  resolve: (answer: ToolCallAnswer) => void;
  reject: (error: Error) => void;
};

/** How many answered calls are remembered to tell "answered twice" (409) from "unknown" (404). */
const ANSWERED_MEMORY = 10_000;

/**
 * Frontend-tool calls waiting for the client's answer (proxy mode), keyed by the run's resource,
 * the run and the tool call: a run id is the client's, and another resource may choose the same.
 * The run's tool waits on `wait()`; `POST /runs/:runId/tool-calls/:toolCallId/result` calls
 * `answer()`. One binding in the container; the in-process one is `InProcessToolProxy`.
 *
 * @example
 * proxy.expect(runId, toolCallId, resourceId);   // when the call is streamed
 * const answer = await proxy.wait(runId, toolCallId, 'pick_color', signal, resourceId);
 * await proxy.answer(runId, toolCallId, resourceId, { content: 'teal' }); // from the HTTP route
 */
export interface ToolProxy {
  /** Opens a slot for a call the client is about to see, so an answer posted at once is not lost. */
  expect(runId: string, toolCallId: string, resourceId: string): void;
  /** Waits for the client's answer; fails after `frontendToolTimeoutMs` or when `signal` aborts. */
  wait(runId: string, toolCallId: string, toolName: string, signal: AbortSignal | undefined, resourceId: string): Promise<ToolCallAnswer>;
  /** Delivers the client's answer: unknown call (or another resource's) `404 TOOL_CALL_NOT_FOUND`, answered twice `409 CONFLICT`. */
  answer(runId: string, toolCallId: string, resourceId: string, answer: ToolCallAnswer): Promise<void>;
  /** Fails every call of the resource's run still waiting (the client left, or the run ended). */
  rejectRun(runId: string, resourceId: string, reason: string): void;
}

/**
 * Waiting calls held in this process. Entries are made by whichever side comes first, so a
 * result posted the instant the client saw `TOOL_CALL_END` is never lost.
 */
@injectable()
export class InProcessToolProxy implements ToolProxy {
  private readonly pending = new Map<string, Pending>();
  private readonly answered = new Map<string, true>();
  private readonly timeoutMs: number;

  constructor(@inject(TOKENS.Config) config: ResolvedConfig) {
    this.timeoutMs = config.frontendToolTimeoutMs;
  }

  expect(runId: string, toolCallId: string, resourceId: string): void {
    this.slot(key(resourceId, runId, toolCallId));
  }

  wait(runId: string, toolCallId: string, toolName: string, signal: AbortSignal | undefined, resourceId: string): Promise<ToolCallAnswer> {
    const k = key(resourceId, runId, toolCallId);
    const entry = this.slot(k);
    const timer = setTimeout(() => entry.reject(new Error(toolTimedOut(toolName, this.timeoutMs))), this.timeoutMs);
    const onAbort = () => entry.reject(new Error(toolCancelled(toolName)));
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    return entry.promise.finally(() => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      this.pending.delete(k);
    });
  }

  async answer(runId: string, toolCallId: string, resourceId: string, answer: ToolCallAnswer): Promise<void> {
    const k = key(resourceId, runId, toolCallId);
    const entry = this.pending.get(k);
    // Another resource's call is answered exactly like an unknown one: its key is not this caller's.
    if (this.answered.has(k)) throw conflict(`Tool call ${toolCallId} was already answered`);
    if (!entry) throw notFound('TOOL_CALL_NOT_FOUND', `No pending tool call ${toolCallId} in run ${runId}`);
    this.remember(k);
    entry.resolve(answer);
  }

  rejectRun(runId: string, resourceId: string, reason: string): void {
    const prefix = key(resourceId, runId, '');
    for (const [k, entry] of this.pending) {
      if (k.startsWith(prefix)) {
        this.pending.delete(k);
        entry.reject(new Error(reason));
      }
    }
  }

  private slot(k: string): Pending {
    let entry = this.pending.get(k);
    if (!entry) {
      let resolve!: Pending['resolve'];
      let reject!: Pending['reject'];
      const promise = new Promise<ToolCallAnswer>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      promise.catch(() => {
        // a slot nobody waits on must not become an unhandled rejection
      });
      entry = { promise, resolve, reject };
      this.pending.set(k, entry);
    }
    return entry;
  }

  private remember(k: string): void {
    this.answered.set(k, true);
    if (this.answered.size > ANSWERED_MEMORY) this.answered.delete(this.answered.keys().next().value as string);
  }
}

const key = (resourceId: string, runId: string, toolCallId: string) => `${resourceId}\0${runId}\0${toolCallId}`;

/** Why a proxied tool failed when no result came in time (every `ToolProxy` says it alike). */
export function toolTimedOut(toolName: string, timeoutMs: number): string {
  // Whole seconds would print a sub-second timeout as "0 s"; say milliseconds below one second.
  const limit = timeoutMs < 1000 ? `${timeoutMs} ms` : `${Math.round(timeoutMs / 1000)} s`;
  return `Frontend tool ${toolName} timed out: no result was posted within ${limit}`;
}

/** Why a proxied tool failed when its run's client went away. */
export const toolCancelled = (toolName: string) => `Frontend tool ${toolName} was cancelled: the client disconnected`;
