import type { Mastra } from '@mastra/core';
import type { Agent } from '@mastra/core/agent';
import type { MastraMemory } from '@mastra/core/memory';
import { inject, injectable } from 'inversify';
import type { z } from 'zod';
import { AgentProvider } from '../agents/agent-provider.js';
import { leasesInProcess, listNotifications, outputFinished, suspendedRuns, sendMessage, sendNotification, sendStateSignal, withId, type OnWake, type Routing, type SignalDecision, type SignalTarget, type WokenOutput } from '../mastra/index.js';
import type { ResolvedConfig } from '../config.js';
import { conflict, notFound, type BridgeError } from '../errors.js';
import type { BridgeMetrics, RunOutcome } from '../observability/metrics.js';
import type { RunTracker } from '../observability/run-tracker.js';
import { wokenRunFailure } from '../translate/failure.js';
import { wokenEnd } from './woken-end.js';
import { withTraceparent } from '../observability/trace-context.js';
import type { DurableInbox, InboxCuts, InboxEntry } from '../threads/inbox.js';
import type { RecoveryGate } from '../threads/recovery-gate.js';
import { ThreadStore, type ThreadScope } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';
import type { NotificationSchema, SendMessageSchema, SignalSchema, StateSignalSchema, ToolApprovalSchema } from './schemas.js';
import type { ThreadControl } from '../threads/thread-control.js';
import type { RunEndings } from '../threads/run-endings.js';
import { sendPastFinishingRun } from '../threads/finishing-run.js';
import { SUPERSEDED_BY_ABORT, SUPERSEDED_BY_INPUT, type PendingInterrupts } from '../threads/pending-interrupts.js';
import { lastStep } from '../translate/retraction.js';
import { errorMessage } from '../text.js';

export interface PendingApproval {
  runId: string;
  toolCallId: string;
  toolName: string;
  args: unknown;
}

/** Sends a signal (again under `id`, when given) and answers Mastra's decision. */
type Send = (agent: Agent, id?: string) => Promise<SignalDecision>;

/** The agent of a request and its memory, resolved once per request. */
interface Resolved {
  agent: Agent;
  memory: MastraMemory;
}

