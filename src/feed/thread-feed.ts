import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { EventType, type Event, type Interrupt, type Message } from '@ag-ui/core';
import type { Agent } from '@mastra/core/agent';
import { subscribeToThread } from '../mastra/index.js';
import type { BridgeLogger } from '../logger.js';
import type { EventCounter, FollowerJoin } from '../observability/metrics.js';
import { endsRun, isLostRemoteRun, topLevelRunId, type MastraChunk } from '../translate/chunks.js';
import { closeRun, shapesRun } from '../translate/close-run.js';
import { LOST_RUN } from '../translate/failure.js';
import { beforeTerminal, blockedStep, type BlockedStep, type CutStep } from '../translate/retraction.js';
import { withStoredRunEnd } from '../translate/run-end.js';
import { ThreadTranslator, type RunAnnouncement } from '../translate/thread-translator.js';
import { errorMessage } from '../text.js';
import { WorkflowActivities, type WorkflowActivityContent } from '../translate/workflow-activity.js';
import type { ThreadEventLog } from './event-log.js';
import type { FeedSink } from './feed-sink.js';
import { StateEvents } from '../state/state-events.js';
import type { AgentState } from '../state/working-memory.js';

export interface FeedOptions {
  agent: Agent;
  threadId: string;
  resourceId: string;
  /** Numbers the events and keeps the recent ones for replay. */
  log: ThreadEventLog;
  /** The log is shared between processes, each writing its own runs: of another process's run only the end reaches this feed. */
  sharedLog?: boolean;
  maxClientQueueBytes: number;
  heartbeatMs: number;
  /** What a `/run` announced of itself, by Mastra run id (see `RunAnnouncements`). */
  announcement?: (runId: string) => Promise<RunAnnouncement | undefined>;
  loadHistory: () => Promise<Message[]>;
  /** The thread's stored agent state, for an agent with working memory: state events go with its runs and snapshots. */
  loadState?: () => Promise<AgentState | undefined>;
  /**
   * Whether the thread's latest run got to an end of its own, when storage tells (a workflow's run:
   * its stored status). Else a lost run counts as finished when an answer is stored after it.
   */
  latestRunEnded?: () => Promise<boolean>;
  /** What the thread's latest run waits on (a workflow's suspended steps): a snapshot bracket ends with them, as that run did. */
  loadInterrupts?: () => Promise<Interrupt[]>;
  /** Forgets an answer a guardrail blocked after it streamed (`ThreadStore.dropBlockedStep`). */
  dropBlockedStep?: (step: BlockedStep) => Promise<void>;
  /**
   * A workflow's feed: a run another process writes here is not on Mastra's thread subscription,
   * so nothing says so if that process dies. While its bracket is open, its lease is looked at
   * every `watchLeaseMs` (with a shared log), and a run whose lease lapsed is settled as lost.
   */
  watchLeaseMs?: number;
  /** The run holding the thread's lease, in any process (a lost run's settlement checks it first). */
  leaseOwner?: () => Promise<string | undefined>;
  /**
   * With `watchLeaseMs`, in scale-out: calls `gone` once the process running run `runId` is found
   * dead (its heartbeat lapsed, `HolderWatch`), so its followers here hear of it within seconds
   * rather than at the lease's TTL.
   */
  whenHolderGone?: (runId: string, gone: () => void) => void;
  /** Resolves once a run of this process has wound down (its partial answer stored), within a bound (`RunEndings.woundDown`). */
  runEnded?: (runId: string) => Promise<void>;
  /** Whether an abort cut run `runId` (`RunEndings.wasCut`): Mastra ends one cut between steps with a plain `finish`. */
  wasCut?: (runId: string) => boolean;
  /** Keeps what the step a run was cut in showed, since `since` (ms) (`ThreadStore.keepCutStep`). */
  keepCutStep?: (step: CutStep, since: number) => Promise<void>;
  /** A run's bracket, opened here, closes in the log once `closed` settles: an abort of the run waits for that (`RunEndings.closing`). */
  closingRun?: (runId: string, closed: Promise<void>) => void;
  /** What the thread kept of its workflow calls' activities (`ThreadStore.workflowActivities`): a resumed call's goes on from there. */
  loadWorkflowActivities?: () => Promise<Record<string, WorkflowActivityContent>>;
  /** The task manager's stream for this thread, where background-task progress arrives. */
  backgroundStream?: (signal: AbortSignal) => ReadableStream<unknown> | undefined;
  logger: BridgeLogger;
  metrics?: FeedMetrics;
}

