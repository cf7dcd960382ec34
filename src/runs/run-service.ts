import type { Message, RunAgentInput } from '@ag-ui/core';
import type { MastraDBMessage, MastraMemory } from '@mastra/core/memory';
import { inject, injectable } from 'inversify';
import { AgentProvider } from '../agents/agent-provider.js';
import { invalidInput } from '../errors.js';
import { memoryOf, type StorageThreadType } from '../mastra/index.js';
import { WorkingMemoryState, type AgentState } from '../state/working-memory.js';
import { inboxEntry, type DurableInbox } from '../threads/inbox.js';
import { RecoveryGate } from '../threads/recovery-gate.js';
import { recentHistory, type RecentHistory } from '../threads/recent-history.js';
import { ThreadStore, type ThreadScope } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';
import { appendPosition } from '../translate/history.js';
import { mastraRunIdOf, toolResultMessageId, type MessagePosition } from '../translate/ids.js';
import { selectNewMessages, tailIds, toMastraMessages, type MastraInputMessage } from '../translate/messages.js';
import { isReadOnly, type PreparedRun, type RunOptions } from './prepared-run.js';
import { findResumeTargets } from './resume.js';
import { RunAdmission } from './run-admission.js';
import type { RunPlan } from './run-plan.js';
import { RunStreamer } from './run-streamer.js';

export { AGUI_CONTEXT_KEY } from './stream-options.js';

/**
 * Prepares an agent's `POST /run`: selects the agent, checks thread ownership, converts the new
 * messages, takes the thread's turn (`RunAdmission`) and stores the input; `RunStreamer` then
 * streams it. Everything that can be refused is refused in `prepare()`, before a byte is streamed;
 * after that, every failure becomes a `RUN_ERROR` event.
 */
@injectable()
export class RunService {
  constructor(
    @inject(AgentProvider) private readonly agents: AgentProvider,
    @inject(ThreadStore) private readonly threads: ThreadStore,
    @inject(TOKENS.Inbox) private readonly inbox: DurableInbox,
    @inject(RecoveryGate) private readonly gate: RecoveryGate,
    @inject(RunAdmission) private readonly admission: RunAdmission,
    @inject(RunStreamer) private readonly streamer: RunStreamer,
  ) {}

  async prepare(input: RunAgentInput, options: RunOptions): Promise<PreparedRun> {
    const agent = this.agents.get(options.agentId);
    const memory = await memoryOf(agent);
    const scope = { threadId: input.threadId, resourceId: options.resourceId, agentId: agent.id };
    const recent = await this.recentOf(memory, scope, input);
    const [stored, storedIds] = [recent?.stored ?? [], recent?.storedIds ?? new Set<string>()];
    let inboxId: string | undefined;
    const resume = input.resume?.length ? await findResumeTargets(agent, input.resume, scope) : [];
    const fresh = memory ? selectNewMessages(input.messages, storedIds, stored.length > 0) : input.messages;
    const messages = newMastraMessages(input.messages, fresh);
    if (resume.length === 0 && messages.length === 0) {
      if (memory && isRetry(input.messages, storedIds)) return this.streamer.replayed(input, await this.threads.messages(scope, {}, 'agui'));
      throw invalidInput('The run has no new message to answer and nothing to resume');
    }
    // Every check comes before the first write: a refused request stores nothing (docs/api.md "Codes by route").
    const workingMemory = isReadOnly(options) ? undefined : WorkingMemoryState.of(memory);
    const state = clientState(input.state);
    await workingMemory?.assertFits(state);
    if (memory)
      await this.threads.checkIds(
        scope,
        messages.map((m) => m.id),
        recent?.lookedUp,
      );
    await this.admission.assertUnanswered(resume);
    // One run per thread at a time (here and in every process on the same leases).
    const mastraRunId = resume[0]?.runId ?? mastraRunIdOf(input.threadId, input.runId);
    const turn = memory && resume.length === 0 ? await this.admission.takeTurn(agent, scope, mastraRunId, options.multitask, recent?.thread) : undefined;
    let row: StorageThreadType | undefined;
    try {
      if (memory) row = (await this.threads.claim(scope, recent?.thread)).thread;
      // The client's state, when it differs from the stored one, is the run's from the start.
      if (await workingMemory?.write(scope, state, row)) row = undefined;
      if (memory) inboxId = await this.storeInput(input, scope, fresh, messages, options);
    } catch (error) {
      await turn?.release();
      throw error;
    }
    const announcement = { messages: fresh, appendsTo: memory ? appendTarget(messages, stored) : undefined };
    const plan: RunPlan = {
      messages,
      resume,
      mastraRunId,
      memory: !!memory,
      announcement,
      inboxId,
      turn,
      state: workingMemory && { store: workingMemory, scope, row },
      workflowActivities: recent?.context.workflowActivities,
    };
    return this.streamer.prepared(agent, input, options, plan);
  }

