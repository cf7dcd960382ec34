import { z } from 'zod';
import type { StorageThreadType } from '../mastra/index.js';
import type { HistoryContext, StoredBackgroundTask, ToolMessageIds } from '../translate/history.js';
import type { StoredRunEnd } from '../translate/run-end.js';
import type { WorkflowActivityContent } from '../translate/workflow-activity.js';

/*
 * What the bridge keeps in a thread's metadata beside what its clients put there, and how a thread
 * is shown: the internal keys are never shown in `ThreadInfo` and never written by a PATCH.
 */

/**
 * The thread metadata key under which the bridge keeps the ids clients gave their tool messages
 * (`ToolMessageIds`): Mastra keeps none, and history must give them back. Never shown in
 * `ThreadInfo`, never written by a PATCH.
 */
export const TOOL_MESSAGE_IDS_KEY = 'mastra-agui-bridge:toolMessageIds';

/**
 * The thread metadata key under which the bridge keeps the thread's latest workflow run (the
 * thread's state, and what new input supersedes); internal like `TOOL_MESSAGE_IDS_KEY`.
 */
export const WORKFLOW_RUN_KEY = 'mastra-agui-bridge:workflowRun';

/** The latest workflow run of a thread: which workflow, Mastra's id of the run, and the `/run` that ran it last. */
export interface ThreadWorkflowRun {
  workflowId: string;
  runId: string;
  /** The AG-UI run id of the `/run` that started or resumed it last: an end the bridge gives it later (a cancel) is reported under it. */
  lastRunId?: string;
}

/**
 * The thread metadata key of the agent or workflow the thread's first run ran: a thread route that
 * names none means it (docs/api.md "A thread remembers its agent"); internal like the others.
 */
export const THREAD_AGENT_KEY = 'mastra-agui-bridge:agentId';

/** The thread metadata key of what each workflow tool call's activity showed last (`WorkflowActivities`). */
export const WORKFLOW_ACTIVITIES_KEY = 'mastra-agui-bridge:workflowActivities';

/** The thread metadata key of how its latest runs that did not finish as asked ended (`StoredRunEnd`, by run-end message id). */
export const RUN_ENDS_KEY = 'mastra-agui-bridge:runEnds';

/** How many run ends a thread keeps: the latest, for its recent history (a thread's metadata is read with every load). */
export const KEPT_RUN_ENDS = 50;

/** The prefix of every metadata key only the bridge writes, those above and any later one. */
const INTERNAL_PREFIX = 'mastra-agui-bridge:';

/** The metadata without the bridge's own keys: never shown, and never taken from a client (create or PATCH). */
export function withoutInternal(metadata: Record<string, unknown> | undefined): Record<string, unknown> {
  return Object.fromEntries(Object.entries(metadata ?? {}).filter(([key]) => !key.startsWith(INTERNAL_PREFIX)));
}

/** A thread as the API shows it (ISO 8601 dates): what the thread routes answer. */
export const ThreadInfoSchema = z.object({
  id: z.string(),
  resourceId: z.string(),
  title: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

export type ThreadInfo = z.infer<typeof ThreadInfoSchema>;

export function mergeMetadata(current: Record<string, unknown> | undefined, patch: Record<string, unknown> | undefined): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch ?? {})) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/** What a thread's metadata and background tasks add to its stored messages, to show them as AG-UI messages (sub-agents aside). */
export function contextOf(thread: StorageThreadType, backgroundTasks: StoredBackgroundTask[]): HistoryContext {
  const workflowActivities = workflowActivitiesOf(thread);
  return { toolMessageIds: toolMessageIdsOf(thread), backgroundTasks, ...(workflowActivities && { workflowActivities }) };
}

/** What each workflow tool call's activity showed last, as the thread's metadata keeps it. */
export function workflowActivitiesOf(thread: StorageThreadType): Record<string, WorkflowActivityContent> | undefined {
  return thread.metadata?.[WORKFLOW_ACTIVITIES_KEY] as Record<string, WorkflowActivityContent> | undefined;
}

/** The client tool-message ids the bridge keeps in a thread's metadata. */
function toolMessageIdsOf(thread: StorageThreadType): ToolMessageIds {
  return (thread.metadata?.[TOOL_MESSAGE_IDS_KEY] ?? {}) as ToolMessageIds;
}

export function toThreadInfo(thread: StorageThreadType): ThreadInfo {
  const metadata = withoutInternal(thread.metadata);
  return {
    id: thread.id,
    resourceId: thread.resourceId,
    ...(thread.title ? { title: thread.title } : {}),
    createdAt: new Date(thread.createdAt).toISOString(),
    updatedAt: new Date(thread.updatedAt).toISOString(),
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
  };
}

/** The run ends a thread keeps (`ThreadStore.rememberRunEnd`), by run-end message id. */
export function runEndsOf(thread: StorageThreadType): Record<string, StoredRunEnd> | undefined {
  return thread.metadata?.[RUN_ENDS_KEY] as Record<string, StoredRunEnd> | undefined;
}
