import { Agent } from '@mastra/core/agent';
import { createDemoWorkflow, DEMO_WORKFLOW_ID } from './workflow.js';
import type { MastraStorage } from '@mastra/core/storage';
import { Memory } from '@mastra/memory';
import { z } from 'zod';
import { createScriptedModel, type ScriptedModelOptions } from './scripted-model.js';
import { createSlowTask, deleteFile, getWeather } from './tools.js';

/** The demo agent's working memory, its AG-UI state: the facts it was asked to remember (`remember <fact>`). */
export const DEMO_STATE = z.object({ facts: z.array(z.string()) });

export interface DemoAgentOptions {
  /** Storage for the agent's memory. */
  storage: MastraStorage;
  /** Milliseconds between streamed parts of the scripted model (default 20; 0 = no timers). */
  delayMs?: number;
  /** How long `slow_task` takes (default 2000 ms). */
  slowTaskMs?: number;
  /** A Mastra model id (e.g. `openai/gpt-5-mini`) to use instead of the scripted model. */
  model?: string;
  /** Told of every call of the scripted model (see `ScriptedModelOptions.onCall`). */
  onModelCall?: ScriptedModelOptions['onCall'];
}

/**
 * The demo agent: id `demo`, with memory (and thread-scoped working memory, `{ facts: string[] }`),
 * three server tools, a `researcher` sub-agent and a scripted model.
 *
 * @example
 * const demo = createDemoAgent({ storage: new InMemoryStore(), delayMs: 0 });
 * const mastra = new Mastra({ agents: { demo }, storage });
 */
export function createDemoAgent(options: DemoAgentOptions): Agent {
  return new Agent({
    id: 'demo',
    name: 'Demo Agent',
    description: 'A scripted agent that echoes, reasons, calls tools and asks for approval, with no API key.',
    instructions: 'You are a helpful assistant. Use the tools when they fit the request.',
    model: options.model ?? createScriptedModel({ delayMs: options.delayMs, onCall: options.onModelCall }),
    memory: new Memory({ storage: options.storage, options: { lastMessages: 40, workingMemory: { enabled: true, scope: 'thread', schema: DEMO_STATE } } }),
    tools: { get_weather: getWeather, delete_file: deleteFile, slow_task: createSlowTask(options.slowTaskMs ?? 2000) },
    agents: { researcher: createResearcher(options) },
    // `draft <topic>`: the workflow runs as a tool, and suspends the agent's run for its review.
    workflows: { [DEMO_WORKFLOW_ID]: createDemoWorkflow({ delayMs: options.delayMs }) },
  });
}

/** The demo agent's sub-agent: it answers `Findings on <topic>: …` (`research <topic>` delegates to it). */
function createResearcher(options: DemoAgentOptions): Agent {
  return new Agent({
    id: 'researcher',
    name: 'Researcher',
    description: 'Looks a topic up and reports its findings.',
    instructions: 'Research the topic you are given and report your findings.',
    model: options.model ?? createScriptedModel({ delayMs: options.delayMs, persona: 'researcher' }),
    tools: { get_weather: getWeather, delete_file: deleteFile },
  });
}
