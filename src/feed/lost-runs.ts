import { setTimeout as delay } from 'node:timers/promises';
import { EventType, type Event, type Message } from '@ag-ui/core';
import type { AgentState } from '../state/working-memory.js';
import { topLevelRunId, type MastraChunk } from '../translate/chunks.js';
import { closeRun } from '../translate/close-run.js';
import { LOST_RUN } from '../translate/failure.js';
import type { ThreadEventLog } from './event-log.js';
import type { FeedOptions } from './feed-options.js';
import type { RunsInLog } from './runs-in-log.js';
import { snapshotBracket } from './snapshot-bracket.js';

/** How long after another process's run ended its events may take to close it in the log before it is settled here. */
const UNWRITTEN_END_GRACE_MS = 2000;
/** How long after an outage of the shared log's store a run found without its lease may be alive (`leaseLapsed`). */
const AFTER_OUTAGE_MS = 10_000;

/** What the watch of other processes' runs reads of the feed's options: their leases, and the stored thread a lost run is settled from. */
export type LostRunOptions = Pick<FeedOptions, 'threadId' | 'loadHistory' | 'loadState' | 'latestRunEnded' | 'watchLeaseMs' | 'leaseOwner' | 'whenHolderGone'>;

/**
 * Another process's runs on a shared log, whose ends may never reach it (that process died, or its
 * appends failed while Redis was away): the wait for an end in flight, the watch on a run's lease
 * (a workflow's feed), and the settlement of a lost run from storage, which every process following
 * the thread works out alike. What it settles goes through `runs` (or the log's `settle`).
 *
 * @example
 * lostRuns.watchRemoteRun(runId); // its RUN_STARTED came numbered from the log, written elsewhere
 * void lostRuns.settle(runId); // Mastra found the run without its lease
 */
export class LostRuns {
  /** Another process's run ended: the log should close it soon (`expectEndInLog`); or its lease is looked at next (`watchLease`). */
  private readonly pendingEnds = new Set<NodeJS.Timeout>();

  constructor(
    private readonly log: ThreadEventLog,
    private readonly runs: RunsInLog,
    /** Aborted once the feed closes: nothing is settled or looked at after. */
    private readonly stop: AbortSignal,
    private readonly options: LostRunOptions,
  ) {}

  /** The feed closes: no end is waited for any more. */
  close(): void {
    for (const timer of this.pendingEnds) clearTimeout(timer);
  }

  /**
   * Another process's run ended: its own events (written by that process) close it in the log
   * within milliseconds. When they do not come (its appends failed while Redis was away, though
   * Mastra's end went through later), the run is settled from storage as a lost one, once.
   */
  expectEndInLog(chunk: MastraChunk): void {
    const open = this.runs.open?.startSeq;
    if (open === undefined) return;
    const timer = setTimeout(() => {
      this.pendingEnds.delete(timer);
      if (this.runs.open?.startSeq === open && !this.stop.aborted) void this.settle(topLevelRunId(chunk) ?? '');
    }, UNWRITTEN_END_GRACE_MS);
    timer.unref();
    this.pendingEnds.add(timer);
  }

  /**
   * A run of another process lost its lease before its end reached this feed (that process died,
   * or Redis was away while the run finished): storage tells how it ended. With an answer stored
   * after the run's messages the bracket ends `RUN_FINISHED` (a finished run is never shown as
   * failed), else `RUN_ERROR`; then a snapshot bracket of what is stored, as the events the
   * followers missed cannot be replayed but the history they built can. Worked out from the log
   * (the run's bracket as its process wrote it), alike in every process: the log takes the first.
   */
  async settle(runId: string): Promise<void> {
    if (!(await this.leaseLapsed(runId))) return;
    // Unreadable storage settles the run all the same: as failed, with no snapshot after it.
    const [history, state] = await Promise.all([this.options.loadHistory().catch(() => undefined), this.loadState().catch(() => undefined)]);
    const open = this.runs.open?.shape ?? [];
    const ended = await this.options.latestRunEnded?.().catch(() => undefined); // then the history tells
    const finished = ended ?? (history !== undefined && answers(history, messageIdsOf(open)));
    const { threadId } = this.options;
    const events = closeRun(open, finished ? { finished: true } : { error: LOST_RUN });
    if (history) events.push(...snapshotBracket(threadId, `recovered-${runId}`, history, state));
    if (this.log.settle) this.log.settle(runId, events);
    else this.runs.append(events);
  }

