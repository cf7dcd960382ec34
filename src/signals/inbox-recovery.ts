import type { MastraDBMessage } from '@mastra/core/memory';
import { setTimeout as delay } from 'node:timers/promises';
import { inject, injectable } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import type { DurableInbox, InboxCuts, InboxEntry } from '../threads/inbox.js';
import { RecoveryGate } from '../threads/recovery-gate.js';
import type { ThreadLocks } from '../threads/thread-locks.js';
import { ThreadStore } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';
import { errorMessage } from '../text.js';
import { isWorkflowRun } from '../threads/cut-workflow-runs.js';
import { RecoveryRuns, type Standing } from './recovery-runs.js';

/** How often answered messages are swept out of the durable inbox. */
const SETTLE_EVERY_MS = 5_000;
/**
 * With several processes, an entry this old, unanswered, on a thread no run holds, was lost
 * with a process (or with a run that finished as it arrived): it is sent again.
 */
const ORPHAN_AFTER_MS = 10_000;
/**
 * How long a cut waits, at most, for Mastra to start the run that answers what was sent into the
 * cut run and not read by it (measured: ~100 ms); past it, Mastra is taken to hold nothing.
 */
const FOLLOW_UP_WAIT_MS = 2_000;
const FOLLOW_UP_POLL_MS = 10;
/** How long after a run lets go of its thread its answer may still be on its way to storage. */
const ANSWER_STORE_MS = 1_000;
/**
 * How long input waits, at most, for the lease of a holder that went silent to be let go: its
 * process is found gone once its heartbeat lapses (3 s), and its leases let go just after.
 */
const SILENT_HOLDER_MS = 5_000;
const SILENT_HOLDER_POLL_MS = 50;

/** Entries grouped by thread, each group in the order it was accepted. */
function byThread(entries: InboxEntry[]): InboxEntry[][] {
  const groups = new Map<string, InboxEntry[]>();
  for (const entry of entries) groups.set(entry.threadId, [...(groups.get(entry.threadId) ?? []), entry]);
  return [...groups.values()];
}

const idsOf = (entries: InboxEntry[]) => entries.map((e) => e.id);

/** The lock under which a thread's orphans are adopted, and its run cut (`around`). */
const adoptionLock = (threadId: string) => `inbox-adopt:${threadId}`;

/** The rows read first to place a thread's inbox entries (`standing`). */
const STANDING_ROWS = 40;

/** Whether the thread's last rows place every entry as the whole history would: they are the whole thread, or hold every entry and an answer. */
function tellsStanding(tail: MastraDBMessage[], entries: InboxEntry[]): boolean {
  if (tail.length < STANDING_ROWS) return true;
  const ids = new Set(tail.map((m) => m.id));
  return entries.every((entry) => ids.has(entry.id)) && tail.some(endsTurn);
}

/**
 * An assistant message that ends the model's turn: not one whose last part is a tool's result the
 * model has yet to answer (a run cut between its steps), which a run goes on from.
 */
function endsTurn(message: MastraDBMessage): boolean {
  if (message.role !== 'assistant') return false;
  const last = message.content.parts?.findLast((part) => part.type !== 'step-start');
  return !(last?.type === 'tool-invocation' && last.toolInvocation.state === 'result');
}

/** How often recovery of a thread is tried when storage fails it (it may still be coming up). */
const RECOVERY_ATTEMPTS = 3;
const RECOVERY_RETRY_MS = 2000;

/**
 * What the durable inbox holds after the routes acknowledged it: `recover()` answers, after a
 * restart, what a crash left unanswered; a sweep (every 5 s, off the request path, from `start()`
 * to `stop()`) drops what the history now answers and, with several processes, adopts a dead
 * process's orphans.
 *
 * The agent runs only for acknowledged input that no run answered, once each, in the order it was
 * acknowledged, never with nothing new (a run whose prompt ends with an answer would append to it):
 * - an entry whose message is stored with an answer after it is dropped, whatever its kind (an
 *   answer's text cut short by a crash is what the client saw; it is not answered twice);
 * - entries stored with no answer after them (or only a tool's result the model had yet to answer)
 *   were taken by a run that was cut: one run with no new input goes on from there, as the cut run
 *   would have;
 * - entries never stored are sent again under their ids, one run each, each waiting for the one
 *   before it, as queued messages would.
 * Meanwhile new input on the thread waits (`RecoveryGate`), so that it comes after them.
 *
 * @example
 * await recovery.recover(); // once, at start-up: how many messages it answered
 * recovery.start();         // the sweep
 */
