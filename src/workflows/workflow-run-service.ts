import type { Interrupt, Message, RunAgentInput } from '@ag-ui/core';
import type { Mastra } from '@mastra/core';
import type { Agent } from '@mastra/core/agent';
import { inject, injectable } from 'inversify';
import { randomUUID } from 'node:crypto';
import {
  cancelWorkflowRun,
  check,
  findStep,
  jsonSchemaOf,
  resumeWorkflow,
  startWorkflow,
  storedWorkflowRun,
  workflowLeases,
  type AnyWorkflow,
  type Checked,
  type WorkflowOutput,
} from '../mastra/index.js';
import type { AgentProvider } from '../agents/agent-provider.js';
import type { ResolvedConfig } from '../config.js';
import type { FollowTarget, RunWriter, ThreadHub } from '../feed/thread-hub.js';
import { invalidInput, notFound, threadBusy, type ErrorDetail } from '../errors.js';
import type { BridgeMetrics } from '../observability/metrics.js';
import type { RunTracker } from '../observability/run-tracker.js';
import { countedSink, type EventSink, type PreparedRun, type RunOptions } from '../runs/prepared-run.js';
import { StateEvents } from '../state/state-events.js';
import type { AgentState } from '../state/working-memory.js';
import type { ThreadControl } from '../threads/thread-control.js';
import type { PendingInterrupts } from '../threads/pending-interrupts.js';
import { keepLease, takeLeasedTurn, type ThreadTurn } from '../threads/thread-lease.js';
import type { ThreadScope, ThreadStore } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';
import { loggedRunFailure } from '../runs/run-failure.js';
import { parseWorkflowInterruptId } from '../translate/ids.js';
import { WorkflowTranslator, workflowInterrupts, type SuspendedStepFacts } from '../translate/workflow-translator.js';
import { errorMessage } from '../text.js';
import { lastUserText, workflowInput } from './workflow-input.js';

/** What a prepared workflow run starts: a new run with its input, or a suspended one resumed. */
type Start =
  | { kind: 'start'; mastraRunId: string; inputData: unknown; initialState?: unknown }
  | { kind: 'resume'; mastraRunId: string; interruptId: string; stepPath: string[]; resumeData: unknown }
  | { kind: 'cancel'; mastraRunId: string; interruptId: string };

/** A prepared run: what `stream` runs, on which thread, with the new user message it answers (if any). */
interface WorkflowPlan {
  workflow: AnyWorkflow;
  input: RunAgentInput;
  scope: ThreadScope;
  start: Start;
  turn: ThreadTurn;
  message?: { id: string; text: string };
}

/**
 * Runs a Mastra workflow for `POST /run` (API.md "Workflows"): the input and state are checked
 * against the workflow's schemas, and a resume against the suspended step's, before a byte is
 * streamed (a refused request stores nothing); the run takes the thread as an agent's run does
 * (Mastra's thread lease, `multitask`), stores the user message first and what it said last,
 * and streams through `WorkflowTranslator`. The run's state events come from the state Mastra
 * stores after each step.
 *
 * @example
 * const run = await workflowRuns.prepare(workflow, input, { resourceId: 'user-1', multitask: 'enqueue', frontendToolMode: 'proxy' });
 * await run.stream((events) => out.send(events), abortSignal);
 */
@injectable()
export class WorkflowRunService {
  /** Controllers of the runs streaming now, by thread, so that an abort or a shutdown can end each one cleanly. */
  private readonly active = new Map<string, AbortController>();

  constructor(
    @inject(TOKENS.Config) private readonly config: ResolvedConfig,
    @inject(TOKENS.Mastra) private readonly mastra: Mastra,
    @inject(TOKENS.ThreadStore) private readonly threads: ThreadStore,
    @inject(TOKENS.ThreadControl) private readonly control: ThreadControl,
    @inject(TOKENS.Metrics) private readonly metrics: BridgeMetrics,
    @inject(TOKENS.PendingInterrupts) private readonly interrupts: PendingInterrupts,
    @inject(TOKENS.AgentProvider) private readonly agents: AgentProvider,
    @inject(TOKENS.ThreadHub) private readonly hub: ThreadHub,
    @inject(TOKENS.RunTracker) private readonly tracker: RunTracker,
  ) {}

