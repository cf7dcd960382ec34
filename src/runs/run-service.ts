import { EventType, type Event, type Message, type RunAgentInput } from '@ag-ui/core';
import type { Agent } from '@mastra/core/agent';
import type { MastraDBMessage, MastraMemory } from '@mastra/core/memory';
import { inject, injectable } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import { conflict, invalidInput, threadBusy } from '../errors.js';
import { AgentProvider } from '../agents/agent-provider.js';
import { memoryOf, messagesById, outputFinished, streamRun, type FinishingOutput, type ThreadTarget } from '../mastra/index.js';
import type { DurableInbox, InboxCuts } from '../threads/inbox.js';
import type { RecoveryGate } from '../threads/recovery-gate.js';
import { ThreadStore, type ThreadScope } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';
import { endsStep, isPause, type MastraChunk } from '../translate/chunks.js';
import { appendPosition } from '../translate/history.js';
import { toolResultMessageId, type MessagePosition } from '../translate/ids.js';
import { selectNewMessages, tailIds, toMastraMessages, type MastraInputMessage } from '../translate/messages.js';
import { endAsCancelled, RunTranslator } from '../translate/run-translator.js';
import type { WorkflowActivityContent } from '../translate/workflow-activity.js';
import { beforeTerminal, blockedStep } from '../translate/retraction.js';
import { runEndIn } from '../translate/run-end.js';
import type { RunEndRecords } from './run-end-records.js';
import { errorMessage } from '../text.js';
import { loggedRunFailure } from './run-failure.js';
import { ResultCapture } from './result-capture.js';
import type { RunAnnouncement, RunAnnouncements } from './run-announcements.js';
import { findResumeTargets, type ResumeRequest, type Resumer, type ResumeTarget } from './resume.js';
import { streamOptions, type RunLive, type RunShape } from './stream-options.js';
import { takeThreadTurn, threadLeaseOwner, type ThreadTurn } from '../threads/thread-lease.js';
import { terminalOutcome, type BridgeMetrics } from '../observability/metrics.js';
import type { RunTracker, TrackedRun } from '../observability/run-tracker.js';
import { withTraceparent } from '../observability/trace-context.js';
import type { ToolProxy } from './tool-proxy.js';
import { WIND_DOWN_MS, type ThreadControl } from '../threads/thread-control.js';
import type { RunEndings } from '../threads/run-endings.js';
import { SUPERSEDED_BY_INPUT, type PendingInterrupts } from '../threads/pending-interrupts.js';
import { StateEvents, updatesWorkingMemory } from '../state/state-events.js';
import { WorkingMemoryState, type AgentState, type StateScope } from '../state/working-memory.js';

export { AGUI_CONTEXT_KEY } from './stream-options.js';

/** Options a client passes in `RunAgentInput.forwardedProps`, validated at the edge. */
export interface RunOptions {
  agentId?: string;
  resourceId: string;
  memoryOptions?: Record<string, unknown>;
  structuredOutput?: Record<string, unknown>;
  frontendToolMode: 'proxy' | 'return';
  /**
   * A thread that is running already (a `/run`, a signal or a message woke it, in any process):
   * `enqueue` waits its turn, `reject` is `409 THREAD_BUSY`, `interrupt` aborts that run first.
   */
  multitask: 'enqueue' | 'reject' | 'interrupt';
}

/**
 * Where a run's events go, a batch per Mastra chunk. A returned promise makes the run wait for it
 * before it reads on (backpressure); returning nothing lets it go on at once.
 */
export type EventSink = (events: Event[]) => void | Promise<void>;

/**
 * The sink with the run's events counted, one `inc` per batch, and its terminal event noted (the
 * last of its batch) for the run's outcome: what every kind of run reports to the metrics.
 */