  /** Another process's run without a Mastra run here: its lease looked at in turn, and its process's death heard of at once. */
  watchRemoteRun(runId: string): void {
    this.watchLease(runId);
    // A dead process writes nothing more: what it wrote is in the log, so no grace is waited for.
    this.options.whenHolderGone?.(runId, () => void (this.runs.open?.runId === runId && !this.stop.aborted && this.settle(runId)));
  }

  /**
   * Looks at the lease of run `runId`, another process's, every `watchLeaseMs` while its bracket is
   * open here. A lease that is gone is given the grace an end in flight needs to reach the log (the
   * run writes its end, then lets go), then the run is settled as lost.
   */
  private watchLease(runId: string): void {
    const timer = setTimeout(() => {
      this.pendingEnds.delete(timer);
      void this.lookAtLease(runId);
    }, this.options.watchLeaseMs);
    timer.unref();
    this.pendingEnds.add(timer);
  }

  private async lookAtLease(runId: string): Promise<void> {
    if (this.runs.open?.runId !== runId || this.stop.aborted) return;
    // Not readable (an outage): looked at again next time.
    const owner = await this.options.leaseOwner?.().catch(() => runId);
    if (this.runs.open?.runId !== runId) return;
    if (owner === runId) return this.watchLease(runId);
    const waited = await delay(UNWRITTEN_END_GRACE_MS, true, { signal: this.stop }).catch(() => false);
    if (waited && this.runs.open?.runId === runId) await this.settle(runId);
  }

  /**
   * Whether the lease of a run Mastra found without one is really gone. Mastra reads the lease
   * once, and Redis restarted empty loses every lease until each holder takes its own back (once
   * its connection is ready: within the reconnect backoff, 2 s at most). Right after an outage it
   * is looked at again after that grace: a run whose lease is back is alive, and watched until its
   * end reaches the log or its lease lapses. With no outage near, a lapse is a dead process.
   */
  private async leaseLapsed(runId: string): Promise<boolean> {
    const { leaseOwner } = this.options;
    const open = this.runs.open?.startSeq;
    if (!leaseOwner || open === undefined || !this.log.outageWithin?.(AFTER_OUTAGE_MS)) return true;
    for (;;) {
      const waited = await delay(UNWRITTEN_END_GRACE_MS, true, { signal: this.stop }).catch(() => false);
      if (!waited || this.runs.open?.startSeq !== open) return false;
      // Redis still away: nothing tells yet; the next look does.
      const owner = await leaseOwner().catch(() => runId);
      if (owner !== runId) return true;
    }
  }

  private async loadState(): Promise<AgentState | undefined> {
    return this.options.loadState?.();
  }
}

/** The ids of a run's messages (its input, its answers), as its events name them. */
function messageIdsOf(events: readonly Event[]): Set<string> {
  const ids = new Set<string>();
  for (const event of events) {
    if (event.type === EventType.RUN_STARTED) for (const m of event.input?.messages ?? []) ids.add(m.id);
    else if (event.type === EventType.TEXT_MESSAGE_START) ids.add(event.messageId);
    else if (event.type === EventType.TOOL_CALL_START && event.parentMessageId) ids.add(event.parentMessageId);
  }
  return ids;
}

/** Whether the history ends with an answer (not a call waiting for its result) to messages of the run. */
function answers(history: Message[], runMessages: ReadonlySet<string>): boolean {
  const last = history.at(-1);
  if (last?.role !== 'assistant' || (last.toolCalls?.length ?? 0) > 0) return false;
  return history.some((m) => runMessages.has(m.id));
}