  /** How many workflow `/run`s are streaming now. */
  get inFlight(): number {
    return this.active.size;
  }

  /** Cancels every open run: each stream ends with `RUN_FINISHED { outcome: cancelled }`. */
  shutdown(): void {
    for (const controller of this.active.values()) controller.abort(new Error('The server is shutting down'));
  }

  /**
   * `POST /threads/:threadId/abort` on a workflow's thread: cancels its run streaming here, or
   * else its run suspended on a person, as new input supersedes it (`PendingInterrupts`: taken
   * once, so a resume at the same moment either wins or finds it no longer waiting).
   */
  async abort(scope: ThreadScope): Promise<{ aborted: boolean }> {
    await this.threads.get(scope);
    const streaming = this.active.get(threadKey(scope));
    streaming?.abort(new Error('Aborted'));
    return { aborted: streaming !== undefined || (await this.interrupts.supersedeWorkflow(scope)).length > 0 };
  }

  async prepare(workflow: AnyWorkflow, input: RunAgentInput, options: RunOptions): Promise<PreparedRun> {
    const scope: ThreadScope = { threadId: input.threadId, resourceId: options.resourceId, agentId: workflow.id };
    await this.threads.assertNotForeign(scope);
    const start = input.resume?.length ? await this.resumeOf(workflow, input, options.resourceId) : await this.startOf(workflow, input);
    const message = start.kind === 'start' ? await this.newUserMessage(input, scope) : undefined;
    // Every check comes before the first write: a refused request stores nothing (API.md).
    // `interrupt` cuts the thread's workflow run streaming here, then waits for the thread as `enqueue` does.
    if (options.multitask === 'interrupt') this.active.get(threadKey(scope))?.abort(new Error('Interrupted by a new run'));
    const leases = workflowLeases(this.mastra);
    const reject = options.multitask === 'reject';
    const turn = await takeLeasedTurn(leases, scope, input.runId, reject ? 0 : this.config.threadBusyWaitMs, reject ? threadBusy : undefined);
    try {
      // The interrupt is taken last, once the run has the thread: a refused run leaves it waiting.
      if (start.kind !== 'start' && !(await this.control.once(start.interruptId, async () => true))) throw notWaiting(start.interruptId);
      // New input supersedes the workflow run that waits on a person (API.md), or that a crash cut: it is cancelled.
      if (start.kind === 'start') await this.interrupts.supersedeWorkflow(scope, { holdingThread: true });
      await this.threads.claim(scope);
      if (message) await this.threads.storeInput(scope, [{ id: message.id, role: 'user', content: message.text }]);
      await this.threads.rememberWorkflowRun(scope, { workflowId: workflow.id, runId: start.mastraRunId });
    } catch (error) {
      await turn.release();
      throw error;
    }
    const plan: WorkflowPlan = { workflow, input, scope, start, turn, message };
    return { stream: (write, signal) => this.stream(plan, write, signal) };
  }

  /**
   * The interrupts the thread's latest run of `workflow` waits on (none unless it is suspended):
   * what a thread's snapshot ends with, as the run's own `RUN_FINISHED` did.
   */
  async pendingInterrupts(workflow: AnyWorkflow, scope: ThreadScope): Promise<Interrupt[]> {
    const latest = await this.threads.latestWorkflowRun(scope, workflow.id);
    if (latest?.stored.status !== 'suspended') return [];
    return workflowInterrupts({ workflowId: workflow.id, mastraRunId: latest.runId, stepFacts: stepFactsOf(workflow) }, latest.stored.suspended);
  }

  /**
   * Whether the thread's latest run of `workflow` got to an end of its own, as storage says: how a
   * follower settles a run whose process died (a run cut mid-step is still `running` there).
   */
  async latestRunEnded(workflow: AnyWorkflow, scope: ThreadScope): Promise<boolean> {
    const status = (await this.threads.latestWorkflowRun(scope, workflow.id))?.stored.status;
    return status !== undefined && status !== 'running' && status !== 'failed';
  }

