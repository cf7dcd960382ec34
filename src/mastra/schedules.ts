import type { Mastra } from '@mastra/core';
import type { AgentSchedule, CreateAgentScheduleInput, UpdateAgentScheduleInput } from '@mastra/core/schedules';
import type { ThreadTarget } from './runs.js';
import { discardNotifications } from './signals.js';

export type { AgentSchedule, CreateAgentScheduleInput, UpdateAgentScheduleInput };
export { computeNextFireAt, validateCron } from '@mastra/core/workflows';

/** One fire of a schedule, as Mastra's storage keeps it. */
export interface StoredTrigger {
  id?: string;
  scheduleId: string;
  runId: string | null;
  scheduledFireAt: number;
  actualFireAt: number;
  outcome: string;
  error?: string;
  triggerKind?: string;
}

/**
 * The door into Mastra's schedules (`mastra.schedules`, 1.71): agent schedules only, as the
 * bridge serves them. A workflow schedule is never answered here, so no route reaches one.
 *
 * @example
 * const schedule = await createAgentSchedule(mastra, { agentId: 'demo', cron: '0 9 * * *', prompt: 'Plan my day', threadId, resourceId });
 */
export function createAgentSchedule(mastra: Mastra, input: CreateAgentScheduleInput): Promise<AgentSchedule> {
  return mastra.schedules.create(input);
}

/** The agent schedule `id`, if there is one. */
export async function agentSchedule(mastra: Mastra, id: string): Promise<AgentSchedule | undefined> {
  const found = await mastra.schedules.get(id);
  return found?.agentId === undefined ? undefined : found;
}

/** The agent schedules of a resource, of one of its threads if given. */
export async function agentSchedules(
  mastra: Mastra,
  filter: { resourceId: string; threadId?: string; agentId?: string; status?: 'active' | 'paused' },
): Promise<AgentSchedule[]> {
  const found = await mastra.schedules.list(filter);
  return found.filter((s): s is AgentSchedule => s.agentId !== undefined);
}

export async function updateAgentSchedule(mastra: Mastra, id: string, patch: UpdateAgentScheduleInput): Promise<AgentSchedule> {
  return (await mastra.schedules.update(id, patch)) as AgentSchedule;
}

export function deleteSchedule(mastra: Mastra, id: string): Promise<void> {
  return mastra.schedules.delete(id);
}

/** Fires the schedule once, now, whatever its status. */
export function fireNow(mastra: Mastra, id: string): Promise<{ scheduleId: string; scheduledFireAt: number }> {
  return mastra.schedules.run(id);
}

/** The schedule's fires, newest first. */
export async function scheduleTriggers(mastra: Mastra, id: string, limit: number): Promise<StoredTrigger[]> {
  const store = await mastra.getStorage()?.getStore('schedules');
  return store ? await store.listTriggers(id, { limit }) : [];
}

/** Deletes every schedule of the thread (the thread is going away: nothing may fire into a thread made again under its id). */
async function deleteThreadSchedules(mastra: Mastra, thread: ThreadTarget): Promise<void> {
  if (!mastra.getStorage()) return; // no storage, no schedules
  for (const schedule of await mastra.schedules.list({ threadId: thread.threadId })) await mastra.schedules.delete(schedule.id);
}

/** What Mastra keeps past a thread (its pending notifications, its schedules), let go of: none may reach a thread made again under its id. */
export async function releaseThread(mastra: Mastra, thread: ThreadTarget): Promise<void> {
  await Promise.all([discardNotifications(mastra, thread), deleteThreadSchedules(mastra, thread)]);
}