/**
 * Steers a thread through Mastra's signal runtime: messages now or queued, signals, state,
 * notifications, tool approvals, abort. Each call answers as soon as Mastra has decided where
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
    @inject(TOKENS.AgentProvider) private readonly agents: AgentProvider,
    @inject(TOKENS.ThreadStore) private readonly threads: ThreadStore,
    @inject(TOKENS.Inbox) private readonly inbox: DurableInbox,
    @inject(TOKENS.ThreadControl) private readonly control: ThreadControl,
    @inject(TOKENS.Metrics) private readonly metrics: BridgeMetrics,
    @inject(TOKENS.RecoveryGate) private readonly gate: RecoveryGate,
    @inject(TOKENS.Config) private readonly config: ResolvedConfig,
    @inject(TOKENS.RunEndings) private readonly endings: RunEndings,
    @inject(TOKENS.PendingInterrupts) private readonly interrupts: PendingInterrupts,
    @inject(TOKENS.InboxCuts) private readonly cuts: InboxCuts,
    @inject(TOKENS.RunTracker) private readonly tracker: RunTracker,
  ) {}

  sendMessage(scope: ThreadScope, body: z.output<typeof SendMessageSchema>): Promise<SignalDecision> {
    // Into the thread's run wherever it runs: Mastra alone would race that run's end in another process.
    const send: Send = (agent, id) => this.control.send(agent, scope, { message: withId(body.message, id) }, routing(body), this.watchWoken(agent, scope));
    return this.accept(scope, 'send', body.message, this.superseding(scope, send));
  }

  queueMessage(scope: ThreadScope, body: z.output<typeof SendMessageSchema>): Promise<SignalDecision> {
    // Behind the thread's run wherever it runs: Mastra alone would queue only behind a run of this process.
    // Mastra gives a queued message a new id each time it is queued: one that met a finishing run
    // is taken back (if Mastra still holds it) and sent again as a message under the id it got,
    // which Mastra keeps, so that it is stored once whichever copy runs.
    const send: Send = (agent, id) =>
      id ? sendMessage(agent, withId(body.message, id), this.target(scope, body), this.watchWoken(agent, scope)) : this.control.queue(agent, scope, body.message, routing(body), this.watchWoken(agent, scope));
    return this.accept(scope, 'queue', body.message, this.superseding(scope, send));
  }

  signal(scope: ThreadScope, body: z.output<typeof SignalSchema>): Promise<SignalDecision> {
    const { type, contents, tagName, attributes, transient } = body;
    const signal = { type, contents, ...(tagName && { tagName }), ...(attributes && { attributes }), ...(transient !== undefined && { transient }) };
    // Into the thread's run wherever it runs, as a message sent now (`sendMessage`).
    const send: Send = (agent, id) => this.control.send(agent, scope, { signal: { ...signal, ...(id && { id }) } }, routing(body), this.watchWoken(agent, scope));
    // A transient signal is never stored: nothing to keep for it.
    return transient ? this.route(scope, 'signal', send).then(({ answer }) => answer) : this.accept(scope, 'signal', signal, send);
  }

  /** A state signal; an unchanged `cacheKey` is skipped by Mastra and answered `{ skipped: true }`. */
  async state(scope: ThreadScope, body: z.output<typeof StateSignalSchema>): Promise<SignalDecision | { skipped: true; reason: string }> {
    const { agent } = await this.ownedThreadAgent(scope, 'existing');
    const { id, cacheKey, contents, mode, value, delta } = body;
    const answer = await sendStateSignal(agent, { id, cacheKey, contents, mode, value, delta }, this.target(scope, body), this.watchWoken(agent, scope));
    this.metrics.signalDecision('state', 'skipped' in answer ? 'skipped' : answer.action);
    return answer;
  }

  async notify(scope: ThreadScope, body: z.output<typeof NotificationSchema>) {
    const { agent } = await this.ownedThreadAgent(scope, 'claim');
    const { resourceId: _r, agentId: _a, ...notification } = body;
    const result = await sendNotification(agent, notification, { resourceId: scope.resourceId, threadId: scope.threadId });
    const accepted = result.accepted ? await result.accepted : undefined;
    if (accepted?.action === 'wake') this.watchWoken(agent, scope)({ ...accepted, ...(result.signal && { signalId: result.signal.id }) });
    // The signal's routing when one was sent, else what the delivery policy did with the record.
    this.metrics.signalDecision('notification', accepted?.action ?? result.decision.action);
    // Delivered or summarised now, it is a signal a run is to answer: kept as any other.
    if (result.signal && accepted && isAnswered(accepted.action)) await this.keep(scope, agent, 'signal', result.signal.id, signalFields(result.signal));
    const runId = accepted && 'runId' in accepted ? accepted.runId : result.runId;
    return { record: result.record, decision: result.decision, ...(runId && { runId }) };
  }

  async listNotifications(scope: ThreadScope, status?: string) {
    await this.ownedThreadAgent(scope, 'read');
    return listNotifications(this.mastra, scope.threadId, status);
  }

  async pendingApprovals(scope: ThreadScope, resolved?: Resolved): Promise<PendingApproval[]> {
    const { agent } = await this.ownedThreadAgent(scope, 'read', resolved);
    const runs = await suspendedRuns(agent, scope);
    return runs.flatMap((run) =>
      run.toolCalls
        .filter((call) => call.requiresApproval && call.toolCallId)
        .map((call) => ({ runId: run.runId, toolCallId: call.toolCallId as string, toolName: call.toolName ?? 'unknown', args: call.args ?? {} })),
    );
  }

  /** Approves or declines a call that waits for approval (also after a restart: Mastra reads storage). */
  async toolApproval(scope: ThreadScope, body: z.output<typeof ToolApprovalSchema>): Promise<{ runId: string; toolCallId: string }> {
    const resolved = await this.agents.withMemory(scope.agentId);
    const pending = await this.pendingApprovals(scope, resolved);
    const call = pending.find((p) => p.toolCallId === body.toolCallId);
    if (!call) throw await this.notWaiting(scope, body.toolCallId);
    const { agent } = resolved;
    const thread = { resourceId: scope.resourceId, threadId: scope.threadId };
    const { toolCallId, approved, resumeData, reason } = body;
    // Two approvals at once (here or in another process) both see the call waiting: one resumes it.
    const result = await this.control.once(toolCallId, () => this.control.answerCall(agent, thread, { approval: { toolCallId, approved, resumeData, reason } }));
    if (!result) throw conflict(`Tool call ${body.toolCallId} was answered already`);
    return result;
  }

  /**
   * Why an approval finds nothing waiting: a call the thread's history holds is not waiting any
   * more (answered already, or never asked for approval): `409`, as a tool result posted twice.
   * Any other id is unknown: `404`.
   */
  private async notWaiting(scope: ThreadScope, toolCallId: string): Promise<BridgeError> {
    const { exists } = await this.threads.assertNotForeign(scope);
    const history = exists ? await this.threads.messages(scope, {}, 'agui') : [];
    const known = history.some((m) => m.role === 'assistant' && m.toolCalls?.some((c) => c.id === toolCallId));
    return known
      ? conflict(`Tool call ${toolCallId} is not waiting for approval: it was answered already or never asked for it`)
      : notFound('TOOL_CALL_NOT_FOUND', `No tool call ${toolCallId} is waiting for approval on this thread`);
  }

  /**
   * Stops the thread's run, and declines what its stopped runs wait on: nothing runs later. Answers
   * once the cut run has wound down, its messages answered by the cut (`InboxCuts`).
   */
  async abort(scope: ThreadScope): Promise<{ aborted: boolean }> {
    const { agent } = await this.ownedThreadAgent(scope, 'read');
    const thread = { resourceId: scope.resourceId, threadId: scope.threadId };
    return this.cuts.around({ ...thread, agentId: agent.id }, async () => {
      // Mastra keeps a run stopped on an interrupt as the thread's run, and "aborts" it to no effect.
      const { waiting, streaming } = await this.interrupts.standing(agent, thread);
      const { aborted } = streaming || waiting.length === 0 ? await this.control.abort(agent, thread, { untilEnded: true }) : { aborted: false };
      const declined = await this.interrupts.supersede(agent, thread, SUPERSEDED_BY_ABORT, waiting);
      return { aborted: aborted || declined.length > 0 };
    });
  }

  async cancelQueued(scope: ThreadScope, signalId: string): Promise<{ cancelled: string[] }> {
    const { agent } = await this.ownedThreadAgent(scope, 'read');
    const cancelledSignalIds = await this.control.cancelQueued(agent, { resourceId: scope.resourceId, threadId: scope.threadId }, [signalId]);
    // A cancelled message stays cancelled: a restart must not send it again.
    await this.inbox.remove(scope.threadId, cancelledSignalIds);
    return { cancelled: cancelledSignalIds };
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
      await this.keep(scope, agent, kind, answer.signalId, message);
      this.forgetIfFailed(scope.threadId, answer);
    }
    return answer;
  }

  private keep(scope: ThreadScope, agent: Agent, kind: InboxEntry['kind'], id: string, message: unknown): Promise<void> {
    const { threadId, resourceId } = scope;
    return this.inbox.add({ id, kind, threadId, resourceId, agentId: agent.id, message, acceptedAt: Date.now(), ...withTraceparent() });
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
    const { agent } = await this.ownedThreadAgent(scope, 'claim');
    const thread = { resourceId: scope.resourceId, threadId: scope.threadId };
    const inProcess = leasesInProcess(agent);
    const takeBack = (id: string) => this.control.cancelQueued(agent, thread, [id]);
    const answer = inProcess ? await sendPastFinishingRun(agent, thread, (id) => send(agent, id), takeBack) : await send(agent);
    this.metrics.signalDecision(kind, answer.action);
    return { answer, agent };
  }

  /**
   * The agent for the thread, after checking the thread is not another resource's: `read` only
   * checks, `claim` creates a missing thread for the caller (a signal may wake a run on it),
   * `existing` also requires that it exists.
   */
  private async ownedThreadAgent(scope: ThreadScope, mode: 'read' | 'claim' | 'existing', given?: Resolved): Promise<Resolved> {
    const resolved = given ?? (await this.agents.withMemory(scope.agentId));
    const owned = { ...scope, agentId: resolved.agent.id };
    // What may start a run comes after what a crash left unanswered on the thread.
    if (mode !== 'read') await this.gate.pass(scope.threadId);
    if (mode === 'claim') await this.threads.claim(owned, resolved.memory);
    else if (mode === 'existing') await this.threads.load(owned, resolved.memory);
    else await this.threads.assertNotForeign(owned, resolved.memory);
    return resolved;
  }

  /**
   * Counts a run a signal woke, and its end: Mastra streams that run itself, so its end is read
   * from the output once it settles (`wokenEnd`).
   */
  private watchWoken(agent: Agent, scope: ThreadScope): OnWake {
    return ({ runId, output, signalId }) => {
      const tracked = this.tracker.start({ agentId: agent.id, origin: 'signal', threadId: scope.threadId, runId, resourceId: scope.resourceId, inputId: signalId });
      const finished = outputFinished(output);
      this.endings.track(runId, finished);
      const end = finished.then(
        () => wokenEnd(output),
        (error: unknown) => ({ outcome: 'error' as const, error: wokenRunFailure({ error }) }),
      );
      this.woken.set(runId, end.then(({ outcome }) => outcome));
      void end.then((ended) => {
        this.woken.delete(runId);
        tracked.endWith(ended);
        // No client may follow the thread: the answer a guardrail blocked leaves storage here too.
        if (output.tripwire) void this.dropBlockedAnswer({ ...scope, agentId: agent.id }, output);
      });
    };
  }

  private async dropBlockedAnswer(scope: ThreadScope, output: WokenOutput): Promise<void> {
    try {
      const step = lastStep(output.messageId, await output.steps);
      if (step) await this.threads.dropBlockedStep(scope, step);
    } catch (error) {
      this.config.logger.warn(`Thread ${scope.threadId}: the answer a guardrail blocked could not be dropped: ${errorMessage(error)}`);
    }
  }

  /**
   * How the runs this process woke end, until they do: a message whose run failed leaves the
   * inbox as a `/run`'s does (its client saw the `RUN_ERROR`), or every recovery would run the
   * failing input again before anything sent after it.
   */
  private readonly woken = new Map<string, Promise<RunOutcome>>();

  private forgetIfFailed(threadId: string, answer: SignalDecision): void {
    const outcome = answer.action === 'wake' && answer.runId ? this.woken.get(answer.runId) : undefined;
    void outcome?.then(async (ended) => {
      if (ended !== 'error') return;
      await this.inbox.remove(threadId, [answer.signalId]).catch((error: unknown) => {
        // The sweep and recovery see it again; it is answered by nothing, so at most run once more.
        this.config.logger.debug(`inbox: could not forget the failed message ${answer.signalId}: ${(error as Error)?.message ?? error}`);
      });
    });
  }

  /**
   * A message supersedes what the thread's stopped runs wait on (declined, with a reason) before
   * it is sent: it then wakes a run of its own instead of being delivered into a run that waits.
   */
  private superseding(scope: ThreadScope, send: Send): Send {
    const thread = { resourceId: scope.resourceId, threadId: scope.threadId };
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


/** A decision after which a run is to answer the signal (`persist` and `discard` keep it unanswered). */
export const isAnswered = (action: SignalDecision['action']) => action === 'wake' || action === 'deliver';

/** What `sendSignal` needs to send a created signal (a notification's) again: its data, not its methods. */
function signalFields({ type, tagName, contents, attributes, metadata }: { type: string; tagName?: string; contents: unknown; attributes?: unknown; metadata?: unknown }) {
  return { type, contents, ...(tagName && { tagName }), ...(attributes !== undefined && { attributes }), ...(metadata !== undefined && { metadata }) };
}
