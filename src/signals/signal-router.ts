import type { Mastra } from '@mastra/core';
import type { Agent } from '@mastra/core/agent';
import { inject, injectable } from 'inversify';
import type { z } from 'zod';
import {
  leasesInProcess,
  listNotifications,
  sendMessage,
  sendNotification,
  sendStateSignal,
  withId,
  type Routing,
  type SignalDecision,
  type SignalTarget,
  threadTarget,
} from '../mastra/index.js';
import type { BridgeMetrics } from '../observability/metrics.js';
import type { InboxEntry } from '../threads/inbox.js';
import { sendPastFinishingRun } from '../threads/finishing-run.js';
import { SUPERSEDED_BY_INPUT, PendingInterrupts } from '../threads/pending-interrupts.js';
import type { ThreadControl } from '../threads/thread-control.js';
import type { ThreadScope } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';
import { AcceptedSignals, isAnswered } from './accepted-signals.js';
import type { NotificationSchema, SendMessageSchema, SignalSchema, StateSignalSchema } from './schemas.js';
import { ThreadOwnership } from './thread-ownership.js';

/** Sends a signal (again under `id`, when given) and answers Mastra's decision. */
type Send = (agent: Agent, id?: string) => Promise<SignalDecision>;

/**
 * Steers a thread through Mastra's signal runtime: messages now or queued, signals, state,
 * notifications (approvals are `ThreadApprovals`', a stop `ThreadStops`'). Each call answers as soon as Mastra has decided where
 * the signal goes, never after the run. Every call checks first that the thread is not another
 * resource's (`404`, as if it did not exist).
 *
 * @example
 * const { action, runId } = await router.sendMessage(scope, { message: 'hello' });
 */
@injectable()
export class SignalRouter {
  constructor(
    @inject(TOKENS.Mastra) private readonly mastra: Mastra,
    @inject(TOKENS.ThreadControl) private readonly control: ThreadControl,
    @inject(TOKENS.Metrics) private readonly metrics: BridgeMetrics,
    @inject(PendingInterrupts) private readonly interrupts: PendingInterrupts,
    @inject(ThreadOwnership) private readonly ownership: ThreadOwnership,
    @inject(AcceptedSignals) private readonly accepted: AcceptedSignals,
  ) {}

  sendMessage(scope: ThreadScope, body: z.output<typeof SendMessageSchema>): Promise<SignalDecision> {
    // Into the thread's run wherever it runs: Mastra alone would race that run's end in another process.
    const send: Send = (agent, id) => this.control.send(agent, scope, { message: withId(body.message, id) }, routing(body), this.accepted.watch(agent, scope));
    return this.accept(scope, 'send', body.message, this.superseding(scope, send));
  }

  queueMessage(scope: ThreadScope, body: z.output<typeof SendMessageSchema>): Promise<SignalDecision> {
    // Behind the thread's run wherever it runs: Mastra alone would queue only behind a run of this process.
    // Mastra gives a queued message a new id each time it is queued: one that met a finishing run
    // is taken back (if Mastra still holds it) and sent again as a message under the id it got,
    // which Mastra keeps, so that it is stored once whichever copy runs.
    const send: Send = (agent, id) =>
      id
        ? sendMessage(agent, withId(body.message, id), this.target(scope, body), this.accepted.watch(agent, scope))
        : this.control.queue(agent, scope, body.message, routing(body), this.accepted.watch(agent, scope));
    return this.accept(scope, 'queue', body.message, this.superseding(scope, send));
  }

  signal(scope: ThreadScope, body: z.output<typeof SignalSchema>): Promise<SignalDecision> {
    const { type, contents, tagName, attributes, transient } = body;
    const signal = { type, contents, ...(tagName && { tagName }), ...(attributes && { attributes }), ...(transient !== undefined && { transient }) };
    // Into the thread's run wherever it runs, as a message sent now (`sendMessage`).
    const send: Send = (agent, id) =>
      this.control.send(agent, scope, { signal: { ...signal, ...(id && { id }) } }, routing(body), this.accepted.watch(agent, scope));
    // A transient signal is never stored: nothing to keep for it.
    return transient ? this.route(scope, 'signal', send).then(({ answer }) => answer) : this.accept(scope, 'signal', signal, send);
  }

