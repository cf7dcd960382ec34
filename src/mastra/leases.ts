import type { Mastra } from '@mastra/core';
import type { Agent } from '@mastra/core/agent';
import { EventEmitterPubSub, type EventCallback, type LeaseProvider } from '@mastra/core/events';
import type { ThreadOfRun } from './runs.js';

/**
 * The door into Mastra's pub/sub: its thread leases, and what it tells of a thread's runs.
 * Mastra's `PubSub` has no lease methods in its type; a pub/sub that keeps leases (Redis in
 * scale-out, Mastra's own in one process) adds them, so the check for them is made here, once.
 *
 * @example
 * const owner = await leasesOf(agent)?.getLeaseOwner(threadLeaseKey(scope));
 */

/**
 * What the bridge calls of Mastra's lease provider (a structural part of its `LeaseProvider`),
 * declared here: outside the door, nothing names Mastra's type or calls its methods.
 */
export interface ThreadLeases {
  /** Takes `key` for `owner` for `ttlMs`, unless another owner holds it (then named). */
  acquireLease(key: string, owner: string, ttlMs: number): Promise<{ acquired: boolean; owner?: string }>;
  /** Lets `key` go, if `owner` holds it. */
  releaseLease(key: string, owner: string): Promise<void>;
  /** Keeps `owner`'s hold on `key` for `ttlMs` more; answers whether it still held it. */
  renewLease(key: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Who holds `key`; `undefined` when nobody does. */
  getLeaseOwner(key: string): Promise<string | undefined>;
}

/** The agent's lease provider, when its pub/sub has one. */
export function leasesOf(agent: Agent): ThreadLeases | undefined {
  return leasesOfPubSub(agent.getPubSub());
}

/** The lease provider of Mastra's own pub/sub (a workflow's runs hold leases there). */
export function workflowLeases(mastra: Mastra): ThreadLeases | undefined {
  return leasesOfPubSub(mastra.pubsub);
}

/** Whether the agent's leases live in this process only (Mastra's in-process pub/sub), not shared with others. */
export function leasesInProcess(agent: Agent): boolean {
  return agent.getPubSub() instanceof EventEmitterPubSub;
}

function leasesOfPubSub(pubsub: unknown): ThreadLeases | undefined {
  return typeof (pubsub as Partial<LeaseProvider> | undefined)?.acquireLease === 'function' ? (pubsub as LeaseProvider) : undefined;
}

/** Mastra's events on a thread's topic that say a run is over, what it had stored (`run-aborted` comes at the abort, before that). */
const RUN_OVER = new Set(['run-completed', 'run-failed', 'run-discarded']);

/**
 * Listens on Mastra's topic of the thread (`agent.thread-stream.<resource \0 thread>`) for run
 * `runId` to be over, in whichever process it streams; `undefined` if it cannot (no pub/sub, or
 * one that is away). Mastra tells there of runs whose output nobody here reads.
 */
export async function toldOver(agent: Agent, thread: ThreadOfRun, runId: string): Promise<{ over: Promise<void>; stop: () => Promise<void> } | undefined> {
  const pubsub = agent.getPubSub();
  if (!pubsub) return undefined;
  const topic = `agent.thread-stream.${encodeURIComponent(`${thread.resourceId ?? ''}\0${thread.threadId}`)}`;
  let isOver = () => {};
  const over = new Promise<void>((resolve) => (isOver = resolve));
  const listener: EventCallback = (event) => {
    if (event.runId === runId && RUN_OVER.has(event.type)) isOver();
  };
  try {
    await pubsub.subscribe(topic, listener, { startFrom: 'latest' });
  } catch {
    return undefined; // the pub/sub is away: the run's end is not waited for
  }
  const stop = () =>
    pubsub.unsubscribe(topic, listener).catch(() => {
      // shutting down: the subscription goes with the process
    });
  return { over, stop };
}
