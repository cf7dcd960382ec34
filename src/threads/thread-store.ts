import { WorkingMemoryState, type AgentState } from '../state/working-memory.js';
import type { Message } from '@ag-ui/core';
import type { Mastra } from '@mastra/core';
import type { Agent } from '@mastra/core/agent';
import type { MessageListInput } from '@mastra/core/agent/message-list';
import { inject, injectable } from 'inversify';
import { AgentProvider } from '../agents/agent-provider.js';
import {
  assistantRows,
  backgroundTasksOf,
  createThread,
  deleteMessages,
  deleteThread,
  inputRows,
  messagesById,
  recallPage,
  recallTail,
  releaseThread,
  rewriteMessage,
  saveMessages,
  storedWorkflowRun,
  threadById,
  threadTarget,
  threadsOf,
  workflowsOf,
  writeThread,
  type AnyWorkflow,
  type MastraDBMessage,
  type MastraMemory,
  type Page,
  type StorageThreadType,
  type StoredWorkflowRun,
  type ThreadTarget,
} from '../mastra/index.js';
import { conflict, notFound } from '../errors.js';
import { TOKENS } from '../tokens.js';
import { runEndsOnPage, subagentRows, type ThreadHistory } from './history-context.js';
import type { IdHolders } from './recent-history.js';
import { RecoveryGate } from './recovery-gate.js';
import type { ThreadLocks } from './thread-locks.js';
import {
  contextOf,
  KEPT_RUN_ENDS,
  mergeMetadata,
  RUN_ENDS_KEY,
  THREAD_AGENT_KEY,
  toThreadInfo,
  TOOL_MESSAGE_IDS_KEY,
  WORKFLOW_ACTIVITIES_KEY,
  WORKFLOW_RUN_KEY,
  withoutInternal,
  workflowActivitiesOf,
  type ThreadInfo,
  type ThreadWorkflowRun,
} from './thread-metadata.js';
import { toAguiMessages, type StoredBackgroundTask, type ToolMessageIds } from '../translate/history.js';
import { toThreadMessage, type ThreadMessage } from '../translate/thread-message.js';
import { cutStepMessage, textOf, type BlockedStep, type CutStep } from '../translate/retraction.js';
import type { WorkflowActivityContent } from '../translate/workflow-activity.js';
import type { RunEndContent, StoredRunEnd } from '../translate/run-end.js';

export type { ThreadInfo, ThreadWorkflowRun };

/** A thread's latest workflow run as storage holds it: the workflow, Mastra's run id, where the run stands. */
export interface LatestWorkflowRun {
  workflow: AnyWorkflow;
  runId: string;
  /** The AG-UI run id of the `/run` that ran it last (`ThreadWorkflowRun.lastRunId`). */
  lastRunId?: string;
  stored: StoredWorkflowRun;
}

/** A thread of a resource, and the agent (or workflow) a request means on it: the thread's one identity, `ThreadTarget`, plus the agent. */
export interface ThreadScope extends ThreadTarget {
  agentId?: string;
}

export type { Page };

/** What `own` answers: the thread's agent and memory, whether the thread existed (a new one has no stopped run to supersede), and its row when it exists. */
export type OwnedThread = { agent: Agent; memory: MastraMemory; existed: boolean; thread?: StorageThreadType };

/**
 * Thread CRUD and history over Mastra memory, scoped to a resource: a thread of another resource
 * is answered exactly like a missing one (`404 THREAD_NOT_FOUND`), so its existence never leaks.
 */
@injectable()
export class ThreadStore {
  constructor(
    @inject(AgentProvider) private readonly agents: AgentProvider,
    @inject(TOKENS.Mastra) private readonly mastra: Mastra,
    @inject(TOKENS.ThreadLocks) private readonly locks: ThreadLocks,
    @inject(RecoveryGate) private readonly gate: RecoveryGate,
  ) {}

