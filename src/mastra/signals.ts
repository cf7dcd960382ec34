import type { Mastra } from '@mastra/core';
import type { Agent } from '@mastra/core/agent';
import type { z } from 'zod';
import { BridgeError } from '../errors.js';
import type { AttributesSchema, ContentsSchema, RoutingSchema } from '../signal-shapes.js';
import type { ThreadTarget, WokenOutput } from './runs.js';

/**
 * The door into Mastra's agent APIs that take the bridge's input: signals, messages, state,
 * notifications, and the queue behind a run. Every call's types are the bridge's
 * own, checked by zod at the edge; Mastra types these APIs with overloads keyed on output schemas
 * and unions the bridge's plain objects cannot name, so each call is converted here, once, and
 * nowhere else (no `as never` outside `src/mastra/`).
 *
 * @example
 * const answer = await sendMessage(agent, 'hello', { resourceId, threadId });
 * // { action: 'wake', runId: '…', signalId: '…' }
 */

type Attributes = z.infer<typeof AttributesSchema>;

/** Where a signal goes when the thread is running (`ifActive`) or idle (`ifIdle`): as the signal routes take it. */
export type Routing = z.infer<typeof RoutingSchema>;

export type SignalTarget = ThreadTarget & Routing;

/** Text and file parts, as the signal routes take them. */
export type Contents = z.infer<typeof ContentsSchema>;

/** A message as the signal routes take it (its contents, or contents with attributes); `id` is the id Mastra is to store it under. */
export type AgentMessage = Contents | { contents: Contents; attributes?: Attributes; id?: string };

/** A signal as `sendSignal` takes it; `id` resends one under the id it had. */
export interface AgentSignal {
  type: string;
  contents: unknown;
  tagName?: string;
  attributes?: Record<string, unknown>;
  transient?: boolean;
  metadata?: unknown;
  id?: string;
}

/** Mastra's routing decision, as the signal routes answer it. */
export interface SignalDecision {
  action: 'wake' | 'deliver' | 'persist' | 'discard' | 'blocked';
  runId?: string;
  signalId: string;
}

/** A run a signal woke, for whoever watches it (metrics). */
export type OnWake = (run: { runId: string; output: WokenOutput; signalId?: string }) => void;

/** What Mastra's signal methods return. */
type Sent = { accepted: Promise<{ action: SignalDecision['action']; runId?: string; output?: WokenOutput }>; signal: { id: string } };

/** Mastra's routing decision for a sent signal; `onWake` hears of a run it woke. A refusal is `409`. */
async function decision(sent: Sent, onWake?: OnWake): Promise<SignalDecision> {
  let accepted: Awaited<Sent['accepted']>;
  try {
    accepted = await sent.accepted;
  } catch (error) {
    throw new BridgeError(409, 'CONFLICT', `Mastra refused the signal: ${(error as Error).message}`);
  }
  if (onWake && accepted.action === 'wake' && accepted.runId && accepted.output)
    onWake({ runId: accepted.runId, output: accepted.output, signalId: sent.signal.id });
  return { action: accepted.action, ...('runId' in accepted && accepted.runId && { runId: accepted.runId }), signalId: sent.signal.id };
}

/** A message with the id it is to be stored under (Mastra's `sendMessage` keeps a given id). */
export function withId(message: AgentMessage, id: string | undefined): AgentMessage {
  if (!id) return message;
  return typeof message === 'string' || Array.isArray(message) ? { contents: message, id } : { ...message, id };
}

/** Sends a message now: it joins the thread's run, or wakes the idle thread. */
export function sendMessage(agent: Agent, message: AgentMessage, target: SignalTarget, onWake?: OnWake): Promise<SignalDecision> {
  return decision(agent.sendMessage(message, target), onWake);
}

/** Queues a message behind the thread's run in this process (routed as `sendMessage` is; `onWake` hears of a run it woke). */
export function queueMessage(agent: Agent, message: AgentMessage, target: SignalTarget, onWake?: OnWake): Promise<SignalDecision> {
  return decision(agent.queueMessage(message, target), onWake);
}

/** Cancels messages queued behind the thread's run (never run); answers the signal ids cancelled. */
export function cancelQueuedMessages(agent: Agent, thread: ThreadTarget, signalIds: string[]): string[] {
  return agent.cancelQueuedMessages({ ...thread, signalIds }).cancelledSignalIds;
}

