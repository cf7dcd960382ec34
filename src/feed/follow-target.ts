import type { AgentState } from '../state/working-memory.js';
import type { Interrupt } from '@ag-ui/core';
import type { Agent } from '@mastra/core/agent';
import type { ThreadScope } from '../threads/thread-store.js';

/**
 * What a thread stream follows: an agent's thread, or a workflow's (`workflow`), whose feed is
 * the workflow's own (its runs are the bridge's, not on Mastra's thread subscription) and whose
 * state is its latest run's.
 */
export type FollowTarget = { agent: Agent } & ThreadScope & { workflow?: WorkflowFollowing };

/** What a workflow's feed reads of storage: the workflow's state, what it waits on, whether its latest run ended. */
export interface WorkflowFollowing {
  id: string;
  loadState: () => Promise<AgentState | undefined>;
  loadInterrupts: () => Promise<Interrupt[]>;
  latestRunEnded: () => Promise<boolean>;
}

export const followedId = (target: FollowTarget): string => target.workflow?.id ?? target.agent.id;

export function feedKey(target: FollowTarget): string {
  return `${followedId(target)}\0${target.resourceId}\0${target.threadId}`;
}

/** What `feedKey` put in a key; `undefined` for a key that is not one. */
export function feedKeyParts(key: string): { agentId: string; resourceId: string; threadId: string } | undefined {
  const [agentId, resourceId, threadId] = key.split('\0');
  return agentId !== undefined && resourceId !== undefined && threadId !== undefined ? { agentId, resourceId, threadId } : undefined;
}
