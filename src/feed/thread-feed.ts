import { EventType, type Event } from '@ag-ui/core';
import { subscribeToThread } from '../mastra/index.js';
import { endsRun, isLostRemoteRun, topLevelRunId, type MastraChunk } from '../translate/chunks.js';
import { isRunEnd, shapesRun } from '../translate/close-run.js';
import { ThreadTranslator, type RunAnnouncement } from '../translate/thread-translator.js';
import { errorMessage } from '../text.js';
import { WorkflowActivities, type WorkflowActivityContent } from '../translate/workflow-activity.js';
import type { ThreadEventLog } from './event-log.js';
import { FeedClients } from './feed-clients.js';
import type { AttachOptions, FeedOptions } from './feed-options.js';
import type { FeedSink } from './feed-sink.js';
import { LostRuns } from './lost-runs.js';
import { PausedRun } from './paused-run.js';
import { RunsInLog } from './runs-in-log.js';
import { StorageReads } from './storage-reads.js';
import { StateEvents } from '../state/state-events.js';

export type { AttachOptions, FeedMetrics, FeedOptions } from './feed-options.js';

/** How long a shutdown waits, at most, for the log to hand back the end of the run it cut (a shared log's round trip). */
const CUT_END_MS = 2000;

/**
 * Follows one thread for all its SSE clients: one Mastra subscription (plus the background-task
 * stream), translated into run brackets, numbered with a per-thread sequence, kept in a bounded
 * replay ring and fanned out. A client that falls too far behind is cut off (it may come back with
 * `Last-Event-ID`), so one slow reader neither holds up the others nor grows memory.
 *
 * The feed reads the thread's chunks and numbers what the log hands back; its parts do the rest:
 * `RunsInLog` (what it appends, the run open in the log), `StorageReads` (what storage adds to a
 * batch: state events, a retracted or cut run's end), `FeedClients` (joining, replay, snapshots,
 * delivery, keep-alive) and `LostRuns` (another process's run whose end never comes).
 */
export class ThreadFeed {
  private readonly log: ThreadEventLog;
  /** The announcement of the `start` being translated: one slot, a later `start` replaces it. */
  private announced?: { runId: string; announcement: RunAnnouncement };
  private readonly runs: RunsInLog;
  private readonly clients: FeedClients;
  private readonly lostRuns: LostRuns;
  private readonly reads: StorageReads;
  private readonly translator: ThreadTranslator;
  private readonly paused = new PausedRun();
  private readonly stop = new AbortController();
  private unsubscribe?: () => void;
  private followingTasks = false;
  /** The thread's workflow activities as stored, read once per workflow call this feed meets (`storedActivityOf`). */
  private readonly workflowActivities: Record<string, WorkflowActivityContent> = {};
  private readonly activityCalls = new Set<string>();

  constructor(private readonly options: FeedOptions) {
    this.log = options.log;
    this.runs = new RunsInLog(this.log, options.closingRun);
    const { waitingInterrupts } = options;
    const loadInterrupts = options.loadInterrupts ?? (waitingInterrupts && (() => this.paused.waitingOn(waitingInterrupts)));
    this.clients = new FeedClients(this.log, this.runs, { ...options, ...(loadInterrupts && { loadInterrupts }) });
    this.lostRuns = new LostRuns(this.log, this.runs, this.stop.signal, options);
    this.log.onEvents((events, firstId, afterGap) => {
      if (afterGap) this.clients.lostEvents(firstId);
      if (events.length > 0) this.numbered(events, firstId);
    });
    this.translator = new ThreadTranslator(options.threadId, {
      announced: (runId) => this.takeAnnouncement(runId),
      workflowActivities: this.workflowActivities,
      ...(options.wasCut && { wasCut: options.wasCut }),
    });
    const state = options.loadState && new StateEvents(options.loadState);
    this.reads = new StorageReads(this.runs, this.translator, state, options);
  }

  get clientCount(): number {
    return this.clients.size;
  }

