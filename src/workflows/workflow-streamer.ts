import type { Mastra } from '@mastra/core';
import { inject, injectable } from 'inversify';
import { randomUUID } from 'node:crypto';
import { cancelWorkflowRun, resumeWorkflow, startWorkflow, storedWorkflowRun, type AnyWorkflow, type WorkflowOutput } from '../mastra/index.js';
import type { ResolvedConfig } from '../config.js';
import type { EventSink } from '../runs/prepared-run.js';
import { loggedRunFailure } from '../runs/run-failure.js';
import { StateEvents } from '../state/state-events.js';
import type { AgentState } from '../state/working-memory.js';
import { StreamingRuns } from '../threads/streaming-runs.js';
import { type ThreadScope, ThreadStore } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';
import { errorMessage } from '../text.js';
import { WorkflowTranslator } from '../translate/workflow-translator.js';
import { stepFactsOf, type Start, type WorkflowPlan } from './workflow-plan.js';
import { WorkflowThreads } from './workflow-threads.js';

/**
 * Streams prepared workflow `/run`s: each run started, resumed or cancelled in Mastra, its chunks
 * through `WorkflowTranslator` to the client and the thread's followers, the texts it finished
 * stored as it goes, its state events from what Mastra stores after each step. Each is open in
 * `StreamingRuns` while it streams, stoppable by an abort of its thread (in any process) and ended
 * cleanly by a shutdown.
 */
@injectable()
export class WorkflowStreamer {
  constructor(
    @inject(TOKENS.Config) private readonly config: ResolvedConfig,
    @inject(TOKENS.Mastra) private readonly mastra: Mastra,
    @inject(ThreadStore) private readonly threads: ThreadStore,
    @inject(StreamingRuns) private readonly streams: StreamingRuns,
    @inject(WorkflowThreads) private readonly workflowThreads: WorkflowThreads,
  ) {}

  async stream({ workflow, input, scope, start, turn, message }: WorkflowPlan, sink: EventSink, clientSignal: AbortSignal): Promise<void> {
    // Before the run is opened below: nothing awaited from there on runs outside its `finally`.
    const followers = await this.workflowThreads.openRun(workflow, scope);
    const identity = { agentId: workflow.id, origin: 'run' as const, threadId: scope.threadId, runId: input.runId, resourceId: scope.resourceId };
    const toClientAndFollowers: EventSink = (events) => {
      followers.write(events);
      return sink(events);
    };
    const run = this.streams.openRun(identity, toClientAndFollowers, clientSignal, { stoppable: true });
    const stopLease = turn.keep();
    const translator = new WorkflowTranslator({
      threadId: input.threadId,
      runId: input.runId,
      workflowId: workflow.id,
      mastraRunId: start.mastraRunId,
      messageIdBase: randomUUID(),
      // The message the run answers, for followers that did not send it (`RUN_STARTED.input`).
      ...(message && {
        input: {
          threadId: input.threadId,
          runId: input.runId,
          messages: [{ id: message.id, role: 'user' as const, content: message.text }],
          tools: [],
          context: [],
        },
      }),
      stepFacts: stepFactsOf(workflow),
    });
    try {
      await run.tracked.within(() => this.run(workflow, scope, start, translator, run.write, run.signal));
    } finally {
      stopLease();
      followers.close();
      await turn.release().catch(() => {
        // An outage: the lease lapses on its own within its TTL.
      });
      run.close();
    }
  }

  private async run(
    workflow: AnyWorkflow,
    scope: ThreadScope,
    start: Start,
    translator: WorkflowTranslator,
    write: EventSink,
    signal: AbortSignal,
  ): Promise<void> {
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
      const end = [
        ...((await state?.events.changed()) ?? []),
        ...(signal.aborted && result.status !== 'success' ? translator.cancelled() : translator.end(result)),
      ];
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

const typeOf = (chunk: unknown) => (chunk as { type?: unknown } | undefined)?.type;

/** Chunks by which the state a step set is stored: the next step starts (a `sleep` starts waiting), or one suspends. */
function startsOrStops(chunk: unknown): boolean {
  const type = typeOf(chunk);
  return type === 'workflow-step-start' || type === 'workflow-step-waiting' || type === 'workflow-step-suspended';
}

/** A step's end: what it set is stored by the next start. */
function endsStep(chunk: unknown): boolean {
  return typeOf(chunk) === 'workflow-step-result';
}
