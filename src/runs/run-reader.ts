import type { Event } from '@ag-ui/core';
import type { Agent } from '@mastra/core/agent';
import { inject, injectable } from 'inversify';
import { outputFinished, streamRun, type RunOutput } from '../mastra/index.js';
import type { BridgeMetrics } from '../observability/metrics.js';
import { updatesWorkingMemory } from '../state/state-events.js';
import { RunEndings } from '../threads/run-endings.js';
import { TOKENS } from '../tokens.js';
import { endsStep, isPause, type MastraChunk } from '../translate/chunks.js';
import { RunAdmission } from './run-admission.js';
import type { RunAnnouncements } from './run-announcements.js';
import { RunHistory } from './run-history.js';
import type { ResumeQueue, RunContext, RunPlan } from './run-plan.js';
import type { ResumeTarget } from './resume.js';
import { streamOptions, type RunLive, type RunShape } from './stream-options.js';
import type { ToolProxy } from './tool-proxy.js';

/**
 * Reads a `/run`'s Mastra output through its translator into its sink: a new run on the plan's
 * messages, or the calls it resumes, in turn. The events go straight from the chunk loop to the
 * sink, with no async generator in between: with a zero-delay model Mastra hands over thousands
 * of chunks without ever waiting, and each generator hop costs several promises per chunk.
 */
@injectable()
export class RunReader {
  constructor(
    @inject(TOKENS.ToolProxy) private readonly proxy: ToolProxy,
    @inject(TOKENS.Metrics) private readonly metrics: BridgeMetrics,
    @inject(TOKENS.RunAnnouncements) private readonly announcements: RunAnnouncements,
    @inject(RunEndings) private readonly endings: RunEndings,
    @inject(RunAdmission) private readonly admission: RunAdmission,
    @inject(RunHistory) private readonly history: RunHistory,
  ) {}

  /** Reads the run until its translator finishes, its output ends, or it is aborted; the tool results captured last are translated too. */
  async read(agent: Agent, plan: RunPlan, shape: RunShape, context: RunContext): Promise<void> {
    const live: RunLive = { signal: context.signal, onStepFinish: context.capture.onStepFinish, proxy: this.proxy, waiting: this.metrics.toolsWaiting };
    if (plan.resume.length > 0) await this.resumeAll(agent, plan.resume, shape, live, context);
    else await this.start(agent, plan, shape, live, context);
    if (!context.signal.aborted) await this.translate(context.capture.take(), context);
  }

  /** The run's frontend calls still waiting for the client are answered with an error: the run is over. */
  settle(runId: string, resourceId: string): void {
    this.proxy.rejectRun(runId, resourceId, 'The run ended before the tool call was answered');
  }

  /** A new Mastra run, announced to the thread's followers while it streams. */
  private async start(agent: Agent, plan: RunPlan, shape: RunShape, live: RunLive, context: RunContext): Promise<void> {
    const { options } = context;
    const runId = plan.mastraRunId;
    const runOptions = { ...streamOptions(shape, live), runId, ...(options.structuredOutput && { structuredOutput: { schema: options.structuredOutput } }) };
    await this.announcements.announce(runId, plan.announcement);
    try {
      const output = await streamRun(agent, plan.messages, runOptions).catch(async (error: unknown) => {
        await plan.turn?.release(); // never registered: Mastra will not let go of it
        throw error;
      });
      await this.piped(runId, output, context);
    } finally {
      this.announcements.ended(runId);
    }
  }

  /** The calls the client answered: the first resumed, and each later one when its run pauses on it. */
  private async resumeAll(agent: Agent, resume: ResumeTarget[], shape: RunShape, live: RunLive, context: RunContext): Promise<void> {
    const queue: ResumeQueue = { waiting: new Map(resume.slice(1).map((target) => [target.toolCallId, target])) };
    const thread = { resourceId: shape.resourceId, threadId: shape.input.threadId };
    for (let target: ResumeTarget | undefined = resume[0]; target;) {
      const output = await this.admission.resume(agent, thread, { target, run: shape }, live);
      queue.next = undefined;
      await this.piped(target.runId, output, context, queue);
      if (context.translator.waitsOn(target.toolCallId)) await this.admission.asksAgain(target.toolCallId);
      target = context.translator.finished ? undefined : queue.next;
    }
  }