export function countedSink(metrics: BridgeMetrics, sink: EventSink): { write: EventSink; terminal: () => Event | undefined } {
  let terminal: Event | undefined;
  const write: EventSink = (batch) => {
    metrics.runEvents.inc(batch.length);
    const last = batch[batch.length - 1];
    if (!terminal && terminalOutcome(last)) terminal = last;
    return sink(batch);
  };
  return { write, terminal: () => terminal };
}

/** A validated run, ready to stream. */
export interface PreparedRun {
  /** Streams the run's AG-UI events into `write`, the terminal event last; resolves once it is written. */
  stream(write: EventSink, signal: AbortSignal): Promise<void>;
}

/** What the run reads of Mastra's output: its chunks, and its end (`outputFinished`). */
type MastraOutput = FinishingOutput & { fullStream: AsyncIterable<unknown> };

/** What `pipe` needs of the run it streams. */
interface PipeContext {
  translator: RunTranslator;
  capture: ResultCapture;
  write: EventSink;
  runId: string;
  frontendTools: ReadonlySet<string>;
  options: RunOptions;
  signal: AbortSignal;
  /** The run's state events, for an agent with working memory. */
  state?: StateEvents;
  /** The thread the run stores its answer in (none for a read-only run): what a retraction shows. */
  stored?: ThreadScope;
  /** Whether the latest chunk read was a pause (the run's stream ends there, waiting for a human). */
  lastWasPause?: boolean;
  /** The Mastra run being read (a resumed run keeps its own id): what a cut waits on. */
  mastraRunId?: string;
  /** The events that end a run Mastra cut (its `abort` chunk), held back for `cut`. */
  cutEnd?: Event[];
  /** When the run started streaming (ms): what it stored came after. */
  startedAt: number;
}

/** What `prepare` decided, for `stream`. */
interface RunPlan {
  /** The new messages, as Mastra takes them. */
  messages: MastraInputMessage[];
  resume: ResumeTarget[];
  memory: boolean;
  /** What the thread's followers learn of the run (a run that only resumes announces nothing). */
  announcement: RunAnnouncement;
  /** The run's entry in the durable inbox, removed when the run ends here (however it ends). */
  inboxId?: string;
  /** The thread's lease, taken for the run before Mastra registers it. */
  turn?: ThreadTurn;
  /** Where the thread's state lives, for an agent with working memory. */
  state?: { store: WorkingMemoryState; scope: StateScope };
  /** What the thread's workflow calls showed when they last ran (a resume goes on from there). */
  workflowActivities?: Readonly<Record<string, WorkflowActivityContent>>;
}

/** Calls the client already answered, while a resumed run goes on (`pipe` resumes them in turn). */
interface ResumeQueue {
  waiting: Map<string, ResumeTarget>;
  next?: ResumeTarget;
}

/**
 * Runs an agent for `POST /run`: selects the agent, checks thread ownership, converts the new
 * messages, starts (or resumes) the Mastra stream, and translates its chunks. Everything that can
 * be refused is refused in `prepare()`, before a byte is streamed; after that, every failure
 * becomes a `RUN_ERROR` event.
 *
 * The events go straight from the chunk loop to the sink, with no async generator in between:
 * with a zero-delay model Mastra hands over thousands of chunks without ever waiting, and each
 * generator hop costs several promises per chunk.
 *
 * @example
 * const run = await runs.prepare(input, { resourceId: 'user-1', frontendToolMode: 'proxy' });
 * await run.stream((events) => out.send(events), abortSignal);
 */
