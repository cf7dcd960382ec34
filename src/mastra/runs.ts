import type { Tool } from '@ag-ui/core';
import type { Mastra } from '@mastra/core';
import { DEFAULT_TOOL_DECLINE_REASON, type Agent } from '@mastra/core/agent';
import type { MessageListInput } from '@mastra/core/agent/message-list';
import { EventEmitterPubSub, type EventCallback, type LeaseProvider } from '@mastra/core/events';
import { RequestContext } from '@mastra/core/request-context';
import { createTool } from '@mastra/core/tools';

/**
 * The door into Mastra's runs: starting one, continuing a suspended call, what is suspended and
 * what streams on a thread, stopping a run, and the tools and request context a run is given.
 * Mastra types `stream` with overloads keyed on output schemas that the bridge's options cannot
 * name, so each call is converted here, once. A run holds its thread through a lease of Mastra's
 * pub/sub, whose type has no lease methods: a pub/sub that keeps leases (Redis in scale-out,
 * Mastra's own in one process) adds them, so the check for them is made here, once, too.
 *
 * @example
 * const output = await streamRun(agent, messages, { memory: { thread, resource }, runId });
 * for await (const chunk of output.fullStream) translator.chunk(chunk);
 */

/** A thread, as Mastra's run and signal methods take it. */
export interface ThreadTarget {
  resourceId: string;
  threadId: string;
}

/** The thread alone, without what a scope adds to it (its agent): what Mastra's thread APIs, and a request to another process, take. */
export const threadTarget = ({ resourceId, threadId }: ThreadTarget): ThreadTarget => ({ resourceId, threadId });

/** A thread as Mastra lists its active runs: the resource may be unknown. */
export type ThreadOfRun = Pick<ThreadTarget, 'threadId'> & Partial<Pick<ThreadTarget, 'resourceId'>>;

/** The reason Mastra gives a declined tool call when none is given. */
export const DECLINE_REASON = DEFAULT_TOOL_DECLINE_REASON;

/** A Mastra run's output, as far as its end goes: `_waitUntilFinished` is internal, but what Mastra itself waits on. */
export interface FinishingOutput {
  _waitUntilFinished?(): Promise<void>;
}

/**
 * Resolves when Mastra is done with a run's output: its answer stored, after the terminal chunk a
 * reader stops at. The one place the bridge reaches for Mastra's internal wait (it reads nothing).
 */
export function outputFinished(output: FinishingOutput): Promise<void> {
  return output._waitUntilFinished?.() ?? Promise.resolve();
}

/** What the bridge reads of the output of a run a signal woke (Mastra streams the run itself). */
export interface WokenOutput extends FinishingOutput {
  readonly status: string;
  /** Set when a processor stopped the run (`abort`); the step it blocked is the last of `steps`. */
  readonly tripwire?: unknown;
  /** Why the run failed, when it did. */
  readonly error?: unknown;
  readonly messageId?: string;
  readonly steps?: Promise<ReadonlyArray<{ content: ReadonlyArray<{ type?: unknown; text?: unknown }> }>>;
}

/** Options of a run, built per request: memory, request context, abort signal, step hook, tools. */
export type MastraRunOptions = Record<string, unknown>;

/** What the bridge reads of a run: its chunks, and its end (`outputFinished`). */
export interface RunOutput extends FinishingOutput {
  fullStream: AsyncIterable<unknown>;
}

/** Starts a run on `messages` (Mastra's `stream`, whose overloads split on `structuredOutput`). */
export function streamRun(agent: Agent, messages: MessageListInput, options: MastraRunOptions): Promise<RunOutput> {
  return agent.stream(messages, options as never);
}

/**
 * Starts a run with no new input, its memory the thread's: its prompt ends with the stored
 * messages no run answered, which it answers. Stored step by step, as a `/run` is.
 */
export function continueThread(agent: Agent, thread: ThreadTarget, runId: string): Promise<RunOutput & WokenOutput> {
  return agent.stream([], { memory: { thread: thread.threadId, resource: thread.resourceId }, savePerStep: true, runId });
}

/** Continues a suspended call of `runId`: approved, declined (with a reason), or resumed with data. */
export function resumeCall(
  agent: Agent,
  how: { approve: true } | { decline: true; reason?: string } | { resumeData: unknown },
  options: MastraRunOptions & { runId: string; toolCallId: string },
): Promise<RunOutput> {
  if ('approve' in how) return agent.approveToolCall(options);
  if ('decline' in how) return agent.declineToolCall({ ...options, reason: how.reason });
  return agent.resumeStream(how.resumeData, options as never);
}

