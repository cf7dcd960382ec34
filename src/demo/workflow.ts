import { createStep, createWorkflow } from '@mastra/core/workflows';
import { setTimeout as delay } from 'node:timers/promises';
import { z } from 'zod';

/** The demo workflow's id, also its registration key. */
export const DEMO_WORKFLOW_ID = 'draft-and-send';

export interface DemoWorkflowOptions {
  /** Pause in each step (ms), so that a test can cut a run mid-step; default 0. */
  delayMs?: number;
  /** Another id, to register a second copy beside the first (default `draft-and-send`). */
  id?: string;
}

const StateSchema = z.object({ drafts: z.number().default(0) });
const ReviewSchema = z.object({ approved: z.boolean(), edit: z.string().optional() });

/**
 * `draft-and-send` (docs/demo-agent.md "The demo workflow"): `draft` writes a draft about the
 * topic and counts it in the state, `review` suspends for a person (`{ approved, edit? }`), `send`
 * sends the reviewed text or discards it. No model, no network: a fixture for tests, docs and the
 * page.
 *
 * @example
 * const mastra = new Mastra({ agents: { demo }, workflows: { [DEMO_WORKFLOW_ID]: createDemoWorkflow() }, storage });
 */
export function createDemoWorkflow(options: DemoWorkflowOptions = {}) {
  const pause = (signal: AbortSignal) => (options.delayMs ? delay(options.delayMs, undefined, { signal }) : undefined);

  const draft = createStep({
    id: 'draft',
    description: 'Writes a draft about the topic',
    inputSchema: z.object({ topic: z.string() }),
    outputSchema: z.object({ draft: z.string() }),
    stateSchema: StateSchema,
    // eslint-disable-next-line @typescript-eslint/unbound-method -- Mastra hands `setState` as a plain function, destructured in its own docs
    execute: async ({ inputData, state, setState, writer, abortSignal }) => {
      await pause(abortSignal);
      const text = `Draft about ${inputData.topic}.`;
      // Streamed as the step's text, as an agent step's would be.
      await writer.write({ type: 'text-delta', payload: { text } });
      await setState({ ...state, drafts: state.drafts + 1 });
      return { draft: text };
    },
  });

  const review = createStep({
    id: 'review',
    description: 'Waits for a person to approve (or edit) the draft',
    inputSchema: z.object({ draft: z.string() }),
    outputSchema: z.object({ final: z.string().nullable() }),
    suspendSchema: z.object({ draft: z.string() }),
    resumeSchema: ReviewSchema,
    execute: async ({ inputData, resumeData, suspend, abortSignal }) => {
      await pause(abortSignal);
      if (!resumeData) return suspend({ draft: inputData.draft });
      return { final: resumeData.approved ? (resumeData.edit ?? inputData.draft) : null };
    },
  });

  const send = createStep({
    id: 'send',
    description: 'Sends the reviewed draft, or discards it',
    inputSchema: z.object({ final: z.string().nullable() }),
    outputSchema: z.object({ text: z.string() }),
    execute: async ({ inputData, writer, abortSignal }) => {
      await pause(abortSignal);
      await writer.write({ type: 'draft-sent', sent: inputData.final !== null });
      return { text: inputData.final === null ? 'Discarded.' : `Sent: ${inputData.final}` };
    },
  });

  return createWorkflow({
    id: options.id ?? DEMO_WORKFLOW_ID,
    description: 'Drafts a text about a topic, waits for a person to review it, then sends it',
    inputSchema: z.object({ topic: z.string() }),
    outputSchema: z.object({ text: z.string() }),
    stateSchema: StateSchema,
  })
    .then(draft)
    .then(review)
    .then(send)
    .commit();
}