@injectable()
export class RunService {
  constructor(
    @inject(TOKENS.Config) private readonly config: ResolvedConfig,
    @inject(TOKENS.AgentProvider) private readonly agents: AgentProvider,
    @inject(TOKENS.ThreadStore) private readonly threads: ThreadStore,
    @inject(TOKENS.ToolProxy) private readonly proxy: ToolProxy,
    @inject(TOKENS.RunAnnouncements) private readonly announcements: RunAnnouncements,
    @inject(TOKENS.Inbox) private readonly inbox: DurableInbox,
    @inject(TOKENS.Metrics) private readonly metrics: BridgeMetrics,
    @inject(TOKENS.RecoveryGate) private readonly gate: RecoveryGate,
    @inject(TOKENS.ThreadControl) private readonly control: ThreadControl,
    @inject(TOKENS.RunEndings) private readonly endings: RunEndings,
    @inject(TOKENS.PendingInterrupts) private readonly interrupts: PendingInterrupts,
    @inject(TOKENS.Resumer) private readonly resumer: Resumer,
    @inject(TOKENS.InboxCuts) private readonly cuts: InboxCuts,
    @inject(TOKENS.RunTracker) private readonly tracker: RunTracker,
    @inject(TOKENS.RunEndRecords) private readonly runEnds: RunEndRecords,
  ) {
    metrics.trackOpenRuns(() => this.active.size);
  }

  /** Controllers of the runs streaming now, so that a shutdown can end each one cleanly. */
  private readonly active = new Set<AbortController>();

  /** Cancels every open run: each stream ends with `RUN_FINISHED { outcome: cancelled }`. */
  /** How many `/run`s are streaming now. */
  get inFlight(): number {
    return this.active.size;
  }

  shutdown(): void {
    for (const controller of this.active) controller.abort(new Error('The server is shutting down'));
  }

  async prepare(input: RunAgentInput, options: RunOptions): Promise<PreparedRun> {
    const agent = this.agents.get(options.agentId);
    const memory = await memoryOf(agent);
    const scope = { threadId: input.threadId, resourceId: options.resourceId, agentId: agent.id };
    let stored: MastraDBMessage[] = [];
    let inboxId: string | undefined;
    let storedIds = new Set<string>();
    let workflowActivities: RunPlan['workflowActivities'];
    let exists = false;
    if (memory) {
      // After what a crash left unanswered on the thread: its input must come after theirs.
      await this.gate.pass(input.threadId);
      // What the input needs checked, not the whole thread: a run costs the same on a long thread.
      const recent = await this.threads.recent(scope, memory, tailIds(input.messages));
      if (recent) ({ stored, storedIds, context: { workflowActivities } } = recent);
      exists = recent !== undefined;
    }
    const resume = input.resume?.length ? await findResumeTargets(agent, input.resume, scope) : [];
    const fresh = memory ? selectNewMessages(input.messages, storedIds, stored.length > 0) : input.messages;
    // Convert the whole input, then keep the new ids: a new tool message takes its tool name from
    // the (already stored) assistant call before it, else Mastra would store it as `unknown`.
    const newIds = new Set(fresh.map((m) => m.id));
    const freshIds = new Set([...newIds, ...callOwners(input.messages, fresh)]);
    const messages = toMastraMessages(input.messages).filter((m) => freshIds.has(m.id));
    if (resume.length === 0 && messages.length === 0) {
      if (memory && isRetry(input.messages, storedIds)) return this.replay(input, scope);
      throw invalidInput('The run has no new message to answer and nothing to resume');
    }
    // Every check comes before the first write: a refused request stores nothing (API.md).
    const workingMemory = readOnly(options) ? undefined : WorkingMemoryState.of(memory);
    const state = clientState(input.state);
    await workingMemory?.assertFits(state);
    if (memory) await assertIdsFree(memory, messages.map((m) => m.id), input.threadId);
    await this.assertUnanswered(resume);
    // One run per thread at a time (here and in every process on the same leases).
    const turn = memory && resume.length === 0 ? await this.takeTurn(agent, scope, input.runId, options.multitask, exists) : undefined;
    try {
      if (memory) await this.threads.claim(scope, memory);
      // The client's state, when it differs from the stored one, is the run's from the start.
      await workingMemory?.write(scope, state);
      if (memory) inboxId = await this.storeInput(input, scope, fresh, messages, options);
    } catch (error) {
      await turn?.release();
      throw error;
    }
    const announcement = { messages: fresh, appendsTo: memory ? appendTarget(messages, stored) : undefined };
    const plan: RunPlan = { messages, resume, memory: !!memory, announcement, inboxId, turn, state: workingMemory && { store: workingMemory, scope }, workflowActivities };
    return {
      stream: (write, signal) => {
        const tracked = this.tracker.start({ agentId: agent.id, origin: 'run', threadId: input.threadId, runId: input.runId, resourceId: options.resourceId });
        return tracked.within(() => this.stream(agent, input, options, plan, write, signal, tracked));
      },
    };
  }