/** An AG-UI tool's JSON Schema as a Mastra tool's `inputSchema` (Mastra takes JSON Schema as it is). */
function jsonSchemaInput(parameters: unknown): ToolInputSchema {
  return (parameters ?? { type: 'object', properties: {} }) as ToolInputSchema;
}

type ToolInputSchema = NonNullable<Parameters<typeof createTool>[0]['inputSchema']>;

/** What a frontend tool does when the model calls it (absent: Mastra ends the loop and the client runs it). */
export type FrontendExecute = (input: unknown, context: { agent?: { toolCallId?: string } }) => Promise<unknown>;

/** An AG-UI tool as a Mastra tool: its JSON Schema as it is (Mastra takes JSON Schema), and `execute` when given. */
export function frontendTool(tool: Tool, execute?: FrontendExecute) {
  return createTool({ id: tool.name, description: tool.description, inputSchema: jsonSchemaInput(tool.parameters), ...(execute && { execute }) });
}

/** A request context holding `entries` (what tools and processors read with `requestContext.get`). */
export function requestContext(entries: ReadonlyArray<[string, unknown]>): RequestContext {
  return new RequestContext([...entries]);
}

/** What a request context holds under `key` (the user Mastra's auth set on a request, say): the value of whatever type it is. */
export function requestContextValue(context: RequestContext | undefined, key: string): unknown {
  return context?.get(key);
}

/** A person's answer to a call a stopped run of the thread waits on: approved (with resume data), or declined with a reason. */
export interface ToolApproval {
  toolCallId: string;
  approved: boolean;
  resumeData?: unknown;
  reason?: string;
}

/** Approves or declines a waiting call with Mastra's own method, in this process; answers the run it resumed and the call. */
export async function sendToolApproval(agent: Agent, thread: ThreadTarget, approval: ToolApproval): Promise<{ runId: string; toolCallId: string }> {
  const { toolCallId, approved, resumeData, reason } = approval;
  const result = await agent.sendToolApproval({
    ...thread,
    toolCallId,
    approved,
    ...(resumeData !== undefined && { resumeData }),
    ...(!approved && reason && { declineContext: { reason } }),
  });
  return { runId: result.runId, toolCallId: result.toolCallId ?? toolCallId };
}

/** A call a suspended run waits on, as storage lists it. */
export interface SuspendedCall {
  toolCallId?: string;
  toolName?: string;
  args?: unknown;
  /** Waiting for approval (approve/decline), rather than suspended by the tool (resume with data). */
  requiresApproval: boolean;
}

/** A run of the thread stopped on its calls (approvals, suspended tools), from storage: so in any process, after a restart. */
export async function suspendedRuns(agent: Agent, thread: ThreadOfRun): Promise<Array<{ runId: string; toolCalls: SuspendedCall[] }>> {
  const { runs } = await agent.listSuspendedRuns({ threadId: thread.threadId, resourceId: thread.resourceId });
  return runs;
}

/**
 * Whether run `runId` is stopped on an interrupt (an approval, a suspended tool), as storage says:
 * Mastra keeps such a run as the thread's active run. A read that fails answers `false`: the run
 * is treated as running.
 */
export async function stoppedOnInterrupt(agent: Agent, thread: ThreadOfRun, runId: string): Promise<boolean> {
  const runs = await suspendedRuns(agent, thread).catch(() => []);
  return runs.some((run) => run.runId === runId);
}

/** The run that holds the thread in this process (Mastra's active thread run, a stopped one too), if any. */
export function activeThreadRunId(agent: Agent, thread: ThreadOfRun): string | undefined {
  return agent.getActiveThreadRunId(thread);
}

/**
 * The thread's run in this process that is stopped on an interrupt, if any: Mastra keeps it as
 * the thread's active run, and replays it from its `start` to a new subscriber of the thread.
 */
export async function stoppedThreadRun(agent: Agent, thread: ThreadOfRun): Promise<string | undefined> {
  const runId = activeThreadRunId(agent, thread);
  return runId !== undefined && (await stoppedOnInterrupt(agent, thread, runId)) ? runId : undefined;
}