  /** The thread's state: what its latest run of `workflow` stored last (`{}` before any). */
  async state(workflow: AnyWorkflow, scope: ThreadScope): Promise<AgentState> {
    await this.threads.assertNotForeign(scope);
    const latest = await this.threads.latestWorkflowRun(scope, workflow.id);
    return (latest?.stored.state ?? {}) as AgentState;
  }

  /**
   * What `GET /threads/:id/events` follows on a workflow's thread: the workflow's feed, where its
   * runs are written (`openRun`), with its state. `agent` is the one that keeps the thread's memory.
   */
  followTarget(workflow: AnyWorkflow, scope: ThreadScope, agent: Agent): FollowTarget {
    const following = {
      id: workflow.id,
      loadState: () => this.state(workflow, scope),
      loadInterrupts: () => this.pendingInterrupts(workflow, scope),
      latestRunEnded: () => this.latestRunEnded(workflow, scope),
    };
    return { agent, threadId: scope.threadId, resourceId: scope.resourceId, workflow: following };
  }

  /** The thread's followers, here and in other processes; not reaching them (an outage) costs them this run, not the run. */
  private async followers(workflow: AnyWorkflow, scope: ThreadScope): Promise<RunWriter> {
    try {
      const { agent } = await this.agents.withMemory(workflow.id);
      return await this.hub.openRun(this.followTarget(workflow, scope, agent));
    } catch (error) {
      this.config.logger.warn(`Workflow run on thread ${scope.threadId}: its followers will not see it: ${errorMessage(error)}`);
      return { write: () => {}, close: () => {} };
    }
  }

  /** A new run: its input and initial state, checked against the workflow's schemas. */
  private async startOf(workflow: AnyWorkflow, input: RunAgentInput): Promise<Start> {
    const data = workflowInput(input, jsonSchemaOf(workflow.inputSchema));
    const inputData = refuseInvalid(await check(workflow.inputSchema, data), 'input', `Input for workflow ${workflow.id} does not fit its input schema`);
    const given = input.state && typeof input.state === 'object' && Object.keys(input.state).length > 0 ? input.state : undefined;
    const initialState = workflow.stateSchema
      ? refuseInvalid(await check(workflow.stateSchema, given ?? {}), 'state', `State for workflow ${workflow.id} does not fit its state schema`)
      : undefined;
    return { kind: 'start', mastraRunId: randomUUID(), inputData, initialState };
  }

  /**
   * A resume: the interrupt must name a step of this workflow that waits on this thread's
   * resource (`404 RUN_NOT_FOUND` otherwise), and its payload must fit the step's resume schema
   * (`400`, the workflow still suspended). `prepare` then takes it, once, in any process: a
   * second resume of it is refused as not waiting.
   */
  private async resumeOf(workflow: AnyWorkflow, input: RunAgentInput, resourceId: string): Promise<Start> {
    const entries = input.resume ?? [];
    if (entries.length > 1) throw invalidInput('A workflow run resumes one interrupt at a time', [{ path: 'resume', message: `${entries.length} entries, at most 1` }]);
    const [entry] = entries;
    const parsed = parseWorkflowInterruptId(entry.interruptId);
    if (!parsed) throw notWaiting(entry.interruptId);
    const stored = await storedWorkflowRun(this.mastra, workflow, parsed.mastraRunId);
    const waiting = stored?.status === 'suspended' && stored.resourceId === resourceId && stored.suspended.some((s) => s.path.join('.') === parsed.stepPath.join('.'));
    if (!waiting || (await this.control.taken(entry.interruptId))) throw notWaiting(entry.interruptId);
    const { mastraRunId, stepPath } = parsed;
    if (entry.status === 'cancelled') return { kind: 'cancel', mastraRunId, interruptId: entry.interruptId };
    const step = findStep(workflow, stepPath);
    const resumeData = refuseInvalid(await check(step?.resumeSchema, entry.payload ?? {}), 'resume.0.payload', `The answer to interrupt ${entry.interruptId} does not fit the step's resume schema`);
    return { kind: 'resume', mastraRunId, interruptId: entry.interruptId, stepPath, resumeData };
  }

