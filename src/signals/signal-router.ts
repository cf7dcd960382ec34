import type { Mastra } from '@mastra/core';
import type { Agent } from '@mastra/core/agent';
import { inject, injectable } from 'inversify';
import type { z } from 'zod';
import {
  listNotifications,
  sendNotification,
  sendStateSignal,
  type OnWake,
  type Routing,
  type SignalDecision,
  type SignalTarget,
  threadTarget,
} from '../mastra/index.js';
import type { BridgeMetrics } from '../observability/metrics.js';
import type { InboxEntry } from '../threads/inbox.js';
import { SUPERSEDED_BY_INPUT, PendingInterrupts } from '../threads/pending-interrupts.js';
import type { ThreadControl } from '../threads/thread-control.js';
import { ThreadStore, type ThreadScope } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';
import { clientRunIdOf } from '../translate/ids.js';
import { AcceptedSignals, isAnswered } from './accepted-signals.js';
import type { NotificationSchema, SendMessageSchema, SignalSchema, StateSignalSchema } from './schemas.js';

/** How a signal is sent, once the thread is the caller's: through `ThreadControl`, wherever the thread's run is. */
type Send = (agent: Agent, onWake: OnWake) => Promise<SignalDecision>;

/** What a steering call does besides sending: supersede what stopped runs wait on, keep it until a run answers it. */
interface Steering {
  kind: InboxEntry['kind'];
  /** What the durable inbox keeps; none for a transient signal (never stored, so nothing to answer). */
  keeps?: unknown;
  /** New input: what the thread's stopped runs wait on is declined first, so that it wakes a run of its own. */
  supersedes: boolean;
}

/**
 * Steers a thread through Mastra's signal runtime: messages now or queued, signals, state,
 * notifications (approvals are `ThreadApprovals`', a stop `ThreadStops`'). Each call answers as soon as Mastra has decided where
 * the signal goes, never after the run. Every call checks first that the thread is not another
 * resource's (`404`, as if it did not exist).
 */
@injectable()
export class SignalRouter {
  constructor(
    @inject(TOKENS.Mastra) private readonly mastra: Mastra,
    @inject(TOKENS.ThreadControl) private readonly control: ThreadControl,
    @inject(TOKENS.Metrics) private readonly metrics: BridgeMetrics,
    @inject(PendingInterrupts) private readonly interrupts: PendingInterrupts,
    @inject(ThreadStore) private readonly threads: ThreadStore,
    @inject(AcceptedSignals) private readonly accepted: AcceptedSignals,
  ) {}

  sendMessage(scope: ThreadScope, body: z.output<typeof SendMessageSchema>): Promise<SignalDecision> {
    // Into the thread's run wherever it runs: Mastra alone would race that run's end in another process.
    const steering = { kind: 'send', keeps: body.message, supersedes: true } as const;
    return this.steer(scope, steering, (agent, onWake) => this.control.send(agent, scope, { message: body.message }, routing(body), onWake));
  }

  queueMessage(scope: ThreadScope, body: z.output<typeof SendMessageSchema>): Promise<SignalDecision> {
    // Behind the thread's run wherever it runs: Mastra alone would queue only behind a run of this process.
    const steering = { kind: 'queue', keeps: body.message, supersedes: true } as const;
    return this.steer(scope, steering, (agent, onWake) => this.control.queue(agent, scope, body.message, routing(body), onWake));
  }

  signal(scope: ThreadScope, body: z.output<typeof SignalSchema>): Promise<SignalDecision> {
    const { type, contents, tagName, attributes, transient } = body;
    const signal = { type, contents, ...(tagName && { tagName }), ...(attributes && { attributes }), ...(transient !== undefined && { transient }) };
    // Into the thread's run wherever it runs, as a message sent now (`sendMessage`).
    const steering = { kind: 'signal', keeps: transient ? undefined : signal, supersedes: false } as const;
    return this.steer(scope, steering, (agent, onWake) => this.control.send(agent, scope, { signal }, routing(body), onWake));
  }

