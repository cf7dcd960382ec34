import type { Message, RunAgentInput } from '@ag-ui/core';
import { randomUUID } from 'node:crypto';
import { inject, injectable } from 'inversify';
import { interruptNotWaiting, invalidInput, type ErrorDetail } from '../errors.js';
import { check, findStep, jsonSchemaOf, type AnyWorkflow, type Checked } from '../mastra/index.js';
import type { PreparedRun, RunOptions } from '../runs/prepared-run.js';
import { PendingInterrupts } from '../threads/pending-interrupts.js';
import type { ThreadControl } from '../threads/thread-control.js';
import { type ThreadScope, ThreadStore } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';
import { parseWorkflowInterruptId } from '../translate/ids.js';
import { lastUserText, workflowInput } from './workflow-input.js';
import type { Start, WorkflowPlan } from './workflow-plan.js';
import { WorkflowStreamer } from './workflow-streamer.js';
import { WorkflowTurns } from './workflow-turns.js';

/**
 * Runs a Mastra workflow for `POST /run` (docs/api.md "Workflows"): the input and state are checked
 * against the workflow's schemas, and a resume against the suspended step's, before a byte is
 * streamed (a refused request stores nothing); the run takes the thread as an agent's run does
 * (Mastra's thread lease, `multitask`), stores the user message first and what it said last,
 * and streams through `WorkflowTranslator`. The run's state events come from the state Mastra
 * stores after each step.
 */
@injectable()
export class WorkflowRunService {
  constructor(
    @inject(ThreadStore) private readonly threads: ThreadStore,
    @inject(PendingInterrupts) private readonly interrupts: PendingInterrupts,
    @inject(TOKENS.ThreadControl) private readonly control: ThreadControl,
    @inject(WorkflowStreamer) private readonly streamer: WorkflowStreamer,
    @inject(WorkflowTurns) private readonly turns: WorkflowTurns,
  ) {}

  /**
   * `POST /threads/:threadId/abort` on a workflow's thread: cancels its run streaming, in whichever
   * process streams it (`WorkflowTurns.stop`), or else its run suspended on a person, as new input
   * supersedes it (`PendingInterrupts`: taken once, so a resume at the same moment either wins or
   * finds it no longer waiting).
   */
  async abort(scope: ThreadScope): Promise<{ aborted: boolean }> {
    await this.threads.get(scope);
    const streaming = await this.turns.stop(scope, 'Aborted');
    return { aborted: streaming || (await this.interrupts.supersedeWorkflow(scope)).length > 0 };
  }

  async prepare(workflow: AnyWorkflow, input: RunAgentInput, options: RunOptions): Promise<PreparedRun> {
    const scope = { threadId: input.threadId, resourceId: options.resourceId, agentId: workflow.id };
    await this.threads.ownedOrMissing(scope);
    const start = input.resume?.length ? await this.resume(workflow, input, scope) : await this.start(workflow, input);
    const message = start.kind === 'start' ? await this.newUserMessage(input, scope) : undefined;
    // Every check comes before the first write: a refused request stores nothing (docs/api.md "Codes by route").
    const turn = await this.turns.take(scope, input.runId, options.multitask);
    try {
      // The interrupt is taken last, once the run has the thread: a refused run leaves it waiting.
      if (start.kind !== 'start' && !(await this.control.once(start.interruptId, async () => true))) throw interruptNotWaiting(start.interruptId);
      // New input supersedes the workflow run that waits on a person (docs/api.md "Pending interrupts do not hold a thread"), or that a crash cut: it is cancelled.
      if (start.kind === 'start') await this.interrupts.supersedeWorkflow(scope, { holdingThread: true });
      await this.threads.claim(scope);
      if (message) await this.threads.storeInput(scope, [{ id: message.id, role: 'user', content: message.text }]);
      await this.threads.rememberWorkflowRun(scope, { workflowId: workflow.id, runId: start.mastraRunId, lastRunId: input.runId });
      await turn.record(message?.id);
    } catch (error) {
      await turn.release();
      throw error;
    }
    const plan: WorkflowPlan = { workflow, input, scope, start, turn, message };
    return { stream: (write, signal) => this.streamer.stream(plan, write, signal) };
  }