/**
 * How many messages Mastra holds queued behind the thread's run in this process (its idle queue,
 * which it drains when the run ends). Read through `subscribeThreadEvents`, which reports the count
 * at once on subscribing: Mastra 1.71 has no other way to ask.
 */
export function queuedMessageCount(agent: Agent, thread: ThreadTarget): number {
  let count = 0;
  const unsubscribe = agent.subscribeThreadEvents(thread, (event) => {
    if (event.type === 'queue-count-changed') count = event.count;
  });
  unsubscribe();
  return count;
}

/** Sends a notification, reactive or user signal (or one kept in the inbox, again under its id). */
export function sendSignal(agent: Agent, signal: AgentSignal, target: SignalTarget, onWake?: OnWake): Promise<SignalDecision> {
  return decision(agent.sendSignal(signal as never, target), onWake);
}

/**
 * What a sender puts into a thread's run now (or wakes the idle thread with): a message, or a
 * signal of another type. Plain data, so that it can be sent to the process where the run is.
 */
export type Outgoing = { message: AgentMessage } | { signal: AgentSignal };

/** `outgoing` under the id it is to be stored under (a resend keeps the first send's id). */
export function outgoingWithId(outgoing: Outgoing, id: string | undefined): Outgoing {
  if (!id) return outgoing;
  return 'message' in outgoing ? { message: withId(outgoing.message, id) } : { signal: { ...outgoing.signal, id } };
}

/** Sends `outgoing` now: it joins the thread's run, or wakes the idle thread. */
export function sendNow(agent: Agent, outgoing: Outgoing, target: SignalTarget, onWake?: OnWake): Promise<SignalDecision> {
  return 'message' in outgoing ? sendMessage(agent, outgoing.message, target, onWake) : sendSignal(agent, outgoing.signal, target, onWake);
}

/** A state signal as `sendStateSignal` takes it. */
export interface StateSignal {
  id: string;
  cacheKey: string;
  contents: Contents;
  mode?: 'snapshot' | 'delta';
  value?: unknown;
  delta?: unknown;
}

/** Sends a state signal; an unchanged `cacheKey` is skipped by Mastra. */
export async function sendStateSignal(
  agent: Agent,
  state: StateSignal,
  target: SignalTarget,
  onWake?: OnWake,
): Promise<SignalDecision | { skipped: true; reason: string }> {
  const result = await agent.sendStateSignal(state, target);
  if (result.skipped) return { skipped: true, reason: result.reason };
  return decision(result, onWake);
}

/** A notification as the bridge takes it (Mastra's `SendNotificationSignalInput`, the fields the route accepts). */
export interface Notification {
  source: string;
  kind: string;
  summary: string;
  priority?: 'low' | 'medium' | 'high' | 'urgent';
  payload?: unknown;
  dedupeKey?: string;
  coalesceKey?: string;
  attributes?: Attributes;
}

/** Records a notification for Mastra's delivery policy, which may send it as a signal at once. */
export function sendNotification(agent: Agent, notification: Notification, thread: ThreadTarget) {
  return agent.sendNotificationSignal(notification as never, thread);
}

/**
 * A resource's notifications on a thread (every status, or one), from Mastra's notifications
 * domain, since `since`: records outlive their thread (the domain deletes nothing), so a thread
 * made again under the same id must not read its predecessor's.
 */
export async function listNotifications(mastra: Mastra, thread: ThreadTarget, since: Date, status?: string) {
  const store = await mastra.getStorage()?.getStore('notifications');
  if (!store) throw new BridgeError(500, 'INTERNAL_ERROR', 'The storage has no notifications domain');
  const records = await store.listNotifications({ ...thread, ...(status && { status }) } as never);
  return records.filter((record) => new Date(record.createdAt) >= since);
}

/** Discards what Mastra would still deliver of a resource's notifications on a thread (the thread is being deleted). */
export async function discardNotifications(mastra: Mastra, thread: ThreadTarget): Promise<void> {
  const store = await mastra.getStorage()?.getStore('notifications');
  if (!store) return; // a storage without notifications kept none
  const ids = (await store.listNotifications({ ...thread, status: 'pending' })).map((record) => record.id);
  if (ids.length > 0) await store.updateNotificationsStatus({ threadId: thread.threadId, ids, status: 'discarded' });
}