  /**
   * The thread's agent and memory, for the caller. Another resource's thread is a thread that does
   * not exist, in every mode (docs/security.md): `read` and `existing` require the thread (`404`
   * for both), `claim` creates a missing thread for the caller (a signal may wake a run on it; a
   * taken id is `404`), and `follow` answers a missing thread, someone else's too, as one not
   * stored yet. What may start a run waits for what a crash left unanswered there.
   */
  async own(scope: ThreadScope, mode: 'read' | 'follow' | 'claim' | 'existing'): Promise<OwnedThread> {
    const resolved = await this.agents.withMemory(scope.agentId);
    const owned = { ...scope, agentId: resolved.agent.id };
    if (mode === 'follow') return { ...resolved, ...(await this.ownedOrMissing(owned, 'as-missing')) };
    if (mode !== 'read') await this.gate.pass(scope.threadId);
    if (mode === 'claim') return { ...resolved, ...(await this.claim(owned)) };
    return { ...resolved, existed: true, thread: (await this.load(owned)).thread };
  }

  async create(input: { resourceId: string; threadId?: string; title?: string; metadata?: Record<string, unknown>; agentId?: string }): Promise<ThreadInfo> {
    const { memory } = await this.agents.withMemory(input.agentId);
    const create = async () => {
      if (input.threadId && (await threadById(memory, input.threadId))) {
        throw conflict(`Thread ${input.threadId} already exists`);
      }
      const { resourceId, threadId, title } = input;
      return toThreadInfo(await createThread(memory, { resourceId, threadId, title, metadata: withoutInternal(input.metadata) }));
    };
    // Check-then-create must not interleave for one id: stores save with an upsert (LibSQL: INSERT
    // OR REPLACE), so a second create that passed the check too would take over the first's thread.
    return input.threadId ? this.locks.exclusive(input.threadId, create) : create();
  }

  async list(input: { resourceId: string; agentId?: string } & Page): Promise<ThreadInfo[]> {
    const { memory } = await this.agents.withMemory(input.agentId);
    return (await threadsOf(memory, input.resourceId, input)).map(toThreadInfo);
  }

  async get(scope: ThreadScope): Promise<ThreadInfo> {
    const { thread } = await this.load(scope);
    return toThreadInfo(thread);
  }

  /** Loads a thread the caller owns, with the memory it lives in. */
  async load(scope: ThreadScope): Promise<{ thread: StorageThreadType; memory: MastraMemory }> {
    const memory = await this.memoryOf(scope);
    const thread = await threadById(memory, scope.threadId);
    if (!thread || thread.resourceId !== scope.resourceId) throw notFound('THREAD_NOT_FOUND', `Thread ${scope.threadId} not found`);
    return { thread, memory };
  }

  /**
   * Makes sure the caller owns the thread, creating it when missing (under the same per-thread lock
   * as `create`, so two first runs on a new id cannot hand it to different resources), and that it
   * remembers the agent of its first run (`scope.agentId`). Another resource's thread is `404`.
   * Answers whether the thread already existed, and its row as claimed. `known`: the row as this
   * request read it already; a thread's owner never changes, so one that is the caller's and knows
   * its agent is claimed as it is, with no read.
   */
  async claim(scope: ThreadScope, known?: StorageThreadType): Promise<{ existed: boolean; thread: StorageThreadType }> {
    if (known?.resourceId === scope.resourceId && (scope.agentId === undefined || known.metadata?.[THREAD_AGENT_KEY] !== undefined))
      return { existed: true, thread: known };
    const memory = await this.memoryOf(scope);
    const remembered = scope.agentId === undefined ? {} : { [THREAD_AGENT_KEY]: scope.agentId };
    return this.locks.exclusive(scope.threadId, async () => {
      const thread = await threadById(memory, scope.threadId);
      if (thread && thread.resourceId !== scope.resourceId) throw notFound('THREAD_NOT_FOUND', `Thread ${scope.threadId} not found`);
      if (!thread)
        return { existed: false, thread: await createThread(memory, { resourceId: scope.resourceId, threadId: scope.threadId, metadata: remembered }) };
      // A thread made by `POST /threads` learns its agent from its first run, once.
      if (scope.agentId !== undefined && thread.metadata?.[THREAD_AGENT_KEY] === undefined)
        return { existed: true, thread: await writeThread(memory, thread, { title: thread.title ?? '', metadata: { ...thread.metadata, ...remembered } }) };
      return { existed: true, thread };
    });
  }