  /** A call another `resume` or an approval is answering (or answered) is refused before the stream opens. */
  private async assertUnanswered(resume: ResumeTarget[]): Promise<void> {
    for (const { toolCallId } of resume) if (await this.control.taken(toolCallId)) throw conflict(`Tool call ${toolCallId} was answered already`);
  }

  /**
   * A call is answered once, in any process, as an approval is (`ThreadControl.once`): new input
   * that comes while it is resumed finds it taken and does not decline it (the run streams), and a
   * second answer is refused. A resume that Mastra refuses gives the call back.
   */
  private async resumed(agent: Agent, thread: ThreadTarget, request: ResumeRequest, live: RunLive): Promise<MastraOutput> {
    const output = await this.control.once(request.target.toolCallId, () => this.resumer.resume(agent, thread, request, live));
    if (!output) throw conflict(`Tool call ${request.target.toolCallId} was answered already`);
    return output;
  }

  /**
   * The thread's turn for a new run, as `multitask` says: wait for it, refuse at once, or cut the
   * running run short. A run stopped on an interrupt is not running: the new input supersedes
   * what it waits on (declined) and takes the thread at once, whatever `multitask` says. A thread
   * not stored yet has no stopped run to look for (a first message skips those reads).
   */
  private async takeTurn(agent: Agent, scope: ThreadScope, runId: string, multitask: RunOptions['multitask'], exists: boolean): Promise<ThreadTurn> {
    const { waiting, streaming } = exists
      ? await this.interrupts.standing(agent, scope)
      : { waiting: [], streaming: (await threadLeaseOwner(agent, scope)) !== undefined };
    if (multitask === 'reject' && streaming) return takeThreadTurn(agent, scope, runId, 0, threadBusy);
    if (exists) await this.interrupts.supersede(agent, scope, SUPERSEDED_BY_INPUT, waiting);
    if (multitask === 'reject') return takeThreadTurn(agent, scope, runId, 0, threadBusy);
    // Only a running thread is aborted: asking the other processes about an idle one would wait out their silence.
    // The aborted run's partial answer is stored before this run's input, as a Stop then a message would have it.
    if (multitask === 'interrupt' && streaming) await this.cuts.around({ ...scope, agentId: agent.id }, () => this.control.abort(agent, scope, { untilEnded: true }));
    return takeThreadTurn(agent, scope, runId, this.config.threadBusyWaitMs);
  }

  /**
   * Acknowledged means stored: the new conversation messages are committed before `RUN_STARTED`,
   * in their order (tool results belong to their call's stored message, and system messages are
   * instructions, not history: Mastra stores both its own way). A read-only run
   * (`memoryOptions.readOnly`) stores nothing. Answers the run's durable-inbox entry, if any.
   */
  private async storeInput(
    input: RunAgentInput,
    scope: ThreadScope & { agentId: string },
    fresh: Message[],
    messages: MastraInputMessage[],
    options: RunOptions,
  ): Promise<string | undefined> {
    await this.threads.rememberToolMessageIds(scope, clientToolMessageIds(fresh));
    const newIds = new Set(fresh.map((m) => m.id));
    const conversation = messages.filter((m) => newIds.has(m.id) && (m.role === 'user' || m.role === 'assistant'));
    if (readOnly(options) || conversation.length === 0) return undefined;
    await this.threads.storeInput(scope, conversation);
    // In the inbox while the run lasts: cut by a crash, the restarted process runs it again.
    const { threadId, resourceId, agentId } = scope;
    const inboxId = conversation.at(-1)!.id;
    await this.inbox.add({ id: inboxId, kind: 'run', threadId, resourceId, agentId, message: conversation, acceptedAt: Date.now(), ...withTraceparent() });
    return inboxId;
  }

