import type { Event } from '@ag-ui/core';
import type { MastraInputMessage } from '../translate/messages.js';
import type { RunTranslator } from '../translate/run-translator.js';
import type { WorkflowActivityContent } from '../translate/workflow-activity.js';
import type { ThreadTurn } from '../threads/thread-lease.js';
import type { ThreadScope } from '../threads/thread-store.js';
import type { StateEvents } from '../state/state-events.js';
import type { StorageThreadType, ThreadTarget } from '../mastra/index.js';
import type { WorkingMemoryState } from '../state/working-memory.js';
import type { EventSink, RunOptions } from './prepared-run.js';
import type { ResultCapture } from './result-capture.js';
import type { RunAnnouncement } from './run-announcements.js';
import type { ResumeTarget } from './resume.js';

/** A run as it streams: what reading its output, translating it and ending it share. */
export interface RunContext {
  translator: RunTranslator;
  capture: ResultCapture;
  write: EventSink;
  runId: string;
  frontendTools: ReadonlySet<string>;
  options: RunOptions;
  signal: AbortSignal;
  /** The run's state events, for an agent with working memory. */
  state?: StateEvents;
  /** The thread the run stores its answer in (none for a read-only run): what a retraction shows. */
  stored?: ThreadScope;
  /** Whether the latest chunk read was a pause (the run's stream ends there, waiting for a human). */
  lastWasPause?: boolean;
  /** The Mastra run being read (a resumed run keeps its own id): what a cut waits on. */
  mastraRunId?: string;
  /** The events that end a run Mastra cut (its `abort` chunk), held back for `cut`. */
  cutEnd?: Event[];
  /** When the run started streaming (ms): what it stored came after. */
  startedAt: number;
}

/** What `RunService.prepare` decided, for the stream. */
export interface RunPlan {
  /** The new messages, as Mastra takes them. */
  messages: MastraInputMessage[];
  resume: ResumeTarget[];
  /** The Mastra run it starts (the client's run id scoped to the thread: `mastraRunIdOf`), or the first it resumes. */
  mastraRunId: string;
  memory: boolean;
  /** What the thread's followers learn of the run (a run that only resumes announces nothing). */
  announcement: RunAnnouncement;
  /** The run's entry in the durable inbox, removed when the run ends here (however it ends). */
  inboxId?: string;
  /** The thread's lease, taken for the run before Mastra registers it. */
  turn?: ThreadTurn;
  /**
   * Where the thread's state lives, for an agent with working memory; `row`: the thread's row as
   * the run starts, when prepare read it and wrote no state since: it answers the opening state.
   */
  state?: { store: WorkingMemoryState; scope: ThreadTarget; row?: StorageThreadType };
  /** What the thread's workflow calls showed when they last ran (a resume goes on from there). */
  workflowActivities?: Readonly<Record<string, WorkflowActivityContent>>;
}

/** Calls the client already answered, while a resumed run goes on (`pipe` resumes them in turn). */
export interface ResumeQueue {
  waiting: Map<string, ResumeTarget>;
  next?: ResumeTarget;
}
