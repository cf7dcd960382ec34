import { setTimeout as delay } from 'node:timers/promises';
import type { Mastra } from '@mastra/core';
import type { Agent } from '@mastra/core/agent';
import { MASTRA_RESOURCE_ID_KEY } from '@mastra/core/request-context';
import { registerApiRoute } from '@mastra/core/server';
import type { ThreadTarget } from './runs.js';

/**
 * The door into the Mastra instance itself: its agents, its storage's domains, its background
 * tasks, and what a server built on it registers. `listAgents` is typed by the agents an app
 * registers; the bridge serves any, so the record is read as plain agents here.
 */

/** Every registered agent as `[registration key, agent]`. */
export function agentsOf(mastra: Mastra): Array<[string, Agent]> {
  return Object.entries(mastra.listAgents() as Record<string, Agent>);
}

/** The agent's model as `provider/name`; none when it is chosen per request (a function of the request context). */
export async function modelOf(agent: Agent): Promise<{ provider: string; name: string } | undefined> {
  try {
    const model = await agent.getModel();
    if (model && typeof model === 'object' && 'provider' in model && 'modelId' in model)
      return { provider: String(model.provider), name: String(model.modelId) };
  } catch {
    // A model resolved per request has no static answer.
  }
  return undefined;
}

/** An agent's sub-agents by the name it delegates to them with; none when they depend on the request. */
export async function subagentsOf(agent: Agent): Promise<Array<{ name: string; description?: string }>> {
  try {
    const agents = await agent.listAgents();
    return Object.entries(agents).map(([name, sub]) => {
      const description = sub.getDescription?.();
      return description ? { name, description } : { name };
    });
  } catch {
    // Sub-agents chosen per request (a function of the request context) have no static answer.
    return [];
  }
}

/**
 * Rows of the storage's `threadState` domain, by thread and type: what the bridge calls of Mastra's
 * `ThreadStateStorage`, declared here so that only the door names Mastra's type.
 */
export interface ThreadStates {
  getState<T = unknown>(slot: { threadId: string; type: string }): Promise<T | undefined>;
  /** Replaces the row's value. */
  setState<T = unknown>(row: { threadId: string; type: string; value: T }): Promise<void>;
  deleteState(slot: { threadId: string; type: string }): Promise<void>;
}

/** The storage's `threadState` domain (thread state, idempotency records); `undefined` without one. */
export async function threadStateStore(mastra: Mastra): Promise<ThreadStates | undefined> {
  return (await mastra.getStorage()?.getStore('threadState')) ?? undefined;
}

/** What an agent says it does (its description), when it says. */
export function descriptionOf(agent: Agent): string | undefined {
  return agent.getDescription?.() || undefined;
}

/** A thread's background tasks as Mastra keeps them (none when Mastra runs no task manager). */
export async function backgroundTasksOf(mastra: Mastra, thread: ThreadTarget) {
  const manager = mastra.backgroundTaskManager;
  if (!manager) return [];
  const { tasks } = await manager.listTasks({ threadId: thread.threadId, resourceId: thread.resourceId });
  return tasks;
}

/** The thread's background tasks as they change, from those that exist (none without a task manager). */
export function backgroundTaskStream(mastra: Mastra, thread: ThreadTarget, signal: AbortSignal) {
  return mastra.backgroundTaskManager?.stream({ threadId: thread.threadId, resourceId: thread.resourceId, abortSignal: signal, includeExisting: true });
}

/** The request-context key under which Mastra's server auth puts the caller's resource id. */
export const RESOURCE_ID_KEY = MASTRA_RESOURCE_ID_KEY;

/** Mastra's custom API route, as `server.apiRoutes` takes it. */
export const apiRoute = registerApiRoute;

/** How `storageReady` tries: attempts, the first wait (doubled after each failure), and who hears of a retry. */
export interface StorageReadyOptions {
  attempts?: number;
  firstWaitMs?: number;
  onRetry?: (error: unknown, waitMs: number) => void;
}

/**
 * Waits until Mastra's storage has its tables, trying its `init()` again while it fails.
 * Processes started together on a new PostgreSQL database race on the same `CREATE` statements.
 * The losers' init then fails once ("multiple primary keys", "already exists") while the winner
 * finishes. Mastra's storage tries its init again on its next call; this makes that call before
 * the bridge's first read, so that nothing in between fails. About 6 s of tries by default, then
 * the last error.
 */
export async function storageReady(mastra: Mastra, { attempts = 8, firstWaitMs = 50, onRetry }: StorageReadyOptions = {}): Promise<void> {
  const storage = mastra.getStorage();
  if (!storage) return;
  for (let attempt = 1, waitMs = firstWaitMs; ; attempt++, waitMs *= 2) {
    try {
      return await storage.init();
    } catch (error) {
      if (attempt >= attempts) throw error;
      onRetry?.(error, waitMs);
      await delay(waitMs);
    }
  }
}
