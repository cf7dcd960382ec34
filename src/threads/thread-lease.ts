import type { Mastra } from '@mastra/core';
import type { Agent } from '@mastra/core/agent';
import { setTimeout as delay } from 'node:timers/promises';
import { conflict, type BridgeError } from '../errors.js';
import { leasesOf, workflowLeases, type ThreadLeases, type ThreadTarget } from '../mastra/index.js';

/** Mastra's thread lease TTL (`MASTRA_AGENT_THREAD_LEASE_TTL_MS`): Mastra renews it once the run registers. */
export const THREAD_LEASE_TTL_MS = Number(process.env.MASTRA_AGENT_THREAD_LEASE_TTL_MS) || 15_000;
/** Polling backoff while another run holds the thread: a finishing run lets go within ~15 ms. */
const FIRST_WAIT_MS = 5;
const LONGEST_WAIT_MS = 100;

/** Mastra's key for a thread's lease: resource and thread id joined by NUL. */
export const threadLeaseKey = (thread: ThreadTarget) => `${thread.resourceId}\0${thread.threadId}`;

/** The run holding the thread's lease, in any process on the same leases; `undefined` when idle (or without leases). */
export async function threadLeaseOwner(agent: Agent, scope: ThreadTarget): Promise<string | undefined> {
  return leasesOf(agent)?.getLeaseOwner(threadLeaseKey(scope));
}

/** The run holding the thread's lease on Mastra's own pub/sub, where a workflow's runs hold it; `undefined` when idle. */
export async function workflowLeaseOwner(mastra: Mastra, scope: ThreadTarget): Promise<string | undefined> {
  return workflowLeases(mastra)?.getLeaseOwner(threadLeaseKey(scope));
}

/**
 * Scale-out: tells a process when another process that holds a thread lease has died (its
 * heartbeat lapsed), within seconds rather than at the lease's TTL. Bound only with a shared
 * lease store that keeps heartbeats (`TOKENS.HolderWatch`, made by `createScaleOut`).
 *
 * @example
 * watch.whenHolderGone(threadLeaseKey(scope), runId, () => settleAsLost(runId));
 */
export interface HolderWatch {
  /** Calls `gone` once if the process holding the lease `key` under `runId` dies; forgets the run once it lets the lease go. */
  whenHolderGone(key: string, runId: string, gone: () => void): void;
}

/** The thread is `runId`'s until Mastra registers the run under the same owner (it then renews and releases the lease itself). */
export interface ThreadTurn {
  /** Gives the thread back: for a run that never reached Mastra (refused, or failed to start). */
  release(): Promise<void>;
}

/**
 * Waits for the thread to be free of other runs, in this process or any other sharing the lease
 * provider (an agent's `leasesOf(agent)`; a workflow run, which has no agent, Mastra's pub/sub),
 * and takes its thread lease under the run's id, so that one run streams per thread at a time.
 * Past `waitMs`, the error `busy` makes (default `409 CONFLICT`).
 */
export async function takeThreadTurn(
  leases: ThreadLeases | undefined,
  scope: ThreadTarget,
  runId: string,
  waitMs: number,
  busy: (message: string) => BridgeError = conflict,
): Promise<ThreadTurn> {
  const key = threadLeaseKey(scope);
  if (!leases) return { release: async () => {} };
  const deadline = Date.now() + waitMs;
  for (let wait = FIRST_WAIT_MS; ; wait = Math.min(wait * 2, LONGEST_WAIT_MS)) {
    const { acquired, owner } = await leases.acquireLease(key, runId, THREAD_LEASE_TTL_MS);
    if (acquired) return { release: () => leases.releaseLease(key, runId).then(() => {}) };
    if (Date.now() + wait > deadline) {
      throw busy(
        `Thread ${scope.threadId} has a run streaming (${owner ?? 'another run'}); send to it with send-message or queue-message, or retry when it ends`,
      );
    }
    await delay(wait);
  }
}

/**
 * Keeps a lease taken by `takeThreadTurn` while a run that Mastra does not lease itself goes on
 * (a workflow run): renewed at a third of its TTL. Stop it when the run ends, then release.
 */
export function keepLease(leases: ThreadLeases | undefined, scope: ThreadTarget, runId: string): () => void {
  if (!leases) return () => {};
  const timer = setInterval(() => {
    leases.renewLease(threadLeaseKey(scope), runId, THREAD_LEASE_TTL_MS).catch(() => {
      // An outage: the next renewal tries again, and a lease that lapsed lets the thread go.
    });
  }, THREAD_LEASE_TTL_MS / 3);
  timer.unref();
  return () => clearInterval(timer);
}