  /** A new run: its input and initial state, checked against the workflow's schemas. */
  private async start(workflow: AnyWorkflow, input: RunAgentInput): Promise<Start> {
    const data = workflowInput(input, jsonSchemaOf(workflow.inputSchema));
    const inputData = refuseInvalid(await check(workflow.inputSchema, data), 'input', `Input for workflow ${workflow.id} does not fit its input schema`);
    const state: unknown = input.state;
    const given = state && typeof state === 'object' && Object.keys(state).length > 0 ? state : undefined;
    const initialState = workflow.stateSchema
      ? refuseInvalid(await check(workflow.stateSchema, given ?? {}), 'state', `State for workflow ${workflow.id} does not fit its state schema`)
      : undefined;
    return { kind: 'start', mastraRunId: randomUUID(), inputData, initialState };
  }

  /**
   * A resume: the interrupt must name a step of this workflow that waits on this very thread (its
   * latest run: `404 RUN_NOT_FOUND` otherwise, and for a thread of another resource), and its
   * payload must fit the step's resume schema (`400`, the workflow still suspended). `prepare`
   * then takes it, once, in any process: a second resume of it is refused as not waiting.
   */
  private async resume(workflow: AnyWorkflow, input: RunAgentInput, scope: ThreadScope): Promise<Start> {
    const entries = input.resume ?? [];
    if (entries.length > 1)
      throw invalidInput('A workflow run resumes one interrupt at a time', [{ path: 'resume', message: `${entries.length} entries, at most 1` }]);
    const [entry] = entries;
    const parsed = parseWorkflowInterruptId(entry.interruptId);
    if (!parsed) throw interruptNotWaiting(entry.interruptId);
    const latest = await this.threads.latestWorkflowRun(scope, workflow.id);
    const stored = latest?.runId === parsed.mastraRunId ? latest.stored : undefined;
    const waiting = stored?.status === 'suspended' && stored.suspended.some((s) => s.path.join('.') === parsed.stepPath.join('.'));
    if (!waiting || (await this.control.taken(entry.interruptId))) throw interruptNotWaiting(entry.interruptId);
    const { mastraRunId, stepPath } = parsed;
    if (entry.status === 'cancelled') return { kind: 'cancel', mastraRunId, interruptId: entry.interruptId };
    const step = findStep(workflow, stepPath);
    const resumeData = refuseInvalid(
      await check(step?.resumeSchema, entry.payload ?? {}),
      'resume.0.payload',
      `The answer to interrupt ${entry.interruptId} does not fit the step's resume schema`,
    );
    return { kind: 'resume', mastraRunId, interruptId: entry.interruptId, stepPath, resumeData };
  }

  /**
   * The last user message, when it is new to the thread: what the run answers, stored before it
   * starts. Its id must be new or this thread's own (`409` for another thread's, as on any run).
   */
  private async newUserMessage(input: RunAgentInput, scope: ThreadScope): Promise<{ id: string; text: string } | undefined> {
    const last = input.messages.findLast((m: Message) => m.role === 'user');
    const text = last && lastUserText([last]);
    if (!last || text === undefined) return undefined;
    const stored = await this.threads.checkIds(scope, [last.id]);
    return stored.has(last.id) ? undefined : { id: last.id, text };
  }
}

/** A schema's verdict: the parsed value, or `400 INVALID_INPUT` naming each field, under `root`. */
function refuseInvalid(checked: Checked, root: string, message: string): unknown {
  if (checked.ok) return checked.value;
  const details: ErrorDetail[] = checked.issues.map((issue) => ({ path: issue.path ? `${root}.${issue.path}` : root, message: issue.message }));
  throw invalidInput(`${message}: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}`, details);
}