  /**
   * `pipe`, with the run's end told to `RunEndings`: Mastra's own end of the output (its answer
   * stored), which comes after the terminal chunk the pipe stops at.
   */
  private piped(mastraRunId: string, output: RunOutput, context: RunContext, queue?: ResumeQueue): Promise<void> {
    context.mastraRunId = mastraRunId;
    const piping = this.pipe(output, context, queue);
    this.endings.track(mastraRunId, Promise.all([piping, outputFinished(output)]));
    return piping;
  }

  /** Streams one Mastra output through the translator into the sink; waits only when the sink asks to. */
  private async pipe(output: RunOutput, context: RunContext, queue?: ResumeQueue): Promise<void> {
    const { translator, capture, signal } = context;
    for await (const raw of output.fullStream) {
      if (signal.aborted) return;
      const chunk = raw as MastraChunk;
      context.lastWasPause = isPause(chunk);
      if (queue && resumesLater(chunk, queue)) continue;
      this.expectFrontendCall(chunk, context);
      // What the step's tools returned reaches the translator before the step ends.
      if (endsStep(chunk)) await this.translate(capture.take(), context);
      await this.translate(chunk, context);
      if (translator.finished) return;
    }
  }

  /** Translates one chunk into the sink; waits only when the sink asks to. */
  private async translate(chunk: MastraChunk | undefined, context: RunContext): Promise<void> {
    if (!chunk) return;
    const { translator, write, state } = context;
    let events = translator.push(chunk);
    if (state && updatesWorkingMemory(chunk)) events.push(...(await state.changed()));
    if (translator.finished && translator.retracts) events = await this.history.retract(chunk, events, context);
    // Cut by an abort: the end goes out once Mastra has stored what it kept (`cut`). An abort
    // between two steps (`control.abort`, an interrupting run) ends the run with a plain `finish`.
    if (translator.finished && (chunk.type === 'abort' || this.cutBetweenSteps(context, events))) [context.cutEnd, events] = [events, []];
    if (events.length === 0) return;
    const drained = write(events);
    if (drained) await drained;
  }

  /** Whether an abort cut the run between two steps; if so, the end in `events` is made cancelled. */
  private cutBetweenSteps({ mastraRunId, translator }: RunContext, events: Event[]): boolean {
    return mastraRunId !== undefined && this.endings.wasCut(mastraRunId) && translator.endAsCancelled(events);
  }

  /**
   * Opens a frontend call's proxy slot before the client sees the call: when it first shows up,
   * not at the atomic `tool-call`, as `TOOL_CALL_END` goes out on `tool-call-input-streaming-end`,
   * before `tool-call`, and a client may answer at once.
   */
  private expectFrontendCall(chunk: MastraChunk, { runId, frontendTools, options }: RunContext): void {
    if (options.frontendToolMode !== 'proxy') return;
    if (chunk.type !== 'tool-call' && chunk.type !== 'tool-call-input-streaming-start') return;
    if (frontendTools.has(chunk.payload.toolName)) this.proxy.expect(runId, chunk.payload.toolCallId, options.resourceId);
  }
}

/** A pause the client already answered is resumed instead of ending the run on it. */
function resumesLater(chunk: MastraChunk, queue: ResumeQueue): boolean {
  if (!isPause(chunk)) return false;
  const answered = queue.waiting.get(chunk.payload.toolCallId);
  if (!answered) return false;
  queue.waiting.delete(chunk.payload.toolCallId);
  queue.next = answered;
  return true;
}
