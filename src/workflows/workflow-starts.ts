import type { Message, RunAgentInput } from '@ag-ui/core';
import { inject, injectable } from 'inversify';
import { randomUUID } from 'node:crypto';
import { check, findStep, jsonSchemaOf, type AnyWorkflow, type Checked } from '../mastra/index.js';
import { interruptNotWaiting, invalidInput, type ErrorDetail } from '../errors.js';
import type { ThreadControl } from '../threads/thread-control.js';
import { type ThreadScope, ThreadStore } from '../threads/thread-store.js';
import { TOKENS } from '../tokens.js';
import { parseWorkflowInterruptId } from '../translate/ids.js';
import { lastUserText, workflowInput } from './workflow-input.js';
import type { Start } from './workflow-plan.js';

/**
 * What a workflow `/run` starts, checked before a byte is streamed: a new run's input and state
 * against the workflow's schemas, a resume against the suspended step's (a refused request stores
 * nothing), and the interrupt it answers taken once, in any process.
 *
 * @example
 * const start = input.resume?.length ? await starts.resume(workflow, input, scope) : await starts.start(workflow, input);
 */
@injectable()
export class WorkflowStarts {
  constructor(
    @inject(TOKENS.ThreadControl) private readonly control: ThreadControl,
    @inject(ThreadStore) private readonly threads: ThreadStore,
  ) {}

  /** A new run: its input and initial state, checked against the workflow's schemas. */
  async start(workflow: AnyWorkflow, input: RunAgentInput): Promise<Start> {
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
   * payload must fit the step's resume schema (`400`, the workflow still suspended). `take` then
   * takes it, once, in any process: a second resume of it is refused as not waiting.
   */
  async resume(workflow: AnyWorkflow, input: RunAgentInput, scope: ThreadScope): Promise<Start> {
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
  async newUserMessage(input: RunAgentInput, scope: ThreadScope): Promise<{ id: string; text: string } | undefined> {
    const last = input.messages.findLast((m: Message) => m.role === 'user');
    const text = last && lastUserText([last]);
    if (!last || text === undefined) return undefined;
    const stored = await this.threads.checkIds(scope, [last.id]);
    return stored.has(last.id) ? undefined : { id: last.id, text };
  }

  /** Takes the interrupt a resume or a cancel answers, once in any process; taken already, it is not waiting (`404`). */
  async take(start: Start): Promise<void> {
    if (start.kind !== 'start' && !(await this.control.once(start.interruptId, async () => true))) throw interruptNotWaiting(start.interruptId);
  }
}

/** A schema's verdict: the parsed value, or `400 INVALID_INPUT` naming each field, under `root`. */
function refuseInvalid(checked: Checked, root: string, message: string): unknown {
  if (checked.ok) return checked.value;
  const details: ErrorDetail[] = checked.issues.map((issue) => ({ path: issue.path ? `${root}.${issue.path}` : root, message: issue.message }));
  throw invalidInput(`${message}: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}`, details);
}