/** What a feed counts: events written (per follower, one `inc` per batch) and how followers join. */
export interface FeedMetrics {
  events: EventCounter;
  joined(kind: FollowerJoin): void;
}

export interface AttachOptions {
  lastEventId?: number;
  snapshot?: boolean;
}

/** One SSE client of a feed: `position` is the last sequence id it was sent. */
interface Client {
  out: FeedSink;
  position: number;
  /** Set while its snapshot loads: live events wait in the ring meanwhile. */
  loading: boolean;
  /** The client joined inside a run whose start is no longer in the ring: it waits for the next run. */
  awaitingRun: boolean;
}

/** How long, inside one long turn, a batch waits for the next to share the clients' writes (as `EventStream` holds a frame). */
const MAX_HOLD_MS = 10;
/**
 * With this many clients, a batch that does not open a run waits up to `CROWD_HOLD_MS` for the
 * ones after it: a delivery to every client then takes long enough that a run's answer and its end,
 * stored a few milliseconds apart, would each be a write to every client. A run's start and a
 * user's message are never held (`isAwaited`). 50 ms is under a frame at 20 Hz.
 */
const CROWD = 1000;
const CROWD_HOLD_MS = 50;

/** What the followers wait for and must get at once, however many they are: a run's start, a user's message. */
const isAwaited = (e: Event) => e.type === EventType.RUN_STARTED || (e.type === EventType.TEXT_MESSAGE_START && e.role === 'user');

interface QueuedDelivery {
  events: Event[];
  firstId: number;
  /** When the first batch was queued (`performance.now()`). */
  since: number;
}

const isTerminal = (e: Event) => e.type === EventType.RUN_FINISHED || e.type === EventType.RUN_ERROR;
/** How long after another process's run ended its events may take to close it in the log before it is settled here. */
const UNWRITTEN_END_GRACE_MS = 2000;
/** How long after an outage of the shared log's store a run found without its lease may be alive (`leaseLapsed`). */
const AFTER_OUTAGE_MS = 10_000;
/** How long a shutdown waits, at most, for the log to hand back the end of the run it cut (a shared log's round trip). */
const CUT_END_MS = 2000;

/**
 * Follows one thread for all its SSE clients: one Mastra subscription (plus the background-task
 * stream), translated into run brackets, numbered with a per-thread sequence, kept in a bounded
 * replay ring and fanned out. A client that falls too far behind is cut off (it may come back with
 * `Last-Event-ID`), so one slow reader neither holds up the others nor grows memory.
 */