/** The runs that hold a thread of `agent` in this process (Mastra's active thread runs, stopped ones too). */
export function activeThreadRuns(agent: Agent): Array<{ runId: string } & ThreadOfRun> {
  return agent.listActiveThreadRuns().map(({ runId, threadId, resourceId }) => ({ runId, threadId, ...(resourceId !== undefined && { resourceId }) }));
}

/** How `abortThreadRun` stops: only run `expectedRunId`, only in this process, and whether the signals waiting for it go too. */
export interface AbortOptions {
  expectedRunId?: string;
  localOnly?: boolean;
  clearPendingSignals?: boolean;
}

/** Aborts the run that streams on the thread; answers whether one was aborted. */
export function abortThreadRun(agent: Agent, thread: ThreadOfRun, options: AbortOptions = {}): boolean {
  return agent.abortThreadStream({ ...thread, ...options });
}

/** What a thread subscription gives: every chunk of the thread's runs as Mastra streams them, and how to stop. */
export interface ThreadSubscription {
  stream: AsyncIterable<unknown>;
  unsubscribe(): void;
}

/** Subscribes to the thread's runs; resolves once Mastra has registered the subscriber. */
export async function subscribeToThread(agent: Agent, thread: ThreadTarget): Promise<ThreadSubscription> {
  const sub = await agent.subscribeToThread(thread);
  return { stream: sub.stream as AsyncIterable<unknown>, unsubscribe: () => sub.unsubscribe() };
}

/**
 * What the bridge calls of Mastra's lease provider (a structural part of its `LeaseProvider`),
 * declared here: outside the door, nothing names Mastra's type or calls its methods.
 */
export interface ThreadLeases {
  /** Takes `key` for `owner` for `ttlMs`, unless another owner holds it (then named). */
  acquireLease(key: string, owner: string, ttlMs: number): Promise<{ acquired: boolean; owner?: string }>;
  /** Lets `key` go, if `owner` holds it. */
  releaseLease(key: string, owner: string): Promise<void>;
  /** Keeps `owner`'s hold on `key` for `ttlMs` more; answers whether it still held it. */
  renewLease(key: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Who holds `key`; `undefined` when nobody does. */
  getLeaseOwner(key: string): Promise<string | undefined>;
}

/** The agent's lease provider, when its pub/sub has one. */
export function leasesOf(agent: Agent): ThreadLeases | undefined {
  return leasesOfPubSub(agent.getPubSub());
}

/** The lease provider of Mastra's own pub/sub (a workflow's runs hold leases there). */
export function workflowLeases(mastra: Mastra): ThreadLeases | undefined {
  return leasesOfPubSub(mastra.pubsub);
}

/** Whether the agent's leases live in this process only (Mastra's in-process pub/sub), not shared with others. */
export function leasesInProcess(agent: Agent): boolean {
  return agent.getPubSub() instanceof EventEmitterPubSub;
}

function leasesOfPubSub(pubsub: unknown): ThreadLeases | undefined {
  return typeof (pubsub as Partial<LeaseProvider> | undefined)?.acquireLease === 'function' ? (pubsub as LeaseProvider) : undefined;
}

/** Mastra's events on a thread's topic that say a run is over, what it had stored (`run-aborted` comes at the abort, before that). */
const RUN_OVER = new Set(['run-completed', 'run-failed', 'run-discarded']);

/**
 * Listens on Mastra's topic of the thread (`agent.thread-stream.<resource \0 thread>`) for run
 * `runId` to be over, in whichever process it streams; `undefined` if it cannot (no pub/sub, or
 * one that is away). Mastra tells there of runs whose output nobody here reads.
 */
export async function toldOver(agent: Agent, thread: ThreadOfRun, runId: string): Promise<{ over: Promise<void>; stop: () => Promise<void> } | undefined> {
  const pubsub = agent.getPubSub();
  if (!pubsub) return undefined;
  const topic = `agent.thread-stream.${encodeURIComponent(`${thread.resourceId ?? ''}\0${thread.threadId}`)}`;
  let isOver = () => {};
  const over = new Promise<void>((resolve) => (isOver = resolve));
  const listener: EventCallback = (event) => {
    if (event.runId === runId && RUN_OVER.has(event.type)) isOver();
  };
  try {
    await pubsub.subscribe(topic, listener, { startFrom: 'latest' });
  } catch {
    return undefined; // the pub/sub is away: the run's end is not waited for
  }
  const stop = () =>
    pubsub.unsubscribe(topic, listener).catch(() => {
      // shutting down: the subscription goes with the process
    });
  return { over, stop };
}