  /**
   * The agent or workflow the thread's first run ran, while it is still registered: what a thread
   * route that names none means. None for a thread not stored yet, or another resource's.
   */
  async agentOf(scope: ThreadScope): Promise<string | undefined> {
    const thread = await threadById(await this.memoryOf({}), scope.threadId);
    const agentId = thread?.resourceId === scope.resourceId ? thread.metadata?.[THREAD_AGENT_KEY] : undefined;
    return typeof agentId === 'string' && this.agents.knows(agentId) ? agentId : undefined;
  }

  /**
   * Checks the message ids a run brings, whatever kind of run it is: an id another thread holds is
   * `409` (Mastra saves messages by id, so it would move that row, possibly another resource's,
   * into this thread). Answers those this thread stores already. `known`: ids this request looked
   * up already (`RecentHistory.lookedUp`); only the others are read.
   */
  async checkIds(scope: ThreadScope, ids: readonly string[], known: IdHolders = new Map()): Promise<Set<string>> {
    const unread = ids.filter((id) => !known.has(id));
    const found = unread.length > 0 ? await messagesById(await this.memoryOf(scope), unread) : [];
    const holders = [...ids.flatMap((id) => (known.get(id) === undefined ? [] : [{ id, threadId: known.get(id) }])), ...found];
    const taken = holders.find((m) => m.threadId !== scope.threadId);
    if (taken) throw conflict(`Message id ${taken.id} is already used by another thread`);
    return new Set(holders.map((m) => m.id));
  }

  /**
   * The thread when it is the caller's, `existed: false` when it does not exist. Another resource's
   * thread is never reached through this caller: refused (`404`), or answered as one that does not exist.
   */
  async ownedOrMissing(scope: ThreadScope, foreign: 'refuse' | 'as-missing' = 'refuse'): Promise<{ existed: boolean; thread?: StorageThreadType }> {
    const thread = await threadById(await this.memoryOf(scope), scope.threadId);
    if (thread?.resourceId === scope.resourceId) return { existed: true, thread };
    if (thread && foreign === 'refuse') throw notFound('THREAD_NOT_FOUND', `Thread ${scope.threadId} not found`);
    return { existed: false };
  }

  /** Updates the title and merges `metadata` into what is stored (keys set to `null` are removed). */
  async update(scope: ThreadScope, patch: { title?: string; metadata?: Record<string, unknown> }): Promise<ThreadInfo> {
    // Serialised per thread: two PATCHes read-merge-write the same metadata, neither may lose the other's keys.
    return this.locks.exclusive(scope.threadId, async () => {
      const { thread, memory } = await this.load(scope);
      const metadata = mergeMetadata(thread.metadata, withoutInternal(patch.metadata));
      const title = patch.title ?? thread.title ?? '';
      // A removed key needs the whole row written again (`writeThread`'s `replace`).
      const replace = Object.keys(thread.metadata ?? {}).some((key) => !(key in metadata));
      return toThreadInfo(await writeThread(memory, thread, { title, metadata, replace }));
    });
  }

  async delete(scope: ThreadScope): Promise<void> {
    const { memory } = await this.load(scope);
    // Mastra keeps notifications and schedules past their thread: none may still reach a thread made
    // again under this id. Before the delete, so that a failure leaves the thread to delete again.
    await releaseThread(this.mastra, threadTarget(scope));
    await deleteThread(memory, scope.threadId);
  }

  /**
   * Stored messages of a thread, oldest first, signals included, with the client ids of its tool
   * messages and its background tasks (the live stream showed both; a caller that only needs the
   * message ids can leave the tasks out and save a query).
   */
  async history(scope: ThreadScope, page: Page = {}, include = { backgroundTasks: true }): Promise<ThreadHistory> {
    const { memory, thread } = await this.load(scope);
    const tasks: Promise<StoredBackgroundTask[]> = include.backgroundTasks ? backgroundTasksOf(this.mastra, scope) : Promise.resolve([]);
    const [stored, backgroundTasks] = await Promise.all([recallPage(memory, scope, page), tasks]);
    const [subagents, runEnds] = await Promise.all([subagentRows(memory, stored), runEndsOnPage(thread, memory, scope, page, stored)]);
    return { stored, context: { ...contextOf(thread, backgroundTasks), ...(subagents.size > 0 && { subagents }), ...(runEnds && { runEnds }) } };
  }