export class ThreadFeed {
  private readonly log: ThreadEventLog;
  /**
   * The announcement of the run whose `start` is being translated: a bracket opens on its run's
   * `start`, so one slot is enough (a later `start` replaces whatever was not taken).
   */
  private announced?: { runId: string; announcement: RunAnnouncement };
  /** Each client by its stream: a follower that leaves is found at once among thousands. */
  private readonly clients = new Map<FeedSink, Client>();
  private readonly translator: ThreadTranslator;
  private readonly stop = new AbortController();
  private unsubscribe?: () => void;
  private followingTasks = false;
  private runStartSeq?: number;
  /**
   * What shapes the run open in the log (`shapesRun`), kept here: the ring may lose its start
   * (Redis restarted empty under it), and a lost run's settlement must still close what it opened.
   */
  private openShape?: Event[];
  /** Another process's run ended: the log should close it soon (`expectEndInLog`). */
  private readonly pendingEnds = new Set<NodeJS.Timeout>();
  private lastPublish = Date.now();
  /** The run open in the log, as it handed the events back, and the last run this feed wrote into it. */
  private openInLog?: string;
  private lastWritten?: string;
  /**
   * The runs whose brackets this feed opened, until their ends come back numbered from the log:
   * what an abort of the run (`closingRun`) and a shutdown wait for.
   */
  private readonly closingRuns = new Map<string, { closed: Promise<void>; resolve: () => void }>();
  /** When this feed last opened a bracket of its own (ms): what a cut run stored came after. */
  private bracketOpenedAt = Date.now();
  /** A run the log opened again after Redis lost it: its clients get the stored thread once it ends (`reopened`). */
  private gappedRun?: string;
  /** Batches numbered this turn, not yet sent to the clients (`queueDelivery`). */
  private queued?: QueuedDelivery;
  private deliveryScheduled = false;
  /** The thread's state events, for an agent with working memory. */
  private readonly state?: StateEvents;
  /** Batches waiting for a read (their state events, a retraction), in order, and how many wait. */
  private reads: Promise<void> = Promise.resolve();
  private waitingForRead = 0;
  private readonly heartbeat: NodeJS.Timeout;
  /** The thread's workflow activities as stored, read once per workflow call this feed meets (`storedActivityOf`). */
  private readonly workflowActivities: Record<string, WorkflowActivityContent> = {};
  private readonly activityCalls = new Set<string>();

  constructor(private readonly options: FeedOptions) {
    this.log = options.log;
    this.log.onEvents((events, firstId, afterGap) => {
      if (afterGap) this.lostEvents(firstId);
      if (events.length > 0) this.numbered(events, firstId);
    });
    this.translator = new ThreadTranslator(options.threadId, {
      announced: (runId) => this.takeAnnouncement(runId),
      workflowActivities: this.workflowActivities,
      ...(options.wasCut && { wasCut: options.wasCut }),
    });
    this.state = options.loadState && new StateEvents(options.loadState);
    this.heartbeat = setInterval(() => this.keepAlive(), options.heartbeatMs);
    this.heartbeat.unref();
  }

  get clientCount(): number {
    return this.clients.size;
  }

  /** Subscribes to the thread; resolves once Mastra has registered the subscriber. */
  async start(): Promise<void> {
    const sub = await subscribeToThread(this.options.agent, this.options);
    this.unsubscribe = () => sub.unsubscribe();
    void this.consume(sub.stream);
  }

  /**
   * Adds a client: replay after `lastEventId` when this feed can replay it exactly, else a snapshot
   * run first (when asked for, or for any id it cannot replay), then live. The client's id is only
   * read: it never moves the sequence that the other clients share.
   */
  async attach(out: FeedSink, options: AttachOptions): Promise<void> {
    const client: Client = { out, position: this.log.lastId, loading: false, awaitingRun: false };
    this.clients.set(client.out, client);
    this.log.setFollowed?.(true);
    const { lastEventId } = options;
    if (lastEventId !== undefined && this.canReplayAfter(lastEventId)) {
      client.position = lastEventId;
      this.options.metrics?.joined('replay');
    } else if (lastEventId !== undefined && (await this.replayFromStore(client, lastEventId))) {
      // sent; the ring goes on from there
      this.options.metrics?.joined('replay');
    } else {
      // Join first: the snapshot frames carry the position the client resumes from, and a client
      // joining inside a run resumes before that run's RUN_STARTED, so ids would otherwise go back.
      this.joinCurrentRun(client);
      const snapshot = options.snapshot || lastEventId !== undefined;
      this.options.metrics?.joined(snapshot ? 'snapshot' : 'live');
      if (snapshot && !(await this.sendSnapshot(client))) return;
    }
    this.catchUp(client);
  }

  /** Events of a run the bridge streams itself (a workflow's): they go out as they are, after any batch still waiting for a read. */
  publishRun(events: Event[]): void {
    if (this.waitingForRead === 0) return this.publish(events);
    this.reads = this.reads.then(() => this.publish(events));
  }

  /** No client of this process follows the thread any more; the feed goes on for other processes' followers. */
  unfollow(): void {
    this.log.setFollowed?.(false);
  }

  detach(out: FeedSink): void {
    this.clients.delete(out);
  }