  /**
   * A retried `/run`: its messages are stored already, so it was answered (or is being answered)
   * by an earlier request with the same message ids. Nothing is stored or run again: the run is
   * `RUN_STARTED`, `MESSAGES_SNAPSHOT` (the thread's history, with the answer as stored so far),
   * `RUN_FINISHED`, under the request's ids. It does not show on the thread's events stream.
   */
  private async replay(input: RunAgentInput, scope: ThreadScope): Promise<PreparedRun> {
    const messages = await this.threads.messages(scope, {}, 'agui');
    this.config.logger.info(`Run ${input.runId} on thread ${input.threadId} sent no new message: answered with the stored history`);
    const { threadId, runId } = input;
    const events: Event[] = [
      { type: EventType.RUN_STARTED, threadId, runId },
      { type: EventType.MESSAGES_SNAPSHOT, messages },
      { type: EventType.RUN_FINISHED, threadId, runId },
    ];
    return {
      stream: async (write) => {
        this.metrics.runEvents.inc(events.length);
        await write(events);
      },
    };
  }

  private async stream(
    agent: Agent,
    input: RunAgentInput,
    options: RunOptions,
    plan: RunPlan,
    sink: EventSink,
    clientSignal: AbortSignal,
    tracked: TrackedRun,
  ): Promise<void> {
    const counted = countedSink(this.metrics, sink);
    const stored = plan.memory && !readOnly(options) ? { threadId: input.threadId, resourceId: options.resourceId, agentId: agent.id } : undefined;
    const write = this.keepingRunEnd(counted.write, stored, plan.inboxId);
    const controller = new AbortController();
    const signal = controller.signal;
    const onClientAbort = () => controller.abort(clientSignal.reason);
    clientSignal.addEventListener('abort', onClientAbort, { once: true });
    this.active.add(controller);
    const capture = new ResultCapture();
    const frontendTools = new Set((input.tools ?? []).map((t) => t.name));
    const translator = new RunTranslator({
      threadId: input.threadId,
      runId: input.runId,
      mastraRunId: plan.resume[0]?.runId ?? input.runId,
      resumedToolCalls: plan.resume.map((target) => target.toolCallId),
      approvalToolCalls: plan.resume.filter((target) => target.requiresApproval).map((target) => target.toolCallId),
      frontendTools,
      frontendToolMode: options.frontendToolMode,
      appendsTo: plan.announcement.appendsTo,
      workflowActivities: plan.workflowActivities,
    });
    const { state: stateOf } = plan;
    const state = stateOf && new StateEvents(() => stateOf.store.read(stateOf.scope));
    await write([...translator.start(), ...((await state?.opening()) ?? [])]);
    const context: PipeContext = { translator, capture, write, runId: input.runId, frontendTools, options, signal, state, stored, startedAt: Date.now() };
    const { threadId, runId, context: agUiContext, state: clientState, forwardedProps, tools } = input;
    const shape: RunShape = {
      // What the options are built from, and no more: a resume may send it to another process.
      input: { threadId, runId, context: agUiContext, state: clientState, forwardedProps, tools },
      resourceId: options.resourceId,
      frontendToolMode: options.frontendToolMode,
      ...(plan.memory && { memory: { ...(options.memoryOptions && { options: options.memoryOptions }), savePerStep: !readOnly(options) } }),
    };
    const live: RunLive = { signal, onStepFinish: capture.onStepFinish, proxy: this.proxy, waiting: this.metrics.toolsWaiting };
    try {
      if (plan.resume.length > 0) {
        // Answers the client gave for calls that pause later in this run are applied when they do.
        const queue: ResumeQueue = { waiting: new Map(plan.resume.slice(1).map((target) => [target.toolCallId, target])) };
        for (let target: ResumeTarget | undefined = plan.resume[0]; target; ) {
          const output = await this.resumed(agent, { resourceId: options.resourceId, threadId }, { target, run: shape }, live);
          queue.next = undefined;
          await this.piped(target.runId, output, context, queue);
          target = translator.finished ? undefined : queue.next;
        }
      } else {
        const runOptions = {
          ...streamOptions(shape, live),
          runId: input.runId,
          ...(options.structuredOutput && { structuredOutput: { schema: options.structuredOutput } }),
        };
        await this.announcements.announce(input.runId, plan.announcement);
        try {
          const output = await streamRun(agent, plan.messages, runOptions).catch(async (error: unknown) => {
            await plan.turn?.release(); // never registered: Mastra will not let go of it
            throw error;
          });
          await this.piped(input.runId, output, context);
        } finally {
          this.announcements.ended(input.runId);
        }
      }
      if (!signal.aborted) await this.translate(capture.take(), context);
      await this.keepWorkflowActivities(context);
      await write(signal.aborted || context.cutEnd ? await this.cut(context, clientSignal) : this.ending(context));
    } catch (error) {
      if (signal.aborted) {
        await this.keepWorkflowActivities(context);
        await write(await this.cut(context, clientSignal));
      } else {
        const { message, code } = loggedRunFailure(this.config.logger, `Run ${input.runId}`, error, 'RUN_FAILED');
        await write(translator.fail(message, code));
      }
    } finally {
      // No terminal event written means the run broke: the handler ends the stream with RUN_ERROR.
      tracked.ended(counted.terminal());
      this.active.delete(controller);
      clientSignal.removeEventListener('abort', onClientAbort);
      this.proxy.rejectRun(input.runId, 'The run ended before the tool call was answered');
      if (!translator.finished) controller.abort();
      if (plan.inboxId) await this.inbox.remove(input.threadId, [plan.inboxId]).catch(() => {
        // the sweep drops the entry once the history answers it
      });
    }
  }

