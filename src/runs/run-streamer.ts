import { EventType, type Event, type Message, type RunAgentInput } from '@ag-ui/core';
import type { Agent } from '@mastra/core/agent';
import { inject, injectable } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import type { BridgeMetrics } from '../observability/metrics.js';
import { StateEvents } from '../state/state-events.js';
import type { DurableInbox } from '../threads/inbox.js';
import { StreamingRuns, type StreamingRun } from '../threads/streaming-runs.js';
import { TOKENS } from '../tokens.js';
import { RunTranslator } from '../translate/run-translator.js';
import { isReadOnly, type PreparedRun, type RunOptions } from './prepared-run.js';
import { ResultCapture } from './result-capture.js';
import { loggedRunFailure } from './run-failure.js';
import { RunHistory } from './run-history.js';
import type { RunContext, RunPlan } from './run-plan.js';
import { RunReader } from './run-reader.js';
import type { RunShape } from './stream-options.js';

/**
 * Streams prepared `/run`s: each one's translator and context, its opening events, its read
 * (`RunReader`), and its terminal event, whatever happens: after `RUN_STARTED`, every failure is a
 * `RUN_ERROR`. Each is open in `StreamingRuns` while it streams (tracked, counted, ended cleanly
 * by a shutdown).
 */
@injectable()
export class RunStreamer {
  constructor(
    @inject(TOKENS.Config) private readonly config: ResolvedConfig,
    @inject(TOKENS.Metrics) private readonly metrics: BridgeMetrics,
    @inject(StreamingRuns) private readonly streams: StreamingRuns,
    @inject(TOKENS.Inbox) private readonly inbox: DurableInbox,
    @inject(RunReader) private readonly reader: RunReader,
    @inject(RunHistory) private readonly history: RunHistory,
  ) {}

  /** The run `prepare` decided on, tracked (its span, metrics, end) while it streams. */
  prepared(agent: Agent, input: RunAgentInput, options: RunOptions, plan: RunPlan): PreparedRun {
    return {
      stream: (sink, clientSignal) => {
        const identity = { agentId: agent.id, origin: 'run' as const, threadId: input.threadId, runId: input.runId, resourceId: options.resourceId };
        const run = this.streams.openRun(identity, sink, clientSignal);
        return run.tracked.within(() => this.stream(agent, input, options, plan, run, clientSignal));
      },
    };
  }

  /**
   * A retried `/run` answered from storage (`messages`: the thread's history, with the answer as
   * stored so far): `RUN_STARTED`, `MESSAGES_SNAPSHOT`, `RUN_FINISHED`, under the request's ids.
   * It does not show on the thread's events stream.
   */
  replayed(input: RunAgentInput, messages: Message[]): PreparedRun {
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

  private async stream(agent: Agent, input: RunAgentInput, options: RunOptions, plan: RunPlan, run: StreamingRun, clientSignal: AbortSignal): Promise<void> {
    const stored = plan.memory && !isReadOnly(options) ? { threadId: input.threadId, resourceId: options.resourceId, agentId: agent.id } : undefined;
    const write = this.history.keepingRunEnd(run.write, stored, plan.inboxId);
    const { signal } = run;
    const context = openContext(input, options, plan, { write, stored, signal });
    await write([...context.translator.start(), ...((await context.state?.opening()) ?? [])]);
    try {
      await this.reader.read(agent, plan, shapeOf(input, options, plan), context);
      await this.history.keepWorkflowActivities(context);
      await write(signal.aborted || context.cutEnd ? await this.history.cut(context, clientSignal) : ending(context));
    } catch (error) {
      if (signal.aborted) {
        await this.history.keepWorkflowActivities(context);
        await write(await this.history.cut(context, clientSignal));
      } else {
        const { message, code } = loggedRunFailure(this.config.logger, `Run ${input.runId}`, error, 'RUN_FAILED');
        await write(context.translator.fail(message, code));
      }
    } finally {
      // No terminal event written means the run broke: the handler ends the stream with RUN_ERROR.
      run.close();
      this.reader.settle(input.runId, options.resourceId);
      if (!context.translator.finished) run.abort();
      if (plan.inboxId)
        await this.inbox.remove(input.threadId, [plan.inboxId]).catch(() => {
          // the sweep drops the entry once the history answers it
        });
    }
  }
}

/** The run's translator, result capture and state events, as reading and ending it share them. */
function openContext(input: RunAgentInput, options: RunOptions, plan: RunPlan, run: Pick<RunContext, 'write' | 'stored' | 'signal'>): RunContext {
  const frontendTools = new Set((input.tools ?? []).map((t) => t.name));
  const translator = new RunTranslator({
    threadId: input.threadId,
    runId: input.runId,
    mastraRunId: plan.mastraRunId,
    resumedToolCalls: plan.resume.map((target) => target.toolCallId),
    approvalToolCalls: plan.resume.filter((target) => target.requiresApproval).map((target) => target.toolCallId),
    frontendTools,
    frontendToolMode: options.frontendToolMode,
    appendsTo: plan.announcement.appendsTo,
    workflowActivities: plan.workflowActivities,
  });
  const { state: stateOf } = plan;
  // The opening read comes from the row prepare read, if any; every later one (the state moved) from storage.
  let row = stateOf?.row;
  const state =
    stateOf &&
    new StateEvents(() => {
      const known = row;
      row = undefined;
      return stateOf.store.read(stateOf.scope, known);
    });
  return { ...run, translator, capture: new ResultCapture(), runId: input.runId, frontendTools, options, state, startedAt: Date.now() };
}

/** What the run's Mastra options are built from, and no more: a resume may send it to another process. */
function shapeOf(input: RunAgentInput, options: RunOptions, plan: RunPlan): RunShape {
  const { threadId, runId, context, tools } = input;
  return {
    input: { threadId, runId, context, tools, state: input.state, forwardedProps: input.forwardedProps },
    resourceId: options.resourceId,
    frontendToolMode: options.frontendToolMode,
    ...(plan.memory && { memory: { ...(options.memoryOptions && { options: options.memoryOptions }), savePerStep: !isReadOnly(options) } }),
  };
}

/**
 * The run's end once its stream is read: a chunk ended it already, or it paused for a human (its
 * interrupt ends it). A stream that simply stopped is a failure, never a success: Mastra 1.71
 * closes it that way when an error processor aborts, and says nothing of why.
 */
function ending({ translator, lastWasPause }: RunContext): Event[] {
  if (translator.finished || lastWasPause !== false) return translator.end();
  return translator.fail('The run stopped before it finished: Mastra ended its stream without a result', 'RUN_FAILED');
}