  /**
   * Ends every client stream for a shutdown, once the run this process was running on the thread
   * (cut by the shutdown, `RunEndings.cutAll`) is closed in the log: by its own end (Mastra's
   * `abort`, translated as cancelled) if that came through the subscription, else here, as
   * cancelled, as its `/run` reports it. Its clients get that terminal event before their streams
   * end; so do other processes' followers, through the shared log. A run of another process open
   * in the log goes on there: a client that comes back with `Last-Event-ID` gets the rest of it.
   */
  async shutdown(): Promise<void> {
    // What the subscription holds already (the cut run's last chunks) is translated first.
    await new Promise((resolve) => setImmediate(resolve));
    await this.reads;
    this.publish(this.translator.cancel());
    const own = this.openInLog !== undefined && this.openInLog === this.lastWritten ? this.closingRuns.get(this.openInLog) : undefined;
    if (own) {
      let timer: NodeJS.Timeout | undefined;
      const { closed } = own;
      // A shared log hands it back after a round trip to Redis; one that cannot is not waited for long.
      await Promise.race([closed, new Promise((resolve) => (timer = setTimeout(resolve, CUT_END_MS)))]);
      clearTimeout(timer);
    }
    this.close();
  }

  /** Ends every client stream (after closing the open run) and the Mastra subscription. */
  close(): void {
    this.publish(this.translator.close());
    for (const runId of [...this.closingRuns.keys()]) this.closedInLog(runId);
    this.deliverQueued();
    clearInterval(this.heartbeat);
    for (const timer of this.pendingEnds) clearTimeout(timer);
    this.stop.abort();
    this.unsubscribe?.();
    for (const client of this.clients.values()) client.out.close();
    this.clients.clear();
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
        if (isLostRemoteRun(chunk)) void this.settleLostRun(topLevelRunId(chunk) ?? '');
        else if (this.endsRunOfOthers(chunk)) this.expectEndInLog(chunk);
        else this.publishTranslated(chunk, this.translator.push(chunk));
      }
    } catch (error) {
      if (!this.stop.signal.aborted) this.options.logger.error(`Thread feed ${this.options.threadId} failed: ${errorMessage(error)}`);
    }
  }

  /**
   * The first chunk of a workflow call this feed meets: what the thread kept of the call's
   * activity is read first, so that a call resumed after its suspension goes on from the steps it
   * showed (as its `/run` and history do). One read per call, none for other chunks.
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

  /**
   * Another process's run ended: its own events (written by that process) close it in the log
   * within milliseconds. When they do not come (its appends failed while Redis was away, though
   * Mastra's end went through later), the run is settled from storage as a lost one, once.
   */
  private expectEndInLog(chunk: MastraChunk): void {
    const open = this.runStartSeq;
    if (open === undefined) return;
    const timer = setTimeout(() => {
      this.pendingEnds.delete(timer);
      if (this.runStartSeq === open && !this.stop.signal.aborted) void this.settleLostRun(topLevelRunId(chunk) ?? '');
    }, UNWRITTEN_END_GRACE_MS);
    timer.unref();
    this.pendingEnds.add(timer);
  }

  /**
   * A run of another process lost its lease before its end reached this feed (that process died,
   * or Redis was away while the run finished): storage tells how it ended. With an answer stored
   * after the run's messages, the bracket ends `RUN_FINISHED` (a finished run is never shown as
   * failed); else `RUN_ERROR`. Either way a snapshot bracket follows with what is stored: the
   * events the followers missed cannot be replayed, the history they built can. Every process
   * following the thread works this out alike, from the log (the run's bracket there, as its
   * process wrote it); the log takes the first one's (`settle`).
   */
  private async settleLostRun(runId: string): Promise<void> {
    if (!(await this.leaseLapsed(runId))) return;
    // Unreadable storage settles the run all the same: as failed, with no snapshot after it.
    const [history, state] = await Promise.all([this.options.loadHistory().catch(() => undefined), this.loadState().catch(() => undefined)]);
    const open = this.openShape ?? [];
    const ended = await this.options.latestRunEnded?.().catch(() => undefined); // then the history tells
    const finished = ended ?? (history !== undefined && answers(history, messageIdsOf(open)));
    const { threadId } = this.options;
    const events = closeRun(open, finished ? { finished: true } : { error: LOST_RUN });
    if (history) events.push(...snapshotBracket(threadId, `recovered-${runId}`, history, state));
    if (this.log.settle) this.log.settle(runId, events);
    else this.publish(events);
  }

  /**
   * Looks at the lease of run `runId`, another process's, every `watchLeaseMs` while its bracket is
   * open here (`watchLeaseMs`). A lease that is gone is given the grace an end in flight needs to
   * reach the log (the run writes its end, then lets go), then the run is settled as lost.
   */
  private watchLease(runId: string): void {
    const timer = setTimeout(() => {
      this.pendingEnds.delete(timer);
      void this.lookAtLease(runId);
    }, this.options.watchLeaseMs);
    timer.unref();
    this.pendingEnds.add(timer);
  }

  /** Another process's run without a Mastra run here: its lease looked at in turn, and its process's death heard of at once. */
  private watchRemoteRun(runId: string): void {
    this.watchLease(runId);
    // A dead process writes nothing more: what it wrote is in the log, so no grace is waited for.
    this.options.whenHolderGone?.(runId, () => void (this.openInLog === runId && !this.stop.signal.aborted && this.settleLostRun(runId)));
  }

  private async lookAtLease(runId: string): Promise<void> {
    if (this.openInLog !== runId || this.stop.signal.aborted) return;
    // Not readable (an outage): looked at again next time.
    const owner = await this.options.leaseOwner?.().catch(() => runId);
    if (this.openInLog !== runId) return;
    if (owner === runId) return this.watchLease(runId);
    const waited = await delay(UNWRITTEN_END_GRACE_MS, true, { signal: this.stop.signal }).catch(() => false);
    if (waited && this.openInLog === runId) await this.settleLostRun(runId);
  }

  /**
   * Whether the lease of a run Mastra found without one is really gone. Mastra reads the lease
   * once; Redis restarted empty loses every lease until each holder takes its own back (when its
   * connection is ready again: within the reconnect backoff, 2 s at most). Right after an outage,
   * the lease is looked at again after that grace; a run whose lease is back is alive, and watched
   * here until its end reaches the log or its lease lapses. With no outage near, a lapse is a
   * process that died: settled at once.
   */
  private async leaseLapsed(runId: string): Promise<boolean> {
    const { leaseOwner } = this.options;
    const open = this.runStartSeq;
    if (!leaseOwner || open === undefined || !this.log.outageWithin?.(AFTER_OUTAGE_MS)) return true;
    for (;;) {
      const waited = await delay(UNWRITTEN_END_GRACE_MS, true, { signal: this.stop.signal }).catch(() => false);
      if (!waited || this.runStartSeq !== open) return false;
      // Redis still away: nothing tells yet; the next look does.
      const owner = await leaseOwner().catch(() => runId);
      if (owner !== runId) return true;
    }
  }

  /**
   * Publishes a chunk's translated events, with what storage must add to them: the state events (a
   * read of the stored state at a run's start and after a working-memory update), and the thread
   * as stored before the terminal event of a run that showed what Mastra did not keep. Batches go
   * out in the order they were translated, whichever of the feed's two streams they came from.
   */
  private publishTranslated(chunk: MastraChunk, events: Event[]): void {
    const { state } = this;
    const concerned = state?.concerns(chunk, events) === true;
    const retracting = this.translator.endedRetracting;
    const cut = this.translator.endedCut;
    if (chunk.type === 'start') this.bracketOpenedAt = Date.now();
    // Most chunks need no read: they go out at once, unless a batch before them still waits.
    if (!concerned && !retracting && !cut && this.waitingForRead === 0) return this.publish(events);
    // Waited for before the terminal batch goes out, in order with the batches after it.
    const ended = cut?.runId ?? retracting;
    const woundDown = ended === undefined ? undefined : this.options.runEnded?.(ended);
    this.waitingForRead++;
    this.reads = this.reads
      .then(async () => {
        const withState = concerned && state ? await state.around(chunk, events) : events;
        this.publish(retracting ? await this.retracted(chunk, withState, woundDown) : cut ? await this.afterCut(cut, withState, woundDown) : withState);
      })
      .catch((error: unknown) => {
        // The run's own events still go out; only what the read adds is missing until the next bracket.
        this.options.logger.warn(`Thread feed ${this.options.threadId}: storage could not be read: ${errorMessage(error)}`);
        this.publish(events);
      })
      .finally(() => this.waitingForRead--);
  }

  /**
   * A run's terminal batch after the answer a guardrail blocked is forgotten, with the thread as
   * stored before its end. Once the run has wound down here its `/run` has kept how it ended, in
   * words this stream cannot read (a blocked step's reason): its run-end message says what history does.
   */
  private async retracted(chunk: MastraChunk, events: Event[], woundDown?: Promise<void>): Promise<Event[]> {
    await woundDown;
    const step = blockedStep(chunk);
    if (step) await this.options.dropBlockedStep?.(step);
    const history = await this.options.loadHistory();
    return beforeTerminal(withStoredRunEnd(events, history), history);
  }

  /**
   * The terminal batch of a run an abort cut (API.md: after a cut, live == history): once the run
   * has wound down here, the reasoning its cut step showed is kept under the live ids (as its
   * `/run` does, whichever comes first), and the thread as stored goes before its end.
   */
  private async afterCut({ step }: { runId: string; step?: CutStep }, events: Event[], woundDown?: Promise<void>): Promise<Event[]> {
    await woundDown;
    if (step) await this.options.keepCutStep?.(step, this.bracketOpenedAt);
    return beforeTerminal(events, await this.options.loadHistory());
  }

  private async loadState(): Promise<AgentState | undefined> {
    return this.options.loadState?.();
  }

  /** Hands translated events to the log, which numbers them (`numbered`). */
  private publish(events: Event[]): void {
    for (const event of events) if (event.type === EventType.RUN_STARTED) this.opening(event.runId);
    if (events.length > 0) this.log.append(events);
  }

  /** This feed opens run `runId`'s bracket: whoever cuts the run waits until its end is in the log (`closingRun`). */
  private opening(runId: string): void {
    this.lastWritten = runId;
    this.closedInLog(runId);
    let resolve = () => {};
    const closed = new Promise<void>((done) => (resolve = done));
    this.closingRuns.set(runId, { closed, resolve });
    this.options.closingRun?.(runId, closed);
  }

  /** Sends numbered events to every ready client (encoded once for all). */
  private numbered(events: readonly Event[], firstId: number): void {
    const again = this.openInLog === undefined ? -1 : events.findIndex((e) => e.type === EventType.RUN_STARTED && e.runId === this.openInLog);
    if (again >= 0) return this.reopened(events, firstId, again);
    let gapEnded = false;
    for (let i = 0; i < events.length; i++) {
      const event = events[i];
      if (event.type === EventType.RUN_STARTED) {
        // A bracket the log opens over one still open here ends that one for this feed's waiters too.
        this.closedInLog(this.openInLog);
        [this.runStartSeq, this.openInLog, this.openShape] = [firstId + i, event.runId, [event]];
        if (this.options.watchLeaseMs && this.options.sharedLog && event.runId !== this.lastWritten) this.watchRemoteRun(event.runId);
      } else if (isTerminal(event)) {
        gapEnded ||= this.gappedRun !== undefined && this.gappedRun === this.openInLog;
        this.closedInLog(this.openInLog);
        [this.runStartSeq, this.openInLog, this.openShape] = [undefined, undefined, undefined];
      } else if (shapesRun(event)) this.openShape?.push(event);
    }
    this.lastPublish = Date.now();
    this.queueDelivery(events, firstId);
    if (gapEnded) this.afterGap();
  }

  /**
   * Batches numbered in one event-loop turn go to the clients together, when the turn ends (or
   * once the oldest has waited `MAX_HOLD_MS`, inside a long turn): one write per client per turn,
   * however many batches the turn made. With thousands of clients, a delivery takes long enough
   * that each batch would otherwise be a write of its own to every client; past `CROWD` clients,
   * what follows a run's start also waits for the batches after it (`CROWD_HOLD_MS`).
   */
  private queueDelivery(events: readonly Event[], firstId: number): void {
    let queued = this.queued;
    if (queued && queued.firstId + queued.events.length === firstId) queued.events.push(...events);
    else {
      this.deliverQueued();
      queued = this.queued = { events: [...events], firstId, since: performance.now() };
    }
    const hold = this.clients.size >= CROWD && !queued.events.some(isAwaited) ? CROWD_HOLD_MS : 0;
    if (performance.now() - queued.since >= Math.max(MAX_HOLD_MS, hold)) return this.deliverQueued();
    if (this.deliveryScheduled) return;
    this.deliveryScheduled = true;
    const deliver = () => {
      this.deliveryScheduled = false;
      this.deliverQueued();
    };
    if (hold > 0) setTimeout(deliver, hold);
    else setImmediate(deliver);
  }

  /** Sends what `queueDelivery` holds to every ready client (encoded once for all). */
  private deliverQueued(): void {
    const queued = this.queued;
    if (!queued) return;
    this.queued = undefined;
    let sent = 0;
    for (const client of this.clients.values()) sent += this.deliver(client, queued.events, queued.firstId);
    this.options.metrics?.events.inc(sent);
  }

  private closedInLog(runId: string | undefined): void {
    if (runId === undefined) return;
    this.closingRuns.get(runId)?.resolve();
    this.closingRuns.delete(runId);
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
    this.lostEvents(firstId + at + 1);
    if (at + 1 < events.length) this.numbered(events.slice(at + 1), firstId + at + 1);
  }

  /**
   * The log lost events its clients never got (Redis trimmed or restarted under them): they get
   * the thread as stored, once the run open in the log has ended, or now.
   */
  private lostEvents(nextId: number): void {
    this.deliverQueued();
    // Not handled: a gap that swallowed the open run's end, then another run's RUN_STARTED before
    // that run is settled as lost; the clients' bracket of the first run stays open (not seen).
    // What they hold resumes at the log's next event: what came before it is gone from the ring.
    for (const client of this.clients.values()) if (!client.loading) client.position = Math.max(client.position, nextId - 1);
    if (this.openInLog !== undefined) this.gappedRun = this.openInLog;
    else this.afterGap();
  }

  /** The run Redis lost under its followers has ended: each gets the thread as stored, then what came since. */
  private afterGap(): void {
    this.deliverQueued();
    this.gappedRun = undefined;
    for (const client of this.clients.values()) {
      if (client.loading) continue;
      void this.sendSnapshot(client).then((sent) => sent && this.catchUp(client));
    }
  }

  /** Sends the batch to one client, from past what it holds (it may have caught up from the log while the batch waited); answers how many events it sent. */
  private deliver(client: Client, events: readonly Event[], firstId: number): number {
    if (client.loading) return 0;
    let from = Math.max(0, client.position + 1 - firstId);
    if (from >= events.length) return 0;
    if (client.awaitingRun) {
      from = events.findIndex((e, i) => i >= from && e.type === EventType.RUN_STARTED);
      if (from < 0) {
        client.position = firstId + events.length - 1;
        return 0;
      }
      client.awaitingRun = false;
    }
    client.out.sendShared(from === 0 ? events : events.slice(from), firstId + from);
    client.position = firstId + events.length - 1;
    this.cutOffIfBehind(client);
    return events.length - from;
  }

  /**
   * Only ids this feed handed out, still in its log, can be replayed, and its base (what a client
   * that got a snapshot before the feed's first event holds). Anything else names an unknown
   * point: an id from before this feed started (what happened while no one followed the thread,
   * or before a restart, is unknown), or one it never handed out.
   */
  private canReplayAfter(id: number): boolean {
    return id >= this.log.baseId && this.log.since(id) !== undefined;
  }

  /**
   * Replays what a shared log's store still holds after `id` (older than this feed's ring),
   * while live events wait in the ring; answers whether it could.
   */
  private async replayFromStore(client: Client, id: number): Promise<boolean> {
    if (!this.log.fetch || id >= this.log.baseId) return false;
    client.loading = true;
    // Not fetched (the store is away): the client gets a snapshot instead, as for an id out of reach.
    const older = await this.log.fetch(id).catch(() => undefined);
    client.loading = false;
    if (!older) return false;
    for (const { id: eventId, event } of older) client.out.sendShared([event], eventId);
    this.options.metrics?.events.inc(older.length);
    client.position = older.length > 0 ? older[older.length - 1].id : id;
    return true;
  }

  /** Sends what the client has not seen yet from the log. */
  private catchUp(client: Client): void {
    const missed = this.log.since(client.position);
    // The ring moved past it while its snapshot loaded: a gap it cannot see. It comes back for a new snapshot.
    if (!missed) return this.cutOff(client);
    let sent = 0;
    for (const { id, event } of missed) {
      if (client.awaitingRun && event.type !== EventType.RUN_STARTED) continue;
      client.awaitingRun = false;
      client.out.sendShared([event], id);
      sent++;
    }
    this.options.metrics?.events.inc(sent);
    if (missed.length > 0) client.position = missed[missed.length - 1].id;
    this.cutOffIfBehind(client);
  }

  /** A client joining inside a run starts at that run's `RUN_STARTED`, or waits for the next run. */
  private joinCurrentRun(client: Client): void {
    if (this.runStartSeq === undefined) return;
    if (this.log.since(this.runStartSeq - 1) !== undefined) client.position = this.runStartSeq - 1;
    else client.awaitingRun = true;
  }

  /**
   * Sends the snapshot run; answers whether it could. A history that fails to load is never sent
   * as an empty snapshot (a client would wipe its transcript): the client is cut off before any
   * frame, and reconnects with the same `Last-Event-ID` to try again.
   */
  private async sendSnapshot(client: Client): Promise<boolean> {
    client.loading = true;
    const runId = `snapshot-${randomUUID()}`;
    const { threadId } = this.options;
    let messages: Message[];
    let state: AgentState | undefined;
    let interrupts: Interrupt[] | undefined;
    try {
      [messages, state, interrupts] = await Promise.all([this.options.loadHistory(), this.loadState(), this.options.loadInterrupts?.()]);
    } catch (error) {
      this.options.logger.warn(`Snapshot of thread ${threadId} failed: ${errorMessage(error)}`);
      this.cutOff(client, "The thread's history could not be loaded; reconnect to try again");
      return false;
    }
    // Only the frame that completes the bracket carries the position the client resumes from
    // (ids never go back): a client cut inside the bracket keeps its previous id, and comes back
    // for the whole snapshot rather than past one it never had.
    const bracket = snapshotBracket(threadId, runId, messages, state, interrupts);
    client.out.send(bracket.slice(0, -1));
    client.out.send(bracket.slice(-1), client.position);
    this.options.metrics?.events.inc(bracket.length);
    client.loading = false;
    return true;
  }

  private cutOffIfBehind(client: Client): void {
    if (client.out.queuedBytes > this.options.maxClientQueueBytes) this.cutOff(client);
  }

  private cutOff(client: Client, reason = 'The client fell too far behind; reconnect with Last-Event-ID'): void {
    this.clients.delete(client.out);
    client.out.abort(reason);
  }

  private keepAlive(): void {
    if (Date.now() - this.lastPublish < this.options.heartbeatMs) return;
    for (const client of this.clients.values()) client.out.raw(': keep-alive\n\n');
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

/** A run that holds what is stored: the history, and the agent state when the thread has one. */
function snapshotBracket(threadId: string, runId: string, messages: Message[], state: AgentState | undefined, interrupts: Interrupt[] = []): Event[] {
  const [first, ...rest] = interrupts;
  return [
    { type: EventType.RUN_STARTED, threadId, runId },
    { type: EventType.MESSAGES_SNAPSHOT, messages },
    ...(state === undefined ? [] : [{ type: EventType.STATE_SNAPSHOT, snapshot: state } satisfies Event]),
    { type: EventType.RUN_FINISHED, threadId, runId, ...(first && { outcome: { type: 'interrupt' as const, interrupts: [first, ...rest] } }) },
  ];
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