@injectable()
export class InboxRecovery implements InboxCuts {
  private sweeper?: NodeJS.Timeout;
  private readonly resendOrphans: boolean;

  constructor(
    @inject(ThreadStore) private readonly threads: ThreadStore,
    @inject(TOKENS.Inbox) private readonly inbox: DurableInbox,
    @inject(TOKENS.ThreadLocks) private readonly locks: ThreadLocks,
    @inject(RecoveryGate) private readonly gate: RecoveryGate,
    @inject(TOKENS.Config) private readonly config: ResolvedConfig,
    @inject(RecoveryRuns) private readonly runs: RecoveryRuns,
  ) {
    // One process restarts and recovers what it held; among several, a survivor must do it, and
    // before a thread takes new input: a dead process's messages come before the ones after them.
    this.resendOrphans = !!config.scaleOut;
    if (this.resendOrphans) gate.adoptFirst((threadId, holderSilent) => this.adoptBeforeInput(threadId, holderSilent));
  }

  /** Starts the sweep of answered entries (idempotent). */
  start(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(
      () =>
        void this.settle().catch((error: unknown) => {
          // An outage: the next sweep tries again.
          this.config.logger.debug(`inbox sweep failed: ${errorMessage(error)}`);
        }),
      SETTLE_EVERY_MS,
    );
    this.sweeper.unref();
  }