  /** A state signal; an unchanged `cacheKey` is skipped by Mastra and answered `{ skipped: true }`. */
  async state(scope: ThreadScope, body: z.output<typeof StateSignalSchema>): Promise<SignalDecision | { skipped: true; reason: string }> {
    const { agent } = await this.ownership.agentOf(scope, 'existing');
    const { id, cacheKey, contents, mode, value, delta } = body;
    const answer = await sendStateSignal(agent, { id, cacheKey, contents, mode, value, delta }, this.target(scope, body), this.accepted.watch(agent, scope));
    this.metrics.signalDecision('state', 'skipped' in answer ? 'skipped' : answer.action);
    return answer;
  }

  async notify(scope: ThreadScope, body: z.output<typeof NotificationSchema>) {
    const { agent } = await this.ownership.agentOf(scope, 'claim');
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
    return { record: result.record, decision: result.decision, ...(runId && { runId }) };
  }

  async listNotifications(scope: ThreadScope, status?: string) {
    await this.ownership.agentOf(scope, 'read');
    return listNotifications(this.mastra, scope.threadId, status);
  }

  /**
   * A message acknowledged means a message kept: once Mastra has decided where it goes (and given
   * it its id), it is written to the durable inbox before the answer leaves, and leaves the inbox
   * once the history answers it. A decision that means no run will answer it (`persist`,
   * `discard`) keeps nothing.
   */
  private async accept(scope: ThreadScope, kind: InboxEntry['kind'], message: unknown, send: Send): Promise<SignalDecision> {
    const { answer, agent } = await this.route(scope, kind, send);
    if (isAnswered(answer.action)) {
      await this.accepted.keep(scope, agent, kind, answer.signalId, message);
      this.accepted.forgetIfFailed(scope.threadId, answer);
    }
    return answer;
  }

  /**
   * Sends through `send` and answers Mastra's decision; with Mastra's in-process leases, past a
   * run that is finishing (`sendPastFinishingRun`). With leases shared between processes, a
   * `deliver` to an idle-looking thread may be a real hand-off to another process's run: the
   * answer is passed on as Mastra gave it (`ThreadControl.send` does the same where the run is).
   */
  private async route(scope: ThreadScope, kind: string, send: Send): Promise<{ answer: SignalDecision; agent: Agent }> {
    // Claimed, not only checked: a wake creates a missing thread anyway, but a persisted signal
    // would be stored under no thread, unreadable by its sender and the id left to anyone.
    const { agent } = await this.ownership.agentOf(scope, 'claim');
    const thread = threadTarget(scope);
    const inProcess = leasesInProcess(agent);
    const takeBack = (id: string) => this.control.cancelQueued(agent, thread, [id]);
    const answer = inProcess ? await sendPastFinishingRun(agent, thread, (id) => send(agent, id), takeBack) : await send(agent);
    this.metrics.signalDecision(kind, answer.action);
    return { answer, agent };
  }

  /**
   * A message supersedes what the thread's stopped runs wait on (declined, with a reason) before
   * it is sent: it then wakes a run of its own instead of being delivered into a run that waits.
   */
  private superseding(scope: ThreadScope, send: Send): Send {
    const thread = threadTarget(scope);
    return async (agent, id) => {
      if (!id) await this.interrupts.supersede(agent, thread, SUPERSEDED_BY_INPUT);
      return send(agent, id);
    };
  }

  private target(scope: ThreadScope, body: Routing): SignalTarget {
    return { resourceId: scope.resourceId, threadId: scope.threadId, ...routing(body) };
  }
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