  /** A state signal; an unchanged `cacheKey` is skipped by Mastra and answered `{ skipped: true }`. */
  async state(scope: ThreadScope, body: z.output<typeof StateSignalSchema>): Promise<SignalDecision | { skipped: true; reason: string }> {
    const { agent } = await this.threads.own(scope, 'existing');
    const { id, cacheKey, contents, mode, value, delta } = body;
    const answer = await sendStateSignal(agent, { id, cacheKey, contents, mode, value, delta }, this.target(scope, body), this.accepted.watch(agent, scope));
    this.metrics.signalDecision('state', 'skipped' in answer ? 'skipped' : answer.action);
    return 'skipped' in answer ? answer : asClientsSee(scope.threadId, answer);
  }

  async notify(scope: ThreadScope, body: z.output<typeof NotificationSchema>) {
    const { agent } = await this.threads.own(scope, 'claim');
    const { resourceId: _r, agentId: _a, ...notification } = body;
    const result = await sendNotification(agent, notification, threadTarget(scope));
    const accepted = result.accepted ? await result.accepted : undefined;
    if (accepted?.action === 'wake') this.accepted.watch(agent, scope)({ ...accepted, ...(result.signal && { signalId: result.signal.id }) });
    // The signal's routing when one was sent, else what the delivery policy did with the record.
    this.metrics.signalDecision('notification', accepted?.action ?? result.decision.action);
    // Delivered or summarised now, it is a signal a run is to answer: kept as any other.
    if (result.signal && accepted && isAnswered(accepted.action))
      await this.accepted.keep(scope, agent, 'signal', result.signal.id, signalFields(result.signal));
    const runId = accepted && 'runId' in accepted ? accepted.runId : result.runId;
    return { record: result.record, decision: result.decision, ...(runId && { runId: clientRunIdOf(scope.threadId, runId) }) };
  }

  async listNotifications(scope: ThreadScope, status?: string) {
    // Made since the thread was: those from before were a deleted thread's under the same id.
    const thread = await this.threads.get(scope);
    return listNotifications(this.mastra, threadTarget(scope), new Date(thread.createdAt), status);
  }

  /**
   * The one way a message or signal reaches a thread. The thread is claimed, not only checked (a
   * wake creates a missing thread anyway, but a persisted signal would be stored under no thread,
   * unreadable by its sender and the id left to anyone); new input supersedes what stopped runs
   * wait on (a thread it created has none); `send` answers Mastra's decision. A message
   * acknowledged means a message kept: once Mastra has decided where it goes (and given it its
   * id), it is written to the durable inbox before the answer leaves, and leaves the inbox once the
   * history answers it. A decision that means no run will answer it (`persist`, `discard`) keeps
   * nothing.
   */
  private async steer(scope: ThreadScope, { kind, keeps, supersedes }: Steering, send: Send): Promise<SignalDecision> {
    const { agent, existed, thread } = await this.threads.own(scope, 'claim');
    if (supersedes && existed) await this.interrupts.supersede(agent, threadTarget(scope), SUPERSEDED_BY_INPUT, { row: thread });
    const answer = await send(agent, this.accepted.watch(agent, scope));
    this.metrics.signalDecision(kind, answer.action);
    if (keeps !== undefined && isAnswered(answer.action)) {
      await this.accepted.keep(scope, agent, kind, answer.signalId, keeps);
      this.accepted.forgetIfFailed(scope.threadId, answer);
    }
    return asClientsSee(scope.threadId, answer);
  }

  private target(scope: ThreadScope, body: Routing): SignalTarget {
    return { resourceId: scope.resourceId, threadId: scope.threadId, ...routing(body) };
  }
}

/** A decision as clients see it: the run it joined or woke by the run id they know it by (`clientRunIdOf`). */
function asClientsSee(threadId: string, answer: SignalDecision): SignalDecision {
  return answer.runId ? { ...answer, runId: clientRunIdOf(threadId, answer.runId) } : answer;
}

/** The routing a body gives, without the keys it left out. */
function routing(body: Routing): Routing {
  return { ...(body.ifActive && { ifActive: body.ifActive }), ...(body.ifIdle && { ifIdle: body.ifIdle }) };
}

/** What `sendSignal` needs to send a created signal (a notification's) again: its data, not its methods. */
function signalFields({
  type,
  tagName,
  contents,
  attributes,
  metadata,
}: {
  type: string;
  tagName?: string;
  contents: unknown;
  attributes?: unknown;
  metadata?: unknown;
}) {
  return { type, contents, ...(tagName && { tagName }), ...(attributes !== undefined && { attributes }), ...(metadata !== undefined && { metadata }) };
}
