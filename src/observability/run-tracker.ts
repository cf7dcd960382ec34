import { EventType, type Event } from '@ag-ui/core';
import { context, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { inject, injectable, multiInject, optional } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import { TOKENS } from '../tokens.js';
import { terminalOutcome, type BridgeMetrics, type RunOrigin, type RunOutcome } from './metrics.js';

/** Which run: what its span, its metrics and its webhook name it by. */
export interface RunIdentity {
  /** The agent's id, or the workflow's. */
  agentId: string;
  origin: RunOrigin;
  threadId: string;
  runId: string;
  resourceId: string;
  /** The message (or signal) the run answers, as the thread stores it, when it answers one. */
  inputId?: string;
  /** The schedule whose fire woke the run (`origin: 'schedule'`). */
  scheduleId?: string;
  /** When the run started, where it began before the bridge heard of it (a schedule's fire: at its end). */
  startedAt?: Date;
}

/** A run that ended, whoever started it: what the metrics count and the webhooks tell. */
export interface RunEnd extends RunIdentity {
  outcome: RunOutcome;
  /** The run's terminal event where the bridge streamed it (`RUN_FINISHED` or `RUN_ERROR`). */
  terminal?: Event;
  /** Why it failed, where no terminal event says it (a run a signal woke). */
  error?: { code: string; message: string };
}

/**
 * Told of every run's end (after its terminal event is written), in the process that ran it.
 * Bound with `TOKENS.RunEndListener`; any number may be.
 *
 * @example
 * bind<RunEndListener>(TOKENS.RunEndListener).toConstantValue({ runEnded: (end) => audit.log(end) });
 */
export interface RunEndListener {
  /** Must not throw, nor make the run wait: a listener that writes somewhere does it on its own time. */
  runEnded(end: RunEnd): void;
}

/** Why a run failed: its `RUN_ERROR`'s code and message, else the error it reported; none when it did not fail. */
export function failureOf(end: Pick<RunEnd, 'terminal' | 'error'>): RunEnd['error'] {
  if (end.terminal?.type === EventType.RUN_ERROR) return { code: end.terminal.code ?? 'RUN_FAILED', message: end.terminal.message };
  return end.error;
}

/** The name of the bridge's tracer (its instrumentation scope). */
export const TRACER_NAME = 'mastra-agui-bridge';

/**
 * One run, start to end: its span (`agui.run`, a child of the request's span or of the context a
 * message carried), its count in the metrics, and the listeners told of its end.
 */
export class TrackedRun {
  private done = false;

  constructor(
    private readonly run: RunIdentity,
    private readonly span: Span,
    private readonly active: Context,
    private readonly report: (end: RunEnd) => void,
  ) {}

  /** Runs `fn` with the run's span active: what Mastra does inside (agent, model, tools) are its children. */
  within<T>(fn: () => T): T {
    return context.with(this.active, fn);
  }

  /** A streamed run's end, from its terminal event; none written means it broke (the handler ends the stream with `RUN_ERROR`). */
  ended(terminal: Event | undefined): void {
    if (!terminal) this.endWith({ outcome: 'error', error: { code: 'RUN_FAILED', message: 'The run ended without a terminal event' } });
    else this.endWith({ outcome: terminalOutcome(terminal) ?? 'error', terminal });
  }

  /** The end of a run the bridge did not stream (one a signal woke: Mastra streams it). */
  endWith(end: Pick<RunEnd, 'outcome' | 'terminal' | 'error'>): void {
    if (this.done) return;
    this.done = true;
    this.span.setAttribute('agui.outcome', end.outcome);
    const failure = failureOf(end);
    if (failure) this.span.setStatus({ code: SpanStatusCode.ERROR, message: `${failure.code}: ${failure.message}` });
    this.span.end();
    this.report({ ...this.run, ...end });
  }
}

/**
 * Where every kind of run (a `/run`, a workflow's, one a signal woke) starts and ends: its span on
 * the host's tracer provider (`config.tracerProvider`, else the global one: a no-op until an
 * OpenTelemetry SDK is registered), the metrics, and the `RunEndListener`s.
 */
@injectable()
export class RunTracker {
  private readonly tracer: Tracer;

  constructor(
    @inject(TOKENS.Config) config: ResolvedConfig,
    @inject(TOKENS.Metrics) private readonly metrics: BridgeMetrics,
    @multiInject(TOKENS.RunEndListener) @optional() private readonly listeners: RunEndListener[] = [],
  ) {
    this.tracer = (config.tracerProvider ?? trace.getTracerProvider()).getTracer(TRACER_NAME);
  }

  start(run: RunIdentity): TrackedRun {
    this.metrics.runStarted(run.agentId, run.origin);
    const span = this.tracer.startSpan('agui.run', {
      attributes: {
        'agui.thread_id': run.threadId,
        'agui.run_id': run.runId,
        'agui.agent_id': run.agentId,
        'agui.resource_id': run.resourceId,
        'agui.origin': run.origin,
        ...(run.scheduleId !== undefined && { 'agui.schedule_id': run.scheduleId }),
      },
      ...(run.startedAt && { startTime: run.startedAt }),
    });
    return new TrackedRun(run, span, trace.setSpan(context.active(), span), (end) => this.report(end));
  }

  private report(end: RunEnd): void {
    this.metrics.runEnded(end.agentId, end.origin, end.outcome);
    for (const listener of this.listeners) listener.runEnded(end);
  }
}
