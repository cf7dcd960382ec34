import type { RunAgentInput } from '@ag-ui/core';
import { inject, injectable } from 'inversify';
import type { AnyWorkflow } from '../mastra/index.js';
import type { PreparedRun, RunOptions } from '../runs/prepared-run.js';
import { PendingInterrupts } from '../threads/pending-interrupts.js';
import { type ThreadScope, ThreadStore } from '../threads/thread-store.js';
import type { WorkflowPlan } from './workflow-plan.js';
import { WorkflowStarts } from './workflow-starts.js';
import { WorkflowStreamer } from './workflow-streamer.js';
import { WorkflowTurns } from './workflow-turns.js';

/**
 * Runs a Mastra workflow for `POST /run` (API.md "Workflows"): the input and state are checked
 * against the workflow's schemas, and a resume against the suspended step's, before a byte is
 * streamed (a refused request stores nothing); the run takes the thread as an agent's run does
 * (Mastra's thread lease, `multitask`), stores the user message first and what it said last,
 * and streams through `WorkflowTranslator`. The run's state events come from the state Mastra
 * stores after each step.
 *
 * @example
 * const run = await workflowRuns.prepare(workflow, input, { resourceId: 'user-1', multitask: 'enqueue', frontendToolMode: 'proxy' });
 * await run.stream((events) => out.send(events), abortSignal);
 */
@injectable()
export class WorkflowRunService {
  constructor(
    @inject(ThreadStore) private readonly threads: ThreadStore,
    @inject(PendingInterrupts) private readonly interrupts: PendingInterrupts,
    @inject(WorkflowStarts) private readonly starts: WorkflowStarts,
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
    await this.threads.assertNotForeign(scope);
    const start = input.resume?.length ? await this.starts.resume(workflow, input, scope) : await this.starts.start(workflow, input);
    const message = start.kind === 'start' ? await this.starts.newUserMessage(input, scope) : undefined;
    // Every check comes before the first write: a refused request stores nothing (API.md).
    const turn = await this.turns.take(scope, input.runId, options.multitask);
    try {
      // The interrupt is taken last, once the run has the thread: a refused run leaves it waiting.
      await this.starts.take(start);
      // New input supersedes the workflow run that waits on a person (API.md), or that a crash cut: it is cancelled.
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
}