  /**
   * `write`, with the run's end (the batch with its run-end message: cancelled or failed) kept in
   * the thread, after its input `inputId`, before the batch goes out, so that a client that loads
   * the thread on seeing it finds it. A run that stores nothing keeps nothing.
   */
  private keepingRunEnd(write: EventSink, stored: ThreadScope | undefined, inputId: string | undefined): EventSink {
    if (!stored) return write;
    return (events) => {
      const end = runEndIn(events);
      return end ? this.runEnds.keep(stored, end, inputId).then(() => write(events)) : write(events);
    };
  }

  /** What the run's workflow calls showed, kept for history and for their resume, before the run's end is written. */
  private async keepWorkflowActivities({ translator, stored }: PipeContext): Promise<void> {
    const activities = translator.workflowActivities;
    if (stored && Object.keys(activities).length > 0) await this.threads.rememberWorkflowActivities(stored, activities);
  }

  /**
   * `pipe`, with the run's end told to `RunEndings`: Mastra's own end of the output (its answer
   * stored), which comes after the terminal chunk the pipe stops at.
   */
  private piped(mastraRunId: string, output: MastraOutput, context: PipeContext, queue?: ResumeQueue): Promise<void> {
    context.mastraRunId = mastraRunId;
    const piping = this.pipe(output, context, queue);
    this.endings.track(mastraRunId, Promise.all([piping, outputFinished(output)]));
    return piping;
  }

