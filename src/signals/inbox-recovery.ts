import type { Agent } from '@mastra/core/agent';
import { inject, injectable } from 'inversify';
import type { z } from 'zod';
import { AgentProvider } from '../agents/agent-provider.js';
import type { DurableInbox, InboxEntry } from '../threads/inbox.js';
import type { ThreadStore } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';
import type { ResolvedConfig } from '../config.js';
import { threadLeaseOwner } from '../threads/thread-lease.js';
import type { ThreadLocks } from '../threads/thread-locks.js';
import type { SendMessageSchema } from './schemas.js';
import { decision, type Sent } from './decision.js';
import { withId } from './signal-router.js';

/** How often answered messages are swept out of the durable inbox. */
const SETTLE_EVERY_MS = 5_000;
/**
 * With several processes, an entry this old, unanswered, on a thread no run holds, was lost
 * with a process (or with a run that finished as it arrived): it is sent again.
 */
const ORPHAN_AFTER_MS = 10_000;
/** The chunks that end a run on a thread subscription. */
const RUN_ENDS = new Set(['finish', 'error', 'abort', 'tripwire']);

/** Entries grouped by thread, each group in the order it was accepted. */
function byThread(entries: InboxEntry[]): InboxEntry[][] {
  const groups = new Map<string, InboxEntry[]>();
  for (const entry of entries) groups.set(entry.threadId, [...(groups.get(entry.threadId) ?? []), entry]);
  return [...groups.values()];
}

/**
 * What the durable inbox holds after the routes acknowledged it: `recover()` sends again, after a
 * restart, what a crash left unanswered; a sweep (every 5 s, off the request path, from `start()`
 * to `stop()`) drops what the history now answers.
 *
 * @example
 * await recovery.recover(); // once, at start-up: how many messages were sent again
 * recovery.start();         // the sweep
 */
@injectable()
export class InboxRecovery {
  private sweeper?: NodeJS.Timeout;

  constructor(
    @inject(TOKENS.AgentProvider) private readonly agents: AgentProvider,
    @inject(TOKENS.ThreadStore) private readonly threads: ThreadStore,
    @inject(TOKENS.Inbox) private readonly inbox: DurableInbox,
    @inject(TOKENS.ThreadLocks) private readonly locks: ThreadLocks,
    @inject(TOKENS.Config) config: ResolvedConfig,
  ) {
    // One process restarts and recovers what it held; among several, a survivor must do it.
    this.resendOrphans = !!config.scaleOut;
  }

  private readonly resendOrphans: boolean;

  /** Starts the sweep of answered entries (idempotent). */
  start(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => void this.settle().catch(() => {}), SETTLE_EVERY_MS);
    this.sweeper.unref();
  }

  stop(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /**
   * Sends again what a crash left unanswered (`DurableInbox.pending()`), thread by thread in the
   * order it was accepted and under the same ids, one run at a time (each waits for the run
   * before it to end, as a queued message would). Entries the history already answers are dropped.
   */
  async recover(): Promise<number> {
    // Among several processes the inbox holds the live ones' entries too: only orphans are sent.
    if (this.resendOrphans) return this.settle();
    let resent = 0;
    for (const entries of byThread(await this.inbox.pending())) {
      for (const entry of await this.unanswered(entries)) {
        await this.resend(entry);
        resent++;
      }
    }
    return resent;
  }

  /** Sends one entry again under its id, and waits for the run it wakes to end. */
  private async resend(entry: InboxEntry): Promise<void> {
    const { agent } = await this.agents.withMemory(entry.agentId);
    const target = { resourceId: entry.resourceId, threadId: entry.threadId };
    if (entry.kind === 'run') return this.rerun(agent, entry);
    // Subscribed first: the run it wakes may end before a later subscription would see it.
    const subscription = await agent.subscribeToThread(target);
    try {
      const sent =
        entry.kind === 'signal'
          ? agent.sendSignal({ ...(entry.message as object), id: entry.id } as never, target)
          : agent.sendMessage(withId(entry.message as z.output<typeof SendMessageSchema>['message'], entry.id) as never, target);
      const answer = await decision(sent as Sent);
      if (answer.action !== 'wake' || !answer.runId) return;
      for await (const chunk of subscription.stream as AsyncIterable<{ type: string; runId?: string }>) {
        if (chunk.runId === answer.runId && RUN_ENDS.has(chunk.type)) return;
      }
    } finally {
      subscription.unsubscribe();
    }
  }

  /**
   * A `/run` cut before its answer: its messages are stored, so the same input (same ids: Mastra
   * upserts, one copy) runs again, to its end.
   */
  private async rerun(agent: Agent, entry: InboxEntry): Promise<void> {
    const memory = { thread: entry.threadId, resource: entry.resourceId };
    const output = await agent.stream(entry.message as never, { memory, savePerStep: true } as never);
    for await (const _chunk of output.fullStream) {
      // drained: the run stores its answer as it goes
    }
    // Ended, as a `/run` leaves the inbox when it ends however it ends: `unanswered` never counts a
    // `run` entry as answered (a partly stored answer is not one), so a rerun that left its entry
    // behind would be run again by every later sweep, every 5 s, for ever.
    await this.inbox.remove(entry.threadId, [entry.id]);
  }

  /**
   * Drops the inbox entries the history now answers (a message stored, and an answer after it);
   * with several processes, sends again what no process will answer.
   */
  private async settle(): Promise<number> {
    let resent = 0;
    for (const entries of byThread(await this.inbox.pending())) {
      const left = await this.unanswered(entries);
      if (this.resendOrphans && left.some((e) => Date.now() - e.acceptedAt > ORPHAN_AFTER_MS)) resent += await this.adopt(left);
    }
    return resent;
  }

  /** Sends a thread's orphans again, in one process at a time, if no run holds the thread; answers how many. */
  private adopt(entries: InboxEntry[]): Promise<number> {
    const [{ threadId, resourceId, agentId }] = entries;
    return this.locks.exclusive(`inbox-adopt:${threadId}`, async () => {
      const { agent } = await this.agents.withMemory(agentId);
      if (await threadLeaseOwner(agent, { resourceId, threadId })) return 0;
      // Read again under the lock: another process may have answered them meanwhile.
      const orphans = await this.unanswered(entries);
      for (const entry of orphans) await this.resend(entry);
      return orphans.length;
    });
  }

  /** The entries of one thread that no stored answer follows; the others leave the inbox. */
  private async unanswered(entries: InboxEntry[]): Promise<InboxEntry[]> {
    const [{ threadId, resourceId, agentId }] = entries;
    const { stored } = await this.threads.history({ threadId, resourceId, agentId }, {}, { backgroundTasks: false }).catch(() => ({ stored: [] }));
    const position = new Map(stored.map((m, i) => [m.id, i]));
    const lastAnswer = stored.findLastIndex((m) => m.role === 'assistant');
    // A `/run` leaves the inbox when it ends: a partly stored answer is not an answer.
    const answered = entries.filter((e) => e.kind !== 'run' && (position.get(e.id) ?? Infinity) < lastAnswer);
    await this.inbox.remove(threadId, answered.map((e) => e.id));
    return entries.filter((e) => !answered.includes(e));
  }
}