  /**
   * Subscribes to the thread; resolves once Mastra has registered the subscriber and replayed the
   * run stopped on an interrupt, if the thread has one (read, not sent: `PausedRun`).
   */
  async start(): Promise<void> {
    this.paused.expectReplay(await this.options.stoppedRun?.());
    const sub = await subscribeToThread(this.options.agent, this.options);
    this.unsubscribe = () => sub.unsubscribe();
    void this.consume(sub.stream);
    await this.paused.replayRead();
  }

  /** Adds a client: by replay, a snapshot or live (`FeedClients.attach`). */
  attach(out: FeedSink, options: AttachOptions): Promise<void> {
    return this.clients.attach(out, options);
  }

  /** Events of a run the bridge streams itself (a workflow's): they go out as they are, after any batch still waiting for a read. */
  publishRun(events: Event[]): void {
    this.reads.publishRun(events);
  }

  /** No client of this process follows the thread any more; the feed goes on for other processes' followers. */
  unfollow(): void {
    this.log.setFollowed?.(false);
  }

  detach(out: FeedSink): void {
    this.clients.detach(out);
  }

  /**
   * Ends every client stream for a shutdown, once the run this process ran on the thread (cut by
   * `RunEndings.cutAll`) is closed in the log: by its own end (Mastra's `abort`) if that came
   * through the subscription, else here; either way as cancelled, as its `/run` reports it. Its
   * clients, and other processes' followers through the shared log, get that terminal event first.
   * A run of another process goes on in the log: a client back with `Last-Event-ID` gets the rest.
   */
  async shutdown(): Promise<void> {
    // What the subscription holds already (the cut run's last chunks) is translated first.
    await new Promise((resolve) => setImmediate(resolve));
    await this.reads.settled();
    this.runs.append(this.translator.cancel());
    const closed = this.runs.ownClosing();
    if (closed) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([closed, new Promise((resolve) => (timer = setTimeout(resolve, CUT_END_MS)))]);
      clearTimeout(timer);
    }
    this.close();
  }

  /** Ends every client stream (after closing the open run) and the Mastra subscription. */
  close(): void {
    this.runs.append(this.translator.close());
    this.runs.closeAll();
    this.clients.deliverQueued();
    this.lostRuns.close();
    this.stop.abort();
    this.unsubscribe?.();
    this.clients.close();
    this.log.close();
  }

  private async consume(stream: AsyncIterable<unknown>): Promise<void> {
    try {
      for await (const raw of stream) {
        if (this.stop.signal.aborted) return;
        const chunk = raw as MastraChunk;
        if (chunk.type === 'background-task-started') this.followBackgroundTasks();
        // A run's bracket opens on its `start`: what its `/run` announced must be at hand by then.
        if (chunk.type === 'start') await this.fetchAnnouncement(chunk.runId);
        await this.storedActivityOf(chunk);
        // Not waited for: the settlement first waits to see whether the lease is back (`leaseLapsed`).
        if (isLostRemoteRun(chunk)) void this.lostRuns.settle(topLevelRunId(chunk) ?? '');
        else if (this.endsRunOfOthers(chunk)) this.lostRuns.expectEndInLog(chunk);
        else this.translated(chunk);
      }
    } catch (error) {
      if (!this.stop.signal.aborted) this.options.logger.error(`Thread feed ${this.options.threadId} failed: ${errorMessage(error)}`);
    }
  }

  /** Publishes what the chunk translates to, unless it is Mastra's replay of a stopped run (its followers had it). */
  private translated(chunk: MastraChunk): void {
    const replayed = this.paused.replaying(chunk);
    const events = this.translator.push(chunk);
    this.paused.note(events, this.translator.open);
    if (!replayed) this.reads.publish(chunk, events);
  }

  /**
   * A workflow call's first chunk here: its stored activity is read first, so that a call resumed
   * after its suspension goes on from the steps it showed, as its `/run` and history do.
   */
  private async storedActivityOf(chunk: MastraChunk): Promise<void> {
    if (chunk.type !== 'tool-output' || !this.options.loadWorkflowActivities) return;
    const { toolCallId, output } = chunk.payload as { toolCallId: string; output?: unknown };
    if (this.activityCalls.has(toolCallId) || !WorkflowActivities.isWorkflowChunk(output)) return;
    this.activityCalls.add(toolCallId);
    try {
      Object.assign(this.workflowActivities, await this.options.loadWorkflowActivities());
    } catch (error) {
      // The activity shows the resumed run's steps only, until history is read again.
      this.options.logger.warn(`Thread feed ${this.options.threadId}: stored workflow activities could not be read: ${errorMessage(error)}`);
    }
  }

  private async fetchAnnouncement(runId: string): Promise<void> {
    const announcement = await this.options.announcement?.(runId);
    this.announced = announcement && { runId, announcement };
  }

  /** The translator asks once per run, when it opens the run's first bracket. */
  private takeAnnouncement(runId: string): RunAnnouncement | undefined {
    const taken = this.announced?.runId === runId ? this.announced.announcement : undefined;
    this.announced = undefined;
    return taken;
  }

  /**
   * Opens the task manager's stream for this thread, once, when the thread first starts a
   * background task: task progress never comes on the thread subscription, and a listener per
   * followed thread that never uses tasks would be waste.
   */
  private followBackgroundTasks(): void {
    if (this.followingTasks) return;
    this.followingTasks = true;
    const stream = this.options.backgroundStream?.(this.stop.signal);
    if (stream) void this.consume(streamToIterable(stream));
  }

  /**
   * With a shared log, the end of a run whose bracket is not open here: a run of another process
   * (only its end crosses processes; its events come through the log, written there), or what
   * trails a run that ended (`finish` after `error`). Not translated: it would open a bracket of
   * its own. (In one process every run's chunks arrive here from its `start`.)
   */
  private endsRunOfOthers(chunk: MastraChunk): boolean {
    if (!this.options.sharedLog || !endsRun(chunk.type)) return false;
    const runId = topLevelRunId(chunk);
    return runId !== undefined && !this.translator.isOpen(runId);
  }

  private numbered(events: readonly Event[], firstId: number): void {
    const { runs } = this;
    const openInLog = runs.open?.runId;
    const again = openInLog === undefined ? -1 : events.findIndex((e) => e.type === EventType.RUN_STARTED && e.runId === openInLog);
    if (again >= 0) return this.reopened(events, firstId, again);
    let gapEnded = false;
    for (let i = 0; i < events.length; i++) {
      const event = events[i];
      if (event.type === EventType.RUN_STARTED) {
        runs.started(event, firstId + i);
        if (this.options.watchLeaseMs && this.options.sharedLog && event.runId !== runs.lastWritten) this.lostRuns.watchRemoteRun(event.runId);
      } else if (isRunEnd(event)) {
        gapEnded ||= this.clients.gappedRunEnds();
        runs.ended();
      } else if (shapesRun(event)) runs.shaped(event);
    }
    this.clients.queueDelivery(events, firstId);
    if (gapEnded) this.clients.afterGap();
  }

  /**
   * A RUN_STARTED of the run open here: Redis lost the thread's log under the run (restarted
   * empty) and the run's process opened it again. The clients hold that bracket already, so it is
   * not sent again (they skip its id); what was lost in between cannot be replayed, so each client
   * gets a snapshot bracket of the stored thread once the run has ended (`afterGap`). A client that
   * joins meanwhile waits for the next run, as the run's start is gone from the ring.
   */
  private reopened(events: readonly Event[], firstId: number, at: number): void {
    if (at > 0) this.numbered(events.slice(0, at), firstId);
    this.clients.lostEvents(firstId + at + 1);
    if (at + 1 < events.length) this.numbered(events.slice(at + 1), firstId + at + 1);
  }
}

async function* streamToIterable(stream: ReadableStream<unknown>): AsyncIterable<unknown> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}
