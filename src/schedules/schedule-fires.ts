import type { ScheduleAbortContext, ScheduleErrorContext, ScheduleFinishContext } from '@mastra/core/schedules';
import { inject, injectable } from 'inversify';
import type { BridgeMetrics } from '../observability/metrics.js';
import { RunTracker, type RunEnd } from '../observability/run-tracker.js';
import { errorMessage } from '../text.js';
import { TOKENS } from '../tokens.js';

/** What every hook is told of a fire. */
type Fire = Pick<ScheduleFinishContext, 'agentId' | 'schedule' | 'trigger' | 'effective'>;

/**
 * A schedule's fires, as Mastra's schedule hooks report them (`bridge.scheduleHooks()` given to
 * `new Mastra({ schedules })`): each is counted by outcome (`schedule_fires_total`), and a fire
 * that woke a run of its own is tracked as runs are, `origin: 'schedule'` with its schedule's id:
 * its span (from the fire), the run metrics, and its end as a webhook. A fire delivered into a run
 * already streaming is that run's: its end is reported where that run started.
 */
@injectable()
export class ScheduleFires {
  constructor(
    @inject(RunTracker) private readonly tracker: RunTracker,
    @inject(TOKENS.Metrics) private readonly metrics: BridgeMetrics,
  ) {}

  finished(ctx: ScheduleFinishContext): void {
    this.metrics.scheduleFired(ctx.outcome);
    if (ctx.outcome === 'succeeded' && ctx.runId && !ctx.joinedExistingRun) this.ended(ctx, ctx.runId, { outcome: 'success' });
  }

  failed(ctx: ScheduleErrorContext): void {
    this.metrics.scheduleFired('failed');
    const error = { code: 'RUN_FAILED', message: errorMessage(ctx.error) };
    if (ctx.runId && ctx.effective) this.ended({ ...ctx, effective: ctx.effective }, ctx.runId, { outcome: 'error', error });
  }

  aborted(ctx: ScheduleAbortContext): void {
    this.metrics.scheduleFired('aborted');
    this.ended(ctx, ctx.runId, { outcome: 'cancelled' });
  }

  private ended(fire: Fire, runId: string, end: Pick<RunEnd, 'outcome' | 'error'>): void {
    const { threadId, resourceId } = fire.effective;
    if (threadId === undefined || resourceId === undefined) return; // a threadless schedule: not one of the bridge's
    const identity = { agentId: fire.agentId, origin: 'schedule' as const, threadId, resourceId, runId, scheduleId: fire.schedule.id };
    this.tracker.start({ ...identity, startedAt: fire.trigger.firedAt }).endWith(end);
  }
}
