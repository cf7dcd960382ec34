import type { Event, Message, RunAgentInput, Tool } from '@ag-ui/core';
import type { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import { inject, injectable } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import { invalidInput, notFound } from '../errors.js';
import { ThreadStore } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';
import { ToolProxy } from '../tools/tool-proxy.js';
import type { MastraChunk } from '../translate/chunks.js';
import { selectNewMessages, toAguiMessages, toMastraMessages } from '../translate/messages.js';
import { INTERRUPT_ID_SEPARATOR, type RunTranslator } from '../translate/run-translator.js';
import { StreamTranslator } from '../translate/stream-translator.js';
import { errorMessage } from '../translate/values.js';
import { AgentProvider } from './agent-provider.js';
import { ResultCapture, type RunCapture } from './result-capture.js';

/** Options a client passes in `RunAgentInput.forwardedProps`, validated at the edge. */
export interface RunOptions {
  agentId?: string;
  resourceId: string;
  memoryOptions?: Record<string, unknown>;
  structuredOutput?: Record<string, unknown>;
  frontendToolMode: 'proxy' | 'return';
}

/** A validated run, ready to stream: `events()` yields the AG-UI events of each step. */
export interface PreparedRun {
  events(signal: AbortSignal): AsyncGenerator<Event[]>;
}

type ResumeEntry = NonNullable<RunAgentInput['resume']>[number];
type MastraOutput = { fullStream: AsyncIterable<unknown> };
type ResumeTarget = { runId: string; toolCallId: string; requiresApproval: boolean; entry: ResumeEntry };

/** The toolset name under which proxied frontend tools are passed to Mastra. */
const FRONTEND_TOOLSET = 'agui-frontend';

/**
 * Runs an agent for `POST /run`: selects the agent, checks thread ownership, converts the new
 * messages, starts (or resumes) the Mastra stream, and translates its chunks. Everything that can
 * be refused is refused in `prepare()`, before a byte is streamed; after that, every failure
 * becomes a `RUN_ERROR` event.
 *
 * @example
 * const run = await runs.prepare(input, { resourceId: 'user-1', frontendToolMode: 'proxy' });
 * for await (const events of run.events(abortSignal)) write(events);
 */
@injectable()
export class RunService {
  constructor(
    @inject(TOKENS.Config) private readonly config: ResolvedConfig,
    @inject(TOKENS.AgentProvider) private readonly agents: AgentProvider,
    @inject(TOKENS.ThreadStore) private readonly threads: ThreadStore,
    @inject(TOKENS.ToolProxy) private readonly proxy: ToolProxy,
    @inject(TOKENS.ResultCapture) private readonly captures: ResultCapture,
    @inject(TOKENS.TranslatorFactory) private readonly translators: StreamTranslator,
  ) {}

  /** Controllers of the runs streaming now, so that a shutdown can end each one cleanly. */
  private readonly active = new Set<AbortController>();

  /** Cancels every open run: each stream ends with `RUN_FINISHED { outcome: cancelled }`. */
  shutdown(): void {
    for (const controller of this.active) controller.abort(new Error('The server is shutting down'));
  }

  async prepare(input: RunAgentInput, options: RunOptions): Promise<PreparedRun> {
    const agent = this.agents.get(options.agentId);
    const memory = await agent.getMemory();
    const scope = { threadId: input.threadId, resourceId: options.resourceId, agentId: agent.id };
    let hasHistory = false;
    let storedIds = new Set<string>();
    if (memory) {
      const { exists } = await this.threads.assertNotForeign(scope);
      if (exists) {
        const stored = await this.threads.storedMessages(scope);
        // Snapshot ids the bridge made up (`tool-result-…`, per-step suffixes) count as stored too.
        storedIds = new Set([...stored.map((m) => m.id), ...toAguiMessages(stored).map((m) => m.id)]);
        hasHistory = stored.length > 0;
      }
    }
    const resume = input.resume?.length ? await this.resumeTargets(agent, input.resume, scope) : [];
    const fresh = memory ? selectNewMessages(input.messages, storedIds, hasHistory) : input.messages;
    // Convert the whole input, then keep the new ids: a new tool message takes its tool name from
    // the (already stored) assistant call before it, else Mastra would store it as `unknown`.
    const freshIds = new Set(fresh.map((m) => m.id));
    for (const id of callOwners(input.messages, fresh)) freshIds.add(id);
    const messages = toMastraMessages(input.messages).filter((m) => freshIds.has(m.id));
    if (resume.length === 0 && messages.length === 0) throw invalidInput('The run has no new message to answer and nothing to resume');
    return { events: (signal) => this.stream(agent, input, options, { messages, resume, memory: !!memory }, signal) };
  }

  private async *stream(
    agent: Agent,
    input: RunAgentInput,
    options: RunOptions,
    plan: { messages: ReturnType<typeof toMastraMessages>; resume: ResumeTarget[]; memory: boolean },
    clientSignal: AbortSignal,
  ): AsyncGenerator<Event[]> {
    const controller = new AbortController();
    const signal = controller.signal;
    const onClientAbort = () => controller.abort(clientSignal.reason);
    clientSignal.addEventListener('abort', onClientAbort, { once: true });
    this.active.add(controller);
    const capture = this.captures.begin();
    const frontendTools = new Set((input.tools ?? []).map((t) => t.name));
    const translator = this.translators.begin({
      threadId: input.threadId,
      runId: input.runId,
      interruptRunId: plan.resume[0]?.runId ?? input.runId,
      resumedToolCalls: new Set(plan.resume.map((target) => target.toolCallId)),
      frontendTools,
      frontendToolMode: options.frontendToolMode,
      capturedResult: capture.lookup,
    });
    yield translator.start();
    const streamOptions = {
      ...(plan.memory && { memory: { thread: input.threadId, resource: options.resourceId, ...(options.memoryOptions && { options: options.memoryOptions }) } }),
      abortSignal: signal,
      onStepFinish: capture.onStepFinish,
      ...(input.tools?.length && this.frontendToolOptions(input.tools, input.runId, options.frontendToolMode, signal)),
    };
    try {
      if (plan.resume.length > 0) {
        for (const target of plan.resume) {
          const output = await this.resumeOne(agent, target, streamOptions);
          yield* this.pipe(output, translator, input.runId, frontendTools, options, signal);
          if (translator.finished) break;
        }
      } else {
        const runOptions = {
          ...streamOptions,
          runId: input.runId,
          ...(options.structuredOutput && { structuredOutput: { schema: options.structuredOutput } }),
        };
        // Mastra's overloads split on `structuredOutput`; the options are built dynamically, hence the cast.
        const output = await agent.stream(plan.messages as never, runOptions as never);
        yield* this.pipe(output, translator, input.runId, frontendTools, options, signal);
      }
      yield signal.aborted ? translator.cancel() : translator.end();
    } catch (error) {
      if (signal.aborted) yield translator.cancel();
      else {
        this.config.logger.error(`Run ${input.runId} failed: ${errorMessage(error)}`, { stack: (error as Error)?.stack });
        yield translator.fail(errorMessage(error), 'RUN_FAILED');
      }
    } finally {
      this.active.delete(controller);
      clientSignal.removeEventListener('abort', onClientAbort);
      this.proxy.rejectRun(input.runId, 'The run ended before the tool call was answered');
      if (!translator.finished) controller.abort();
    }
  }

  /** Streams one Mastra output through the translator; frontend calls get a proxy slot before the client sees them. */
  private async *pipe(
    output: MastraOutput,
    translator: RunTranslator,
    runId: string,
    frontendTools: ReadonlySet<string>,
    options: RunOptions,
    signal: AbortSignal,
  ): AsyncGenerator<Event[]> {
    for await (const raw of output.fullStream) {
      if (signal.aborted) return;
      const chunk = raw as MastraChunk;
      if (options.frontendToolMode === 'proxy' && chunk.type === 'tool-call' && frontendTools.has(chunk.payload.toolName)) {
        this.proxy.expect(runId, chunk.payload.toolCallId);
      }
      const events = translator.push(chunk);
      if (events.length > 0) yield events;
      if (translator.finished) return;
    }
  }

  /**
   * AG-UI tools for `agent.stream()`. Mastra strips `execute` from `clientTools` (they run in the
   * browser and end the loop), so proxied tools must go in as a toolset, whose `execute` Mastra
   * calls and awaits; returned tools go in as client tools.
   */
  private frontendToolOptions(tools: Tool[], runId: string, mode: 'proxy' | 'return', signal: AbortSignal) {
    const converted = this.clientTools(tools, runId, mode, signal);
    return mode === 'proxy' ? { toolsets: { [FRONTEND_TOOLSET]: converted } } : { clientTools: converted };
  }

  /** AG-UI tools as Mastra tools: proxied to the browser and awaited, or returned to it. */
  private clientTools(tools: Tool[], runId: string, mode: 'proxy' | 'return', signal: AbortSignal) {
    const proxy = this.proxy;
    return Object.fromEntries(
      tools.map((tool) => [
        tool.name,
        createTool({
          id: tool.name,
          description: tool.description,
          inputSchema: (tool.parameters ?? { type: 'object', properties: {} }) as never,
          ...(mode === 'proxy' && {
            execute: async (_input: unknown, ctx: { agent?: { toolCallId?: string } }) => {
              const toolCallId = ctx?.agent?.toolCallId;
              if (!toolCallId) throw new Error(`Frontend tool ${tool.name} was called without a tool call id`);
              const answer = await proxy.wait(runId, toolCallId, tool.name, signal);
              if (answer.isError) throw new Error(typeof answer.content === 'string' ? answer.content : JSON.stringify(answer.content));
              return answer.content;
            },
          }),
        }),
      ]),
    );
  }

  /** Finds the suspended Mastra call behind each interrupt id, on this caller's thread only. */
  private async resumeTargets(agent: Agent, entries: ResumeEntry[], scope: { threadId: string; resourceId: string }): Promise<ResumeTarget[]> {
    const { runs } = await agent.listSuspendedRuns({ threadId: scope.threadId, resourceId: scope.resourceId });
    return entries.map((entry) => {
      const [runId, toolCallId] = entry.interruptId.split(INTERRUPT_ID_SEPARATOR);
      const run = runs.find((r) => r.runId === runId);
      const call = run?.toolCalls.find((t) => t.toolCallId === toolCallId);
      if (!run || !call || !toolCallId) throw notFound('TOOL_CALL_NOT_FOUND', `Nothing is waiting for interrupt ${entry.interruptId} on this thread`);
      return { runId, toolCallId, requiresApproval: call.requiresApproval, entry };
    });
  }

  private resumeOne(agent: Agent, target: ResumeTarget, streamOptions: Record<string, unknown>): Promise<MastraOutput> {
    const { runId, toolCallId, entry } = target;
    const payload = (entry.payload ?? {}) as { approved?: unknown; reason?: unknown };
    if (!target.requiresApproval) {
      if (entry.status === 'cancelled') return agent.declineToolCall({ ...streamOptions, runId, toolCallId, reason: reasonOf(payload) } as never);
      return agent.resumeStream(entry.payload ?? {}, { ...streamOptions, runId, toolCallId } as never);
    }
    const approved = entry.status === 'resolved' && payload.approved !== false;
    return approved
      ? agent.approveToolCall({ ...streamOptions, runId, toolCallId } as never)
      : agent.declineToolCall({ ...streamOptions, runId, toolCallId, reason: reasonOf(payload) } as never);
  }
}

function reasonOf(payload: { reason?: unknown }): string | undefined {
  return typeof payload.reason === 'string' ? payload.reason : undefined;
}

/**
 * Ids of the assistant messages whose calls the new tool messages answer. Mastra merges a tool
 * result into its call only when both are in the same input (it upserts the stored call row by
 * id); a result sent alone is stored as a second assistant row repeating the call.
 */
function callOwners(input: Message[], fresh: Message[]): string[] {
  const answered = new Set(fresh.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])));
  if (answered.size === 0) return [];
  return input.flatMap((m) => (m.role === 'assistant' && m.toolCalls?.some((call) => answered.has(call.id)) ? [m.id] : []));
}
