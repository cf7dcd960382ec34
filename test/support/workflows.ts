import type { Agent } from '@mastra/core/agent';
import { createStep, createWorkflow } from '@mastra/core/workflows';
import { z } from 'zod';
import { createDemoWorkflow } from '../../src/demo/workflow.js';

// Workflows beside the demo's, for the tests and the fixture recordings: each shows a shape of
// run the translator must close properly.

const topic = z.object({ topic: z.string() });

/** `always-fails`: its one step throws. */
export function failingWorkflow() {
  const explode = createStep({
    id: 'explode',
    inputSchema: topic,
    outputSchema: z.object({ text: z.string() }),
    execute: async () => {
      throw new Error('the printer is on fire');
    },
  });
  return createWorkflow({ id: 'always-fails', inputSchema: topic, outputSchema: z.object({ text: z.string() }) })
    .then(explode)
    .commit();
}

/**
 * `shapes`: parallel steps, a branch (one arm taken), two `.map()` steps (one left to Mastra to
 * name, one named), then the demo workflow nested, which suspends.
 */
export function shapesWorkflow() {
  const pass = (id: string) => createStep({ id, inputSchema: topic, outputSchema: topic, execute: async ({ inputData }) => inputData });
  const reset = (id: string) => createStep({ id, inputSchema: z.unknown(), outputSchema: topic, execute: async () => ({ topic: 'tea' }) });
  return createWorkflow({ id: 'shapes', inputSchema: topic, outputSchema: z.unknown() })
    .parallel([pass('left'), pass('right')])
    .then(reset('join'))
    .branch([
      [async () => true, pass('taken')],
      [async () => false, pass('not-taken')],
    ])
    .then(reset('pick'))
    .map(async ({ inputData }) => inputData)
    .map(async ({ inputData }) => inputData, { id: 'as-topic' })
    .then(createDemoWorkflow())
    .commit();
}

/** `loops`: a `foreach` over the topic's words, a `dountil` loop, then a `sleep`. */
export function loopsWorkflow() {
  const count = z.object({ n: z.number() });
  const split = createStep({
    id: 'split',
    inputSchema: topic,
    outputSchema: z.array(z.string()),
    execute: async ({ inputData }) => inputData.topic.split(' '),
  });
  const shout = createStep({ id: 'shout', inputSchema: z.string(), outputSchema: z.string(), execute: async ({ inputData }) => inputData.toUpperCase() });
  const countWords = createStep({
    id: 'count',
    inputSchema: z.array(z.string()),
    outputSchema: count,
    execute: async ({ inputData }) => ({ n: inputData.length }),
  });
  const up = createStep({ id: 'up', inputSchema: count, outputSchema: count, execute: async ({ inputData }) => ({ n: inputData.n + 1 }) });
  return createWorkflow({ id: 'loops', inputSchema: topic, outputSchema: count })
    .then(split)
    .foreach(shout)
    .then(countWords)
    .dountil(up, async ({ inputData }) => inputData.n >= 4)
    .sleep(10)
    .commit();
}

/** `agent-step`: a step that writes the prompt, then `agent` as a step (its text streams). */
export function agentStepWorkflow(agent: Agent) {
  const prompt = createStep({
    id: 'prompt',
    inputSchema: topic,
    outputSchema: z.object({ prompt: z.string() }),
    execute: async ({ inputData }) => ({ prompt: `about ${inputData.topic}` }),
  });
  return createWorkflow({ id: 'agent-step', inputSchema: topic, outputSchema: z.object({ text: z.string() }) })
    .then(prompt)
    .then(createStep(agent))
    .commit();
}

/** `tally`: a `foreach` whose step counts each word in the state (`setState`), a `sleep`, then a step after them. */
export function tallyWorkflow() {
  const State = z.object({ words: z.number().default(0) });
  const split = createStep({
    id: 'split',
    inputSchema: topic,
    outputSchema: z.array(z.string()),
    execute: async ({ inputData }) => inputData.topic.split(' '),
  });
  const tally = createStep({
    id: 'tally',
    inputSchema: z.string(),
    outputSchema: z.string(),
    stateSchema: State,
    // eslint-disable-next-line @typescript-eslint/unbound-method -- Mastra hands `setState` as a plain function
    execute: async ({ inputData, state, setState }) => {
      await setState({ ...state, words: state.words + 1 });
      return inputData;
    },
  });
  const join = createStep({
    id: 'join',
    inputSchema: z.array(z.string()),
    outputSchema: z.object({ text: z.string() }),
    execute: async ({ inputData }) => ({ text: inputData.join(' ') }),
  });
  return createWorkflow({ id: 'tally', inputSchema: topic, outputSchema: z.object({ text: z.string() }), stateSchema: State })
    .then(split)
    .foreach(tally)
    .sleep(10)
    .then(join)
    .commit();
}

/**
 * `draft-and-send` with two reviews (`first`, then `second`), each suspending for `{ approved }`:
 * registered on an agent under the demo workflow's key, the scripted model's `draft <topic>` runs
 * it as a tool that suspends twice in one run.
 */
export function twoReviewsWorkflow() {
  const review = (id: string) =>
    createStep({
      id,
      inputSchema: topic,
      outputSchema: topic,
      suspendSchema: z.object({ ask: z.string() }),
      resumeSchema: z.object({ approved: z.boolean() }),
      execute: async ({ inputData, resumeData, suspend }) => (resumeData ? inputData : suspend({ ask: id })),
    });
  return createWorkflow({ id: 'draft-and-send', inputSchema: topic, outputSchema: z.object({ text: z.string() }) })
    .then(review('first'))
    .then(review('second'))
    .then(
      createStep({
        id: 'send',
        inputSchema: topic,
        outputSchema: z.object({ text: z.string() }),
        execute: async ({ inputData }) => ({ text: `Sent twice-reviewed ${inputData.topic}` }),
      }),
    )
    .commit();
}
