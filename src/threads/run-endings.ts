import type { Agent } from '@mastra/core/agent';
import { setTimeout as delay } from 'node:timers/promises';
import { injectable } from 'inversify';
import { abortThreadRun, activeThreadRuns, stoppedOnInterrupt, toldOver, type ThreadOfRun, type ThreadTarget } from '../mastra/index.js';
import { clientRunIdOf } from '../translate/ids.js';
import { threadLeaseKey } from './thread-lease.js';

/** How long a cut is remembered: a run's end comes within seconds of its abort. */
const CUT_MEMORY_MS = 10 * 60 * 1000;

/**
 * When each run of this process has wound down: its output read to the end, by which time Mastra
 * has stored what it answered (a cut run's partial answer too). Mastra lets go of the run a little
 * before that store, so an abort that must see the answer stored (`untilEnded`) waits here. And
 * the cuts: which runs an abort cut, and the runs the bridge streams itself, which an abort of
 * their thread stops here (`stopStreamed`).
 *
 * @example
 * endings.track(runId, pipeTheOutput());          // where the run's output is read
 * await endings.ended(runId, Date.now() + 5000);  // in an abort that waits for the run
 */
@injectable()
export class RunEndings {
  private readonly ends = new Map<string, Promise<void>>();
  private readonly closes = new Map<string, Promise<void>>();
  /** Runs an abort cut, and when: remembered for `CUT_MEMORY_MS`, long past any run's wind-down. */
  private readonly cuts = new Map<string, number>();
  /** Runs this process streams itself that Mastra does not run as the thread's (a workflow's `/run`), by thread. */
  private readonly streamed = new Map<string, AbortController>();

  /** Run `controller` streams on `thread` until the returned function is called: an abort of the thread stops it (`stopStreamed`). */
  streamedOn(thread: ThreadTarget, controller: AbortController): () => void {
    const key = threadLeaseKey(thread);
    this.streamed.set(key, controller);
    return () => {
      if (this.streamed.get(key) === controller) this.streamed.delete(key);
    };
  }

  /** Stops the run streamed here on the thread (`streamedOn`), if any; answers whether there was one. */
  stopStreamed(thread: ThreadTarget, reason: string): boolean {
    const controller = this.streamed.get(threadLeaseKey(thread));
    controller?.abort(new Error(reason));
    return controller !== undefined;
  }

  /**
   * Run `runId` was cut by an abort. Mastra ends a run cut between two steps with a plain
   * `finish`, no `abort` chunk: its translators ask here, so that it ends cancelled all the same.
   */
  markCut(runId: string): void {
    const now = Date.now();
    for (const [id, at] of this.cuts) {
      if (now - at < CUT_MEMORY_MS) break;
      this.cuts.delete(id);
    }
    this.cuts.set(runId, now);
  }

  /** Whether an abort cut run `runId` (`markCut`). */
  wasCut(runId: string): boolean {
    return this.cuts.has(runId);
  }

  /** `ended` settles (either way) when run `runId` has wound down. */
  track(runId: string, ended: Promise<unknown>): void {
    keepUntilSettled(this.ends, runId, ended);
  }

  /**
   * Run `runId`'s bracket on the thread's events stream closes once `closed` settles (the feed that
   * writes it registers this when it opens it): an abort that waits for the run (`ended`) waits
   * for that too, so that the input that cut the run opens its bracket after this one's end, in
   * every process's log. A bracket names its run as clients know it (`clientRunIdOf`).
   */
  closing(threadId: string, runId: string, closed: Promise<unknown>): void {
    keepUntilSettled(this.closes, bracketKey(threadId, runId), closed);
  }

  /**
   * Resolves once Mastra run `runId` of the thread has wound down here and its bracket is closed in
   * the thread's log, or at `deadline` (ms since the epoch); at once for a run this process does not run.
   */
  async ended(threadId: string, runId: string, deadline: number): Promise<void> {
    await this.woundDown(runId, deadline);
    const closed = this.closes.get(bracketKey(threadId, clientRunIdOf(threadId, runId)));
    if (closed) await until(closed, deadline);
  }

  /** Resolves once run `runId` has wound down here (its answer stored), or at `deadline`: what the feed closing its bracket waits for. */
  async woundDown(runId: string, deadline: number): Promise<void> {
    const settled = this.ends.get(runId);
    if (settled) await until(settled, deadline);
  }

  /**
   * Cuts every run streaming in this process on the threads of `agents` (the process is going
   * away): each is aborted, so Mastra ends it as cancelled and stores what it had (the message
   * that started it, its partial answer), and what waits behind it is dropped from Mastra's queue
   * (the durable inbox keeps it for another process). Resolves once each has wound down, or at
   * `deadline`. A run stopped on an interrupt is not streaming: it is left as stored.
   */
  async cutAll(agents: readonly Agent[], deadline: number): Promise<void> {
    await Promise.all(agents.flatMap((agent) => activeThreadRuns(agent).map(({ runId, ...thread }) => this.cut(agent, thread, runId, deadline))));
  }

  private async cut(agent: Agent, thread: ThreadOfRun, runId: string, deadline: number): Promise<void> {
    const tracked = this.ends.get(runId);
    // A run whose output this process does not read (one Mastra started from its queue, or a
    // recovery's): Mastra tells on the thread's topic when it is over. Listened to before the abort.
    const told = tracked ? undefined : await toldOver(agent, thread, runId);
    try {
      if (!tracked && (await stoppedOnInterrupt(agent, thread, runId))) return;
      if (!abortThreadRun(agent, thread, { expectedRunId: runId, localOnly: true, clearPendingSignals: true })) return;
      this.markCut(runId);
      await until(tracked ?? told?.over ?? Promise.resolve(), deadline);
    } finally {
      await told?.stop();
    }
  }
}

/** A run's bracket in a thread's log: run ids are the clients' choice, so one names a run within its thread only. */
const bracketKey = (threadId: string, runId: string) => `${threadId}\0${runId}`;

/** Keeps `promise` (settled either way) under `runId` in `map` until it settles. */
function keepUntilSettled(map: Map<string, Promise<void>>, runId: string, promise: Promise<unknown>): void {
  const settled = promise.then(
    () => undefined,
    () => undefined,
  );
  map.set(runId, settled);
  void settled.then(() => {
    if (map.get(runId) === settled) map.delete(runId);
  });
}

/** Resolves once `settled` has, or at `deadline` (ms since the epoch). */
async function until(settled: Promise<void>, deadline: number): Promise<void> {
  const timeout = new AbortController();
  // The delay rejects when it is aborted below, after the race: nothing waits on it by then.
  await Promise.race([settled, delay(Math.max(0, deadline - Date.now()), undefined, { signal: timeout.signal }).catch(() => undefined)]);
  timeout.abort();
}