  /** The last user message, when it is new to the thread: what the run answers, stored before it starts. */
  private async newUserMessage(input: RunAgentInput, scope: ThreadScope): Promise<{ id: string; text: string } | undefined> {
    const last = input.messages.findLast((m: Message) => m.role === 'user');
    const text = last && lastUserText([last]);
    if (!last || text === undefined) return undefined;
    const stored = await this.threads.storedIds(scope, [last.id]).catch(() => new Set<string>());
    return stored.has(last.id) ? undefined : { id: last.id, text };
  }

  private async stream({ workflow, input, scope, start, turn, message }: WorkflowPlan, sink: EventSink, clientSignal: AbortSignal): Promise<void> {
    // Before the run is registered below: nothing awaited from there on runs outside its `finally`.
    const followers = await this.followers(workflow, scope);
    const controller = new AbortController();
    const onClientAbort = () => controller.abort(clientSignal.reason);
    clientSignal.addEventListener('abort', onClientAbort, { once: true });
    this.active.set(threadKey(scope), controller);
    const leases = workflowLeases(this.mastra);
    const stopLease = keepLease(leases, scope, input.runId);
    const { write, terminal } = countedSink(this.metrics, (events) => {
      followers.write(events);
      return sink(events);
    });
    const translator = new WorkflowTranslator({
      threadId: input.threadId,
      runId: input.runId,
      workflowId: workflow.id,
      mastraRunId: start.mastraRunId,
      // The message the run answers, for followers that did not send it (`RUN_STARTED.input`).
      ...(message && { input: { threadId: input.threadId, runId: input.runId, messages: [{ id: message.id, role: 'user' as const, content: message.text }], tools: [], context: [] } }),
      stepFacts: stepFactsOf(workflow),
    });
    const tracked = this.tracker.start({ agentId: workflow.id, origin: 'run', threadId: scope.threadId, runId: input.runId, resourceId: scope.resourceId });
    try {
      await tracked.within(() => this.run(workflow, scope, start, translator, write, controller.signal));
    } finally {
      stopLease();
      followers.close();
      await turn.release().catch(() => {
        // An outage: the lease lapses on its own within its TTL.
      });
      clientSignal.removeEventListener('abort', onClientAbort);
      if (this.active.get(threadKey(scope)) === controller) this.active.delete(threadKey(scope));
      tracked.ended(terminal());
    }
  }

  private async run(workflow: AnyWorkflow, scope: ThreadScope, start: Start, translator: WorkflowTranslator, write: EventSink, signal: AbortSignal): Promise<void> {
    const target = { runId: start.mastraRunId, resourceId: scope.resourceId };
    const state = workflow.stateSchema ? this.stateEvents(workflow, start) : undefined;
    const keep = this.textsKeeper(scope, translator);
    await write([...translator.start(), ...((await state?.events.opening()) ?? [])]);
    let output: WorkflowOutput | undefined;
    try {
      if (start.kind === 'cancel') {
        await cancelWorkflowRun(workflow, target);
        await write(translator.cancelled());
        return;
      }
      output = start.kind === 'start' ? await startWorkflow(workflow, target, start) : await resumeWorkflow(workflow, target, start);
      const cancel = () =>
        void output?.cancel().catch(() => {
          // A run that ended meanwhile has nothing to cancel; one that did not ends with the stream.
        });
      if (signal.aborted) cancel();
      signal.addEventListener('abort', cancel, { once: true });
      let stepEnded = false;
      for await (const chunk of output.fullStream) {
        const events = translator.chunk(chunk);
        // The state a step set is stored by the time the next one starts (or the run stops there).
        if (state && stepEnded && startsOrStops(chunk)) events.unshift(...(await state.events.changed()));
        stepEnded = endsStep(chunk) || (stepEnded && !startsOrStops(chunk));
        // A text a step finished is stored before its end is sent: what was said outlives a crash.
        await keep();
        if (events.length > 0) await write(events);
      }
      const result = await output.result;
      if (result.state !== undefined) state?.settle(result.state);
      const end = [...((await state?.events.changed()) ?? []), ...(signal.aborted && result.status !== 'success' ? translator.cancelled() : translator.end(result))];
      await keep();
      await write(end);
    } catch (error) {
      const failure = loggedRunFailure(this.config.logger, `Workflow run ${start.mastraRunId} of ${workflow.id}`, error, 'WORKFLOW_FAILED');
      await keep().catch((stored: unknown) => {
        this.config.logger.warn(`Workflow run ${start.mastraRunId}: what it streamed was not stored: ${errorMessage(stored)}`);
      });
      await write(signal.aborted ? translator.cancelled() : translator.broke(failure.message, failure.code));
    }
  }

