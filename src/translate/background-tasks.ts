import { EventType, type Event } from '@ag-ui/core';
import { backgroundTaskId } from './ids.js';
import type { BackgroundOutcome, ToolCalls } from './tool-calls.js';
import { errorMessage } from '../text.js';

/** A `background-task-*` chunk's payload, as far as the bridge reads it. */
type TaskPayload = BackgroundOutcome & { taskId?: string };

const TYPE_PREFIX = 'background-task-';

/** Whether a chunk type is one of Mastra's task-manager chunks (`background-task-running`, …). */
export function isBackgroundTaskType(type: string): boolean {
  return type.startsWith(TYPE_PREFIX);
}

/**
 * The background tasks a run's calls start, each shown as a `background-task` activity: a snapshot
 * when first seen, then a delta per new status, the outcome added when it ends. A task's end is also
 * its call's result (`ToolCalls.backgroundResult`).
 *
 * @example
 * const tasks = new BackgroundTasks(calls);
 * tasks.update('background-task-running', { taskId: 't1', toolCallId: 'call-1' }, out); // ACTIVITY_SNAPSHOT
 * tasks.update('background-task-completed', { taskId: 't1', toolCallId: 'call-1', result: 42 }, out);
 */
export class BackgroundTasks {
  /** Last status sent per task. */
  private readonly statuses = new Map<string, string>();

  constructor(private readonly calls: ToolCalls) {}

  update(type: string, payload: unknown, out: Event[]): void {
    const task = (payload ?? {}) as TaskPayload;
    const status = type.slice(TYPE_PREFIX.length);
    // Streamed tool output is not a status: it would overwrite `running`; the result comes with `completed`.
    if (!task.taskId || status === 'output') return;
    if (task.toolCallId) this.calls.runsInBackground(task.toolCallId);
    const outcome = {
      ...(task.result !== undefined && { result: task.result }),
      ...(task.error !== undefined && { error: errorMessage(task.error) }),
    };
    const known = this.statuses.get(task.taskId);
    // The task manager's stream repeats a state it already sent (e.g. `running` on subscribe): skip it.
    if (known === status && Object.keys(outcome).length === 0) return;
    this.statuses.set(task.taskId, status);
    if (status === 'completed' || status === 'failed') this.calls.backgroundResult(task, status === 'failed', out);
    // A task first seen at its end (its run already bracketed elsewhere) must still carry the outcome.
    out.push(known === undefined ? snapshot(task.taskId, task, status, outcome) : delta(task.taskId, status, outcome));
  }
}

function snapshot(taskId: string, task: TaskPayload, status: string, outcome: Record<string, unknown>): Event {
  const content = { taskId, toolName: task.toolName, toolCallId: task.toolCallId, status, ...outcome };
  return { type: EventType.ACTIVITY_SNAPSHOT, messageId: backgroundTaskId(taskId), activityType: 'background-task', content };
}

function delta(taskId: string, status: string, outcome: Record<string, unknown>): Event {
  const patch: Array<{ op: 'replace' | 'add'; path: string; value: unknown }> = [{ op: 'replace', path: '/status', value: status }];
  for (const [key, value] of Object.entries(outcome)) patch.push({ op: 'add', path: `/${key}`, value });
  return { type: EventType.ACTIVITY_DELTA, messageId: backgroundTaskId(taskId), activityType: 'background-task', patch };
}