  /**
   * Keeps how a run ended that did not finish as asked (its run-end message: `runEndActivity`):
   * history places it after what the run stored, found from the stored message `after` (the input
   * it answered), else from the time, now. The latest `KEPT_RUN_ENDS`.
   */
  async rememberRunEnd(scope: ThreadScope, id: string, content: RunEndContent, after?: string): Promise<void> {
    const end: StoredRunEnd = { content, at: Date.now(), ...(after !== undefined && { after }) };
    await this.writeInternal(scope, RUN_ENDS_KEY, (kept) => {
      const ends = Object.entries({ ...(kept as Record<string, StoredRunEnd> | undefined), [id]: end });
      return Object.fromEntries(ends.sort(([, a], [, b]) => a.at - b.at).slice(-KEPT_RUN_ENDS));
    });
  }

  /** The thread's last `rows` stored messages (signals included), oldest first: one query however long the thread. */
  async tail(scope: ThreadScope, rows: number): Promise<MastraDBMessage[]> {
    return recallTail(await this.memoryOf(scope), scope, rows);
  }

  /** The thread's agent state: its working memory as AG-UI state (`{}` when it has none, or the agent keeps no working memory). */
  async state(scope: ThreadScope): Promise<AgentState> {
    const { memory } = await this.own(scope, 'read');
    return (await WorkingMemoryState.of(memory)?.read(scope)) || {};
  }

  async messages(scope: ThreadScope, page: Page, format: 'mastra'): Promise<ThreadMessage[]>;
  async messages(scope: ThreadScope, page: Page, format: 'agui'): Promise<Message[]>;
  async messages(scope: ThreadScope, page: Page, format: 'mastra' | 'agui'): Promise<ThreadMessage[] | Message[]> {
    const { stored, context } = await this.history(scope, page);
    return format === 'agui' ? toAguiMessages(stored, context) : stored.map(toThreadMessage);
  }

  /**
   * Stores the user messages a run answers before the run starts, so that an acknowledged message
   * (a `/run` that sent `RUN_STARTED`) survives a crash of the process running it. Mastra saves
   * them again when the run ends, under the same ids: an upsert, never a second copy.
   */
  async storeInput(scope: ThreadScope, messages: MessageListInput): Promise<void> {
    await saveMessages(await this.memoryOf(scope), inputRows(scope, messages));
  }

  /**
   * Stores what a workflow run said (the texts its steps streamed, then its answer) as assistant
   * messages under the ids the live stream gave them, so that history shows what was streamed.
   */
  async storeAnswer(scope: ThreadScope, texts: ReadonlyArray<{ id: string; text: string }>): Promise<void> {
    if (texts.length === 0) return;
    await saveMessages(await this.memoryOf(scope), assistantRows(scope, texts));
  }

  /** Keeps what the run's workflow calls showed (merged into what the thread kept of earlier calls). */
  async rememberWorkflowActivities(scope: ThreadScope, activities: Record<string, WorkflowActivityContent>): Promise<void> {
    await this.writeInternal(scope, WORKFLOW_ACTIVITIES_KEY, (kept) => ({ ...(kept as Record<string, WorkflowActivityContent> | undefined), ...activities }));
  }

  /** What the thread kept of its workflow calls' activities, by tool call id (`{}` before any). */
  async workflowActivities(scope: ThreadScope): Promise<Record<string, WorkflowActivityContent>> {
    const { thread } = await this.load(scope);
    return { ...workflowActivitiesOf(thread) };
  }

  /** Remembers the thread's latest workflow run (its state is the thread's; new input supersedes it while it waits). */
  async rememberWorkflowRun(scope: ThreadScope, run: ThreadWorkflowRun): Promise<void> {
    await this.writeInternal(scope, WORKFLOW_RUN_KEY, () => run);
  }