  /** Streams one Mastra output through the translator into the sink; waits only when the sink asks to. */
  private async pipe(output: MastraOutput, context: PipeContext, queue?: ResumeQueue): Promise<void> {
    const { translator, capture, signal } = context;
    for await (const raw of output.fullStream) {
      if (signal.aborted) return;
      const chunk = raw as MastraChunk;
      context.lastWasPause = isPause(chunk);
      if (queue && this.resumesLater(chunk, queue)) continue;
      this.expectFrontendCall(chunk, context);
      // What the step's tools returned reaches the translator before the step ends.
      if (endsStep(chunk)) await this.translate(capture.take(), context);
      await this.translate(chunk, context);
      if (translator.finished) return;
    }
  }

  /**
   * The run's end once its stream is read: a chunk ended it already, or it paused for a human (its
   * interrupt ends it). A stream that simply stopped is a failure, never a success: Mastra 1.71
   * closes it that way when an error processor aborts, and says nothing of why.
   */
  private ending({ translator, lastWasPause }: PipeContext): Event[] {
    if (translator.finished || lastWasPause !== false) return translator.end();
    return translator.fail('The run stopped before it finished: Mastra ended its stream without a result', 'RUN_FAILED');
  }

  /** Translates one chunk into the sink; waits only when the sink asks to. */
  private async translate(chunk: MastraChunk | undefined, context: PipeContext): Promise<void> {
    if (!chunk) return;
    const { translator, write, state } = context;
    let events = translator.push(chunk);
    if (state && updatesWorkingMemory(chunk)) events.push(...(await state.changed()));
    if (translator.finished && translator.retracts) events = await this.retract(chunk, events, context);
    // Cut by an abort: the end goes out once Mastra has stored what it kept (`cut`). An abort
    // between two steps (`control.abort`, an interrupting run) ends the run with a plain `finish`.
    if (translator.finished && (chunk.type === 'abort' || this.cutBetweenSteps(context, events))) [context.cutEnd, events] = [events, []];
    if (events.length === 0) return;
    const drained = write(events);
    if (drained) await drained;
  }

  /** Whether an abort cut the run between two steps; if so, the end in `events` is made cancelled. */
  private cutBetweenSteps({ mastraRunId }: PipeContext, events: Event[]): boolean {
    return mastraRunId !== undefined && this.endings.wasCut(mastraRunId) && endAsCancelled(events, mastraRunId);
  }

  /**
   * The run showed an attempt Mastra did not keep (a processor turned it down or blocked it): the
   * blocked answer leaves storage too, and the thread as stored goes before the terminal event. A
   * run that stores nothing has no history to show; a history that fails to load is left out (the
   * client keeps the attempt on screen until its next snapshot).
   */
  private async retract(chunk: MastraChunk, events: Event[], { stored, runId }: PipeContext): Promise<Event[]> {
    if (!stored) return events;
    try {
      const step = blockedStep(chunk);
      if (step) await this.threads.dropBlockedStep(stored, step);
      return beforeTerminal(events, await this.threads.messages(stored, {}, 'agui'));
    } catch (error) {
      this.config.logger.warn(`Run ${runId}: what a processor discarded could not be retracted: ${errorMessage(error)}`);
      return events;
    }
  }

  /**
   * The end of a run cut short (an abort, an interrupting run, a shutdown). Mastra keeps what the
   * run had its own way (a step cut in its reasoning is dropped, a tool result the client never saw
   * is kept, the answer stored under another id), so once the run has wound down here (its partial
   * answer stored, within a bound), the thread as stored goes before the terminal event and the
   * client ends holding the history. A client that left reads nothing: no wait for it.
   */
  private async cut(context: PipeContext, clientSignal: AbortSignal): Promise<Event[]> {
    const events = context.cutEnd ?? context.translator.cancel();
    const { stored, mastraRunId, runId, translator, startedAt } = context;
    if (!stored || !mastraRunId || clientSignal.aborted) return events;
    await this.endings.ended(mastraRunId, Date.now() + WIND_DOWN_MS);
    try {
      const step = translator.cutStep;
      if (step) await this.threads.keepCutStep(stored, step, startedAt);
      return beforeTerminal(events, await this.threads.messages(stored, {}, 'agui'));
    } catch (error) {
      this.config.logger.warn(`Run ${runId}: what the cut run kept could not be read: ${errorMessage(error)}`);
      return events;
    }
  }