  /** Stores the texts the run finished since it last did (each once, under its streamed id). */
  private textsKeeper(scope: ThreadScope, translator: WorkflowTranslator): () => Promise<void> {
    let stored = 0;
    return async () => {
      // Per chunk: most finish no text, and cost one comparison.
      if (translator.messages.length === stored) return;
      const fresh = translator.messages.slice(stored);
      await this.threads.storeAnswer(scope, fresh);
      stored += fresh.length;
    };
  }

  /**
   * The run's state events: its initial state at the start (a resumed run: the stored one), then
   * what Mastra stored after each step, and the run's final state, once `settle` gives it.
   */
  private stateEvents(workflow: AnyWorkflow, start: Start): { events: StateEvents; settle(final: unknown): void } {
    let initial = start.kind === 'start' ? start.initialState : undefined;
    let final: unknown;
    const read = async (): Promise<AgentState | undefined> => {
      if (final !== undefined) return final as AgentState;
      if (initial !== undefined) {
        const value = initial;
        initial = undefined;
        return value as AgentState;
      }
      // A read that fails sends no state event: the next step's, or the run's end, says it.
      const stored = await storedWorkflowRun(this.mastra, workflow, start.mastraRunId).catch(() => undefined);
      return stored?.state as AgentState | undefined;
    };
    return { events: new StateEvents(read), settle: (value) => (final = value) };
  }
}

const notWaiting = (interruptId: string) => notFound('RUN_NOT_FOUND', `Nothing is waiting for interrupt ${interruptId} on this thread`);

const threadKey = (scope: ThreadScope) => `${scope.resourceId}\0${scope.threadId}`;

const typeOf = (chunk: unknown) => (chunk as { type?: unknown } | undefined)?.type;

/** Chunks by which the state a step set is stored: the next step starts, or one suspends. */
function startsOrStops(chunk: unknown): boolean {
  return typeOf(chunk) === 'workflow-step-start' || typeOf(chunk) === 'workflow-step-suspended';
}

/** A step's end: what it set is stored by the next start. */
function endsStep(chunk: unknown): boolean {
  return typeOf(chunk) === 'workflow-step-result';
}

/** A schema's verdict: the parsed value, or `400 INVALID_INPUT` naming each field, under `root`. */
function refuseInvalid(checked: Checked, root: string, message: string): unknown {
  if (checked.ok) return checked.value;
  const details: ErrorDetail[] = checked.issues.map((issue) => ({ path: issue.path ? `${root}.${issue.path}` : root, message: issue.message }));
  throw invalidInput(`${message}: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}`, details);
}

/** What a workflow's suspended steps expect, by path: the step's resume schema and description. */
function stepFactsOf(workflow: AnyWorkflow): (path: readonly string[]) => SuspendedStepFacts {
  return (path) => {
    const step = findStep(workflow, path);
    const responseSchema = jsonSchemaOf(step?.resumeSchema);
    return { ...(responseSchema && { responseSchema }), ...(step?.description && { description: step.description }) };
  };
}
