import type { RunAgentInput } from '@ag-ui/core';
import { findStep, jsonSchemaOf, type AnyWorkflow } from '../mastra/index.js';
import type { ThreadScope } from '../threads/thread-store.js';
import type { SuspendedStepFacts } from '../translate/workflow-translator.js';
import type { WorkflowTurn } from './workflow-turns.js';

/** What a prepared workflow run starts: a new run with its input, or a suspended one resumed. */
export type Start =
  | { kind: 'start'; mastraRunId: string; inputData: unknown; initialState?: unknown }
  | { kind: 'resume'; mastraRunId: string; interruptId: string; stepPath: string[]; resumeData: unknown }
  | { kind: 'cancel'; mastraRunId: string; interruptId: string };

/** A prepared run: what `stream` runs, on which thread, with the new user message it answers (if any). */
export interface WorkflowPlan {
  workflow: AnyWorkflow;
  input: RunAgentInput;
  scope: ThreadScope;
  start: Start;
  turn: WorkflowTurn;
  message?: { id: string; text: string };
}

/** What a workflow's suspended steps expect, by path: the step's resume schema and description. */
export function stepFactsOf(workflow: AnyWorkflow): (path: readonly string[]) => SuspendedStepFacts {
  return (path) => {
    const step = findStep(workflow, path);
    const responseSchema = jsonSchemaOf(step?.resumeSchema);
    return { ...(responseSchema && { responseSchema }), ...(step?.description && { description: step.description }) };
  };
}