  /** A pause the client already answered is resumed instead of ending the run on it. */
  private resumesLater(chunk: MastraChunk, queue: ResumeQueue): boolean {
    if (!isPause(chunk)) return false;
    const answered = queue.waiting.get(chunk.payload.toolCallId);
    if (!answered) return false;
    queue.waiting.delete(chunk.payload.toolCallId);
    queue.next = answered;
    return true;
  }

  /**
   * Opens a frontend call's proxy slot before the client sees the call: when it first shows up,
   * not at the atomic `tool-call`, as `TOOL_CALL_END` goes out on `tool-call-input-streaming-end`,
   * before `tool-call`, and a client may answer at once.
   */
  private expectFrontendCall(chunk: MastraChunk, { runId, frontendTools, options }: PipeContext): void {
    if (options.frontendToolMode !== 'proxy') return;
    if (chunk.type !== 'tool-call' && chunk.type !== 'tool-call-input-streaming-start') return;
    if (frontendTools.has(chunk.payload.toolName)) this.proxy.expect(runId, chunk.payload.toolCallId, options.resourceId);
  }
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

/**
 * A `/run` sent again: its last message (activities and reasoning aside) is stored on the thread,
 * as a retry after a timeout sends it (`selectNewMessages` then finds nothing new).
 */
function isRetry(input: Message[], storedIds: ReadonlySet<string>): boolean {
  const last = input.findLast((m) => m.role !== 'activity' && m.role !== 'reasoning');
  return last !== undefined && storedIds.has(last.id);
}

const readOnly = (options: RunOptions): boolean => options.memoryOptions?.readOnly === true;

/** `RunAgentInput.state` as a state to store: an object, or none (`{}`) when absent. */
function clientState(state: unknown): AgentState {
  if (state === undefined || state === null) return {};
  if (typeof state !== 'object' || Array.isArray(state)) throw invalidInput('state must be a JSON object', [{ path: 'state', message: 'Expected an object' }]);
  return state as AgentState;
}

/**
 * The ids a client gave its new tool messages, where they differ from the one history would make
 * up: Mastra folds a tool message into its call and keeps no id for it.
 */
function clientToolMessageIds(fresh: Message[]): Record<string, string> {
  const ids: Record<string, string> = {};
  for (const m of fresh) if (m.role === 'tool' && m.id !== toolResultMessageId(m.toolCallId)) ids[m.toolCallId] = m.id;
  return ids;
}

/**
 * Mastra appends an answer to the latest stored assistant message when the run adds no message of
 * another role (it only answers tool calls): the answer then continues that message's segments.
 */
function appendTarget(messages: MastraInputMessage[], stored: MastraDBMessage[]): MessagePosition | undefined {
  const last = stored.at(-1);
  if (!last || last.role !== 'assistant' || messages.length === 0) return undefined;
  if (!messages.every((m) => m.role === 'tool' || m.role === 'assistant')) return undefined;
  return appendPosition(last);
}

/**
 * Refuses message ids that already belong to another thread: Mastra saves messages by id, so a
 * reused id would move that row (possibly another user's) into this thread.
 */
async function assertIdsFree(memory: MastraMemory, ids: string[], threadId: string): Promise<void> {
  if (ids.length === 0) return;
  const messages = await messagesById(memory, ids);
  const taken = messages.find((m) => m.threadId !== threadId);
  if (taken) throw conflict(`Message id ${taken.id} is already used by another thread`);
}
