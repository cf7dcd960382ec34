import type { Mastra } from '@mastra/core';
import { inject, injectable } from 'inversify';
import type { z } from 'zod';
import type { ResolvedConfig } from '../config.js';
import { BridgeError, invalidInput, notFound } from '../errors.js';
import {
  agentSchedule,
  agentSchedules,
  createAgentSchedule,
  deleteSchedule,
  fireNow,
  scheduleTriggers,
  updateAgentSchedule,
  type AgentSchedule,
  type StoredTrigger,
} from '../mastra/index.js';
import { ThreadStore, type ThreadScope } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';
import { timingProblems } from './schedule-rules.js';
import type { CreateScheduleSchema, Schedule, ScheduleTrigger, UpdateScheduleSchema } from './schemas.js';

/** How many fires a trigger listing answers when the caller names no `limit`. */
const DEFAULT_TRIGGERS = 50;

/**
 * Mastra's cron on a thread (`mastra.schedules`), scoped to the caller's resource: a schedule
 * belongs to its thread's resource, and another resource's is `404 SCHEDULE_NOT_FOUND` on every
 * route, as one that does not exist. Every refusal (timing, the per-resource cap) comes before
 * anything is stored. A fire is Mastra's signal into the thread: a run on it like any other.
 *
 * @example
 * const schedule = await schedules.create({ threadId, resourceId, agentId }, { cron: '0 9 * * *', prompt: 'Plan my day', timezone: 'Europe/Oslo' });
 */
@injectable()
export class ThreadSchedules {
  constructor(
    @inject(TOKENS.Mastra) private readonly mastra: Mastra,
    @inject(TOKENS.Config) private readonly config: ResolvedConfig,
    @inject(ThreadStore) private readonly threads: ThreadStore,
  ) {}

  async create(scope: ThreadScope, body: z.output<typeof CreateScheduleSchema>): Promise<Schedule> {
    const { agent } = await this.threads.own(scope, 'read');
    this.checkTiming(body.cron, body.timezone);
    const mine = await agentSchedules(this.mastra, { resourceId: scope.resourceId });
    const cap = this.config.schedules.maxPerResource;
    if (mine.length >= cap) throw new BridgeError(409, 'LIMIT_REACHED', `A resource holds at most ${cap} schedules`);
    const { cron, prompt, timezone, name, signalType, ifActive, ifIdle, status, metadata } = body;
    const created = await createAgentSchedule(this.mastra, {
      agentId: agent.id,
      threadId: scope.threadId,
      resourceId: scope.resourceId,
      cron,
      prompt,
      ...defined({ timezone, name, signalType, ifActive, ifIdle, status, metadata }),
    });
    return scheduleView(created);
  }

  /** The thread's schedules, oldest first. */
  async ofThread(scope: ThreadScope): Promise<Schedule[]> {
    await this.threads.own(scope, 'read');
    return (await agentSchedules(this.mastra, { resourceId: scope.resourceId, threadId: scope.threadId })).sort(byCreation).map(scheduleView);
  }

  /** The caller's schedules on threads (an agent schedule made past the bridge may have none), newest first. */
  async ofResource(resourceId: string, filter: { agentId?: string; threadId?: string; status?: 'active' | 'paused' }): Promise<Schedule[]> {
    const found = await agentSchedules(this.mastra, { resourceId, ...defined(filter) });
    return found
      .filter((s) => s.threadId !== undefined)
      .sort(byCreation)
      .reverse()
      .map(scheduleView);
  }

  async get(resourceId: string, id: string): Promise<Schedule> {
    return scheduleView(await this.mine(resourceId, id));
  }

  /** Changes what the patch names; a patch refused changes nothing. */
  async update(resourceId: string, id: string, patch: Omit<z.output<typeof UpdateScheduleSchema>, 'resourceId'>): Promise<Schedule> {
    const current = await this.mine(resourceId, id);
    if (patch.cron !== undefined || patch.timezone !== undefined) this.checkTiming(patch.cron ?? current.cron, patch.timezone ?? current.timezone);
    return scheduleView(await updateAgentSchedule(this.mastra, id, defined(patch)));
  }

  async delete(resourceId: string, id: string): Promise<void> {
    await this.mine(resourceId, id);
    await deleteSchedule(this.mastra, id);
  }

  async setStatus(resourceId: string, id: string, status: 'active' | 'paused'): Promise<Schedule> {
    await this.mine(resourceId, id);
    return scheduleView(await updateAgentSchedule(this.mastra, id, { status }));
  }

  /** Fires the schedule once, now, whatever its status (a paused one stays paused). */
  async run(resourceId: string, id: string): Promise<{ scheduleId: string; triggeredAt: string }> {
    await this.mine(resourceId, id);
    const fired = await fireNow(this.mastra, id);
    return { scheduleId: fired.scheduleId, triggeredAt: iso(fired.scheduledFireAt) };
  }

  /** The schedule's fires, newest first. */
  async triggers(resourceId: string, id: string, limit = DEFAULT_TRIGGERS): Promise<ScheduleTrigger[]> {
    await this.mine(resourceId, id);
    return (await scheduleTriggers(this.mastra, id, limit)).map(triggerView);
  }

  /** The agent schedule `id` of the caller's; anything else (another resource's, a workflow's, none) is not found. */
  private async mine(resourceId: string, id: string): Promise<AgentSchedule & { threadId: string }> {
    const found = await agentSchedule(this.mastra, id);
    if (!found || found.resourceId !== resourceId || found.threadId === undefined) throw notFound('SCHEDULE_NOT_FOUND', `Schedule ${id} not found`);
    return found as AgentSchedule & { threadId: string };
  }

  private checkTiming(cron: string, timezone: string | undefined): void {
    const problems = timingProblems(cron, timezone, this.config.schedules.minIntervalSeconds);
    if (problems.length > 0) throw invalidInput(`The schedule's ${problems[0].path} is refused: ${problems[0].message}`, problems);
  }
}

const byCreation = (a: AgentSchedule, b: AgentSchedule) => a.createdAt - b.createdAt;
const iso = (ms: number) => new Date(ms).toISOString();

/** `value` without its `undefined` entries: Mastra stores what it is given, `undefined` included. */
function defined<T extends object>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}

/** A schedule as the routes answer it: times as ISO 8601. */
function scheduleView(s: AgentSchedule): Schedule {
  return {
    id: s.id,
    agentId: s.agentId,
    threadId: s.threadId ?? '',
    resourceId: s.resourceId ?? '',
    prompt: s.prompt,
    cron: s.cron,
    status: s.status,
    nextFireAt: iso(s.nextFireAt),
    createdAt: iso(s.createdAt),
    updatedAt: iso(s.updatedAt),
    ...defined({
      name: s.name,
      timezone: s.timezone,
      signalType: s.signalType,
      ifActive: s.ifActive as Schedule['ifActive'],
      ifIdle: s.ifIdle as Schedule['ifIdle'],
      lastFireAt: s.lastFireAt === undefined ? undefined : iso(s.lastFireAt),
      lastRunId: s.lastRunId,
      metadata: s.metadata,
    }),
  };
}

function triggerView(t: StoredTrigger): ScheduleTrigger {
  return {
    id: t.id ?? `${t.scheduleId}-${t.actualFireAt}`,
    scheduleId: t.scheduleId,
    scheduledFireAt: iso(t.scheduledFireAt),
    firedAt: iso(t.actualFireAt),
    kind: t.triggerKind === 'manual' ? 'manual' : 'schedule',
    outcome: t.outcome,
    ...defined({ runId: t.runId ?? undefined, error: t.error }),
  };
}