  stop(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /**
   * Answers what a crash left unanswered (`DurableInbox.pending()`), every thread at once, each
   * behind its gate; answers how many messages that was.
   */
  async recover(): Promise<number> {
    // Among several processes the inbox holds the live ones' entries too: only orphans are sent.
    if (this.resendOrphans) return this.settle();
    const groups = byThread(await this.gate.holdAll(this.inbox.pending()));
    const answered = await Promise.all(groups.map((entries) => this.gate.hold(entries[0].threadId, this.recoverWithRetries(entries))));
    return answered.reduce((sum, n) => sum + n, 0);
  }

  private async recoverWithRetries(entries: InboxEntry[]): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.recoverThread(entries);
      } catch (error) {
        if (attempt === RECOVERY_ATTEMPTS) throw error;
        await delay(RECOVERY_RETRY_MS);
      }
    }
  }

  /** One thread's entries, by the rules above; answers how many it answered. */
  private async recoverThread(entries: InboxEntry[]): Promise<number> {
    const { answered, ...left } = await this.standing(entries);
    await this.inbox.remove(entries[0].threadId, idsOf(answered));
    return this.runs.answer(left);
  }

  /**
   * Drops the inbox entries the history now answers; with several processes, adopts the orphans
   * of a thread no run holds.
   */
  private async settle(): Promise<number> {
    let adopted = 0;
    for (const entries of byThread(await this.inbox.pending())) {
      const { answered, cut, unseen, workflowRuns } = await this.standing(entries);
      await this.inbox.remove(entries[0].threadId, idsOf(answered));
      const left = [...cut, ...unseen];
      // A workflow run's record is an orphan at any age once no run holds its thread (a live one renews its lease).
      const orphan = workflowRuns[0] ?? left.find((e) => Date.now() - e.acceptedAt > ORPHAN_AFTER_MS);
      if (this.resendOrphans && orphan) adopted += await this.adopt(orphan);
    }
    return adopted;
  }

  /**
   * A cut (`InboxCuts`): under the lock adoption takes, so that the cut run's messages, which no
   * run holds for a moment, are not taken for a dead process's. The messages it took (stored) are
   * answered by the cut, with or without a partial answer: never continued later by a run nobody
   * asked for. What was sent into it and never reached it stays for Mastra, which runs it after
   * the cut, or for the sweep, which adopts what no run took. The cut answers once Mastra has
   * started that run (`untilFollowedUp`): the caller's next run would otherwise take the thread
   * first and read those messages after its own input.
   */
  around<T>(thread: { threadId: string; resourceId: string; agentId: string }, cut: () => Promise<T>): Promise<T> {
    return this.locks.exclusive(adoptionLock(thread.threadId), async () => {
      const since = Date.now();
      const result = await cut();
      const entries = (await this.inbox.of(thread.threadId)).filter((e) => e.acceptedAt <= since);
      if (entries.length === 0) return result;
      const { answered, cut: taken, unseen } = await this.standing(entries);
      await this.inbox.remove(thread.threadId, idsOf([...answered, ...taken]));
      if (unseen.length > 0) await this.untilFollowedUp(unseen);
      return result;
    });
  }

  /**
   * Waits, within a bound, until a run holds the thread of `unseen` (Mastra's follow-up, which
   * reads them) or they are stored (that run was quick). Mastra starts it once the cut run's end
   * is published, a few milliseconds after the cut answers, and only if the thread is free then.
   */
  private async untilFollowedUp(unseen: InboxEntry[]): Promise<void> {
    const deadline = Date.now() + FOLLOW_UP_WAIT_MS;
    while (Date.now() < deadline) {
      if (await this.runs.held(unseen[0])) return;
      if ((await this.standing(unseen)).unseen.length === 0) return;
      await delay(FOLLOW_UP_POLL_MS);
    }
  }

  /** Answers the orphans of an entry's thread, in one process at a time, if no run holds the thread; answers how many. */
  private adopt(entry: InboxEntry, gated = true): Promise<number> {
    const { threadId } = entry;
    return this.locks.exclusive(adoptionLock(threadId), async () => {
      if (await this.runs.held(entry)) return 0;
      // Read again under the lock: another process may have answered them meanwhile.
      let pending = await this.inbox.of(threadId);
      if (pending.length === 0) return 0;
      // A run lets go of its thread a little before its answer is stored: a message that looks
      // taken and unanswered is looked at again after that, or a run would answer it twice.
      if ((await this.standing(pending)).cut.length > 0) {
        await delay(ANSWER_STORE_MS);
        if (await this.runs.held(entry)) return 0;
        pending = await this.inbox.of(threadId);
        if (pending.length === 0) return 0;
      }
      const work = this.recoverThread(pending);
      // Before new input, the gate holds the thread already.
      const adopted = await (gated ? this.gate.hold(threadId, work) : work);
      // Said at info: in a healthy cluster only a dead process leaves messages to adopt.
      if (adopted > 0) this.config.logger.info(`Thread ${threadId}: adopted ${adopted} acknowledged message(s) that no run had answered, answered in order`);
      return adopted;
    });
  }

  /**
   * Before new input on a thread: its entries that no run answered, if no run holds the thread,
   * belong to a process that died (an entry is written after Mastra's decision, and a woken run
   * holds the thread until its answer is stored), and are answered now, whatever their age. When
   * the thread's holder went silent (`holderSilent`: it did not answer the input, in the seconds
   * before its death is found), its lease is waited for first: the entries its dead run took come
   * before the input.
   */
  private async adoptBeforeInput(threadId: string, holderSilent: boolean): Promise<number> {
    const entries = await this.inbox.of(threadId);
    if (entries.length === 0) return 0;
    // Entries answered but not swept yet are the common case: no lock for them.
    const { cut, unseen, workflowRuns } = await this.standing(entries);
    if (cut.length + unseen.length + workflowRuns.length === 0) return 0;
    if (holderSilent) await this.untilLetGo(entries[0]);
    return this.adopt(entries[0], false);
  }

  /** Waits (bounded) until no run holds the entry's thread. */
  private async untilLetGo(entry: InboxEntry): Promise<void> {
    const deadline = Date.now() + SILENT_HOLDER_MS;
    while (Date.now() < deadline && (await this.runs.held(entry))) await delay(SILENT_HOLDER_POLL_MS);
  }

  /**
   * Where each entry stands in the thread's stored history. Checked before each new input on the
   * thread, while the last run's entry waits for the sweep: the thread's last rows say it when they
   * hold every entry and an answer (their order there is their order in the thread); only else is
   * the whole history read.
   */
  private async standing(all: InboxEntry[]): Promise<Standing> {
    // A workflow run's record stands by its run in storage, not by the history (`CutWorkflowRuns`).
    const workflowRuns = all.filter(isWorkflowRun);
    const entries = all.filter((entry) => !isWorkflowRun(entry));
    const standing: Standing = { answered: [], cut: [], unseen: [], workflowRuns };
    if (entries.length === 0) return standing;
    const [{ threadId, resourceId, agentId }] = entries;
    const scope = { threadId, resourceId, agentId };
    // The tail unread: the whole history is read instead, which throws if storage is really away.
    const tail = await this.threads.tail(scope, STANDING_ROWS).catch(() => undefined);
    const stored = tail && tellsStanding(tail, entries) ? tail : (await this.threads.history(scope, {}, { backgroundTasks: false })).stored;
    const position = new Map(stored.map((m, i) => [m.id, i]));
    const lastAnswer = stored.findLastIndex(endsTurn);
    for (const entry of entries) {
      const at = position.get(entry.id);
      standing[at === undefined ? 'unseen' : at < lastAnswer ? 'answered' : 'cut'].push(entry);
    }
    return standing;
  }
}
