/**
 * The workflow phase's workflow: `steps` sequential steps, each adding one to `n`. No timers, no
 * model: what a run costs is the workflow engine and the layer that streams it.
 */
import { createStep, createWorkflow } from '@mastra/core/workflows';
import { z } from 'zod';

/** Its id on every benchmarked server. */
export const BENCH_WORKFLOW_ID = 'bench-steps';

const Count = z.object({ n: z.number() });

export function createStepsWorkflow(steps = 50) {
  let workflow = createWorkflow({ id: BENCH_WORKFLOW_ID, description: `${steps} steps, each adding one`, inputSchema: Count, outputSchema: Count });
  for (let i = 0; i < steps; i++) {
    workflow = workflow.then(
      createStep({ id: `step-${i}`, inputSchema: Count, outputSchema: Count, execute: async ({ inputData }) => ({ n: inputData.n + 1 }) }),
    );
  }
  return workflow.commit();
}