  /**
   * What the input is checked against, on a thread with memory: after what a crash left unanswered
   * on the thread (its input must come after theirs), the thread's last rows and which of the
   * input's ids it stores: not the whole thread, so a run costs the same on a long thread.
   */
  private async recentOf(memory: MastraMemory | undefined, scope: ThreadScope, input: RunAgentInput): Promise<RecentHistory | undefined> {
    if (!memory) return undefined;
    await this.gate.pass(input.threadId);
    return recentHistory(memory, scope, tailIds(input.messages));
  }

  /**
   * Acknowledged means stored: the new conversation messages are committed before `RUN_STARTED`,
   * in their order (tool results belong to their call's stored message, and system messages are
   * instructions, not history: Mastra stores both its own way). A read-only run
   * (`memoryOptions.readOnly`) stores nothing. Answers the run's durable-inbox entry, if any.
   */
  private async storeInput(
    input: RunAgentInput,
    scope: ThreadScope & { agentId: string },
    fresh: Message[],
    messages: MastraInputMessage[],
    options: RunOptions,
  ): Promise<string | undefined> {
    await this.threads.rememberToolMessageIds(scope, clientToolMessageIds(fresh));
    const newIds = new Set(fresh.map((m) => m.id));
    const conversation = messages.filter((m) => newIds.has(m.id) && (m.role === 'user' || m.role === 'assistant'));
    if (isReadOnly(options) || conversation.length === 0) return undefined;
    await this.threads.storeInput(scope, conversation);
    // In the inbox while the run lasts: cut by a crash, the restarted process runs it again.
    const inboxId = conversation.at(-1)!.id;
    await this.inbox.add(inboxEntry('run', inboxId, scope, conversation));
    return inboxId;
  }
}

/**
 * The new messages as Mastra takes them. The whole input is converted, then the new ids kept: a
 * new tool message takes its tool name from the (already stored) assistant call before it, else
 * Mastra would store it as `unknown`.
 */
function newMastraMessages(input: Message[], fresh: Message[]): MastraInputMessage[] {
  const freshIds = new Set([...fresh.map((m) => m.id), ...callOwners(input, fresh)]);
  return toMastraMessages(input).filter((m) => freshIds.has(m.id));
}

/**
 * Ids of the assistant messages whose calls the new tool messages answer. Mastra merges a tool
 * result into its call only when both are in the same input (it upserts the stored call row by
 * id); a result sent alone is stored as a second assistant row repeating the call.
 */
function callOwners(input: Message[], fresh: Message[]): string[] {
  const answered = new Set(fresh.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])));
  if (answered.size === 0) return [];
  return input.flatMap((m) => (m.role === 'assistant' && m.toolCalls?.some((call) => answered.has(call.id)) ? [m.id] : []));
}

/**
 * A `/run` sent again: its last message (activities and reasoning aside) is stored on the thread,
 * as a retry after a timeout sends it (`selectNewMessages` then finds nothing new).
 */
function isRetry(input: Message[], storedIds: ReadonlySet<string>): boolean {
  const last = input.findLast((m) => m.role !== 'activity' && m.role !== 'reasoning');
  return last !== undefined && storedIds.has(last.id);
}

/** `RunAgentInput.state` as a state to store: an object, or none (`{}`) when absent. */
function clientState(state: unknown): AgentState {
  if (state === undefined || state === null) return {};
  if (typeof state !== 'object' || Array.isArray(state)) throw invalidInput('state must be a JSON object', [{ path: 'state', message: 'Expected an object' }]);
  return state as AgentState;
}

/**
 * The ids a client gave its new tool messages, where they differ from the one history would make
 * up: Mastra folds a tool message into its call and keeps no id for it.
 */
function clientToolMessageIds(fresh: Message[]): Record<string, string> {
  const ids: Record<string, string> = {};
  for (const m of fresh) if (m.role === 'tool' && m.id !== toolResultMessageId(m.toolCallId)) ids[m.toolCallId] = m.id;
  return ids;
}

/**
 * Mastra appends an answer to the latest stored assistant message when the run adds no message of
 * another role (it only answers tool calls): the answer then continues that message's segments.
 */
function appendTarget(messages: MastraInputMessage[], stored: MastraDBMessage[]): MessagePosition | undefined {
  const last = stored.at(-1);
  if (!last || last.role !== 'assistant' || messages.length === 0) return undefined;
  if (!messages.every((m) => m.role === 'tool' || m.role === 'assistant')) return undefined;
  return appendPosition(last);
}