  /**
   * The thread's latest workflow run (of `workflowId`, when given) as storage holds it: none on a
   * thread with no workflow run, another resource's, or one that does not exist yet (a first run).
   * `row`: the thread as the caller read it in this request already.
   */
  async latestWorkflowRun(scope: ThreadScope, workflowId?: string, row?: StorageThreadType): Promise<LatestWorkflowRun | undefined> {
    const thread = row ?? (await threadById(await this.memoryOf(scope), scope.threadId));
    if (!thread || thread.resourceId !== scope.resourceId) return undefined;
    const run = thread.metadata?.[WORKFLOW_RUN_KEY] as Partial<ThreadWorkflowRun> | undefined;
    if (typeof run?.workflowId !== 'string' || typeof run.runId !== 'string' || (workflowId !== undefined && run.workflowId !== workflowId)) return undefined;
    const workflow = workflowsOf(this.mastra).find(([, w]) => w.id === run.workflowId)?.[1];
    const stored = workflow && (await storedWorkflowRun(this.mastra, workflow, run.runId));
    // The key is the bridge's alone, and still trusted only for a run of the thread's own resource.
    if (stored?.resourceId !== scope.resourceId) return undefined;
    return workflow && stored && { workflow, runId: run.runId, ...(typeof run.lastRunId === 'string' && { lastRunId: run.lastRunId }), stored };
  }

  /**
   * Keeps the ids a client gave the tool messages it sends (committed before the run starts), so
   * that history shows them under the same ids as the client's own list. Only ids that differ
   * from the default `tool-result-<toolCallId>` are kept.
   */
  async rememberToolMessageIds(scope: ThreadScope, ids: ToolMessageIds): Promise<void> {
    if (Object.keys(ids).length === 0) return;
    await this.writeInternal(scope, TOOL_MESSAGE_IDS_KEY, (kept) => ({ ...(kept as ToolMessageIds | undefined), ...ids }));
  }

  /** Rewrites one of the bridge's own metadata keys from what it holds, under the thread's lock (read-merge-write must not interleave). */
  private async writeInternal(scope: ThreadScope, key: string, update: (kept: unknown) => unknown): Promise<void> {
    await this.locks.exclusive(scope.threadId, async () => {
      const { thread, memory } = await this.load(scope);
      await writeThread(memory, thread, { title: thread.title ?? '', metadata: { ...thread.metadata, [key]: update(thread.metadata?.[key]) } });
    });
  }

  /**
   * Forgets an answer a guardrail blocked after it streamed: Mastra stores it, but the client is
   * told it is gone (`beforeTerminal`), and the model must not read it again. Cuts the blocked step
   * (the parts after the message's last `step-start`) when it holds the text that step wrote; the
   * message goes when nothing else is left of it. Done twice, the second changes nothing.
   */
  async dropBlockedStep(scope: ThreadScope, step: BlockedStep): Promise<void> {
    const memory = await this.memoryOf(scope);
    const message = (await messagesById(memory, [step.messageId])).find((m) => m.threadId === scope.threadId);
    if (!message) return;
    const { parts } = message.content;
    const lastStep = parts.findLastIndex((p) => p.type === 'step-start');
    const kept = parts.slice(0, Math.max(lastStep, 0));
    if (textOf(parts.slice(lastStep + 1)) !== step.text) return;
    if (!kept.some((p) => p.type !== 'step-start')) return deleteMessages(memory, [message.id]);
    // Semantic recall must not find the blocked text: `rewriteMessage` re-embeds it where Memory can.
    await rewriteMessage(memory, { id: message.id, content: { ...message.content, parts: kept, content: textOf(kept) } });
  }

  /**
   * Keeps what a cut step showed (live == history): Mastra saves the text of a step cut short under
   * a new id and drops its reasoning. The answer the cut run left (the thread's last message, when
   * an assistant message stored since `since`, in ms) becomes the step's message with its reasoning;
   * with none, the reasoning is stored as the step's message.
   */
  async keepCutStep(scope: ThreadScope, step: CutStep, since: number): Promise<void> {
    const memory = await this.memoryOf(scope);
    const last = (await recallPage(memory, scope, {})).at(-1);
    if (last?.id === step.messageId) return;
    const left = last?.role === 'assistant' && new Date(last.createdAt).getTime() >= since ? last : undefined;
    await saveMessages(memory, [cutStepMessage(step, left, scope)]);
    if (left) await deleteMessages(memory, [left.id]);
  }

  /** The memory of the scope's agent (`withMemory`). */
  private async memoryOf(scope: { agentId?: string }): Promise<MastraMemory> {
    return (await this.agents.withMemory(scope.agentId)).memory;
  }
}
