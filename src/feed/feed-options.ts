import type { Interrupt, Message } from '@ag-ui/core';
import type { Agent } from '@mastra/core/agent';
import type { BridgeLogger } from '../logger.js';
import type { EventCounter, FollowerJoin } from '../observability/metrics.js';
import type { BlockedStep, CutStep } from '../translate/retraction.js';
import type { RunAnnouncement } from '../translate/thread-translator.js';
import type { WorkflowActivityContent } from '../translate/workflow-activity.js';
import type { AgentState } from '../state/working-memory.js';
import type { ThreadEventLog } from './event-log.js';

/* What a `ThreadFeed` is given (its parts pick what they use) and what a joining client asks. */

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
  /** An agent's feed: the run stopped on an interrupt, which Mastra replays to it (`PausedRun`). */
  stoppedRun?: () => Promise<string | undefined>;
  /** An agent's feed: the ids of the interrupts the thread's stopped runs wait on, as storage says (a snapshot offers only those). */
  waitingInterrupts?: () => Promise<ReadonlySet<string>>;
  /** Forgets an answer a guardrail blocked after it streamed (`ThreadStore.dropBlockedStep`). */
  dropBlockedStep?: (step: BlockedStep) => Promise<void>;
  /**
   * A workflow's feed: a run another process writes here is not on Mastra's thread subscription,
   * so nothing says so if that process dies. While its bracket is open, its lease is looked at
   * every `watchLeaseMs` (with a shared log), and a run whose lease lapsed is settled as lost.
   */
  watchLeaseMs?: number;
  /** The run holding the thread's lease, in any process, by the id its bracket shows (a lost run's settlement checks it first). */
  leaseOwner?: () => Promise<string | undefined>;
  /**
   * With `watchLeaseMs`, in scale-out: calls `gone` once `HolderWatch` finds the process running
   * run `runId` dead, so its followers here hear of it within seconds, not at the lease's TTL.
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
