import type { AgentCapabilities } from '@ag-ui/core';
import type { Agent } from '@mastra/core/agent';
import { descriptionOf } from '../mastra/index.js';

/** What the bridge does for every agent, whatever it is: the part of the answer that never varies. */
const ALWAYS = {
  // `/run` and the thread stream are SSE, or protobuf when `Accept` names it; the thread stream
  // resumes after any id it handed out (`Last-Event-ID`), on any process.
  transport: { streaming: true, httpBinary: true, resumable: true },
  // Tools a client passes in `RunAgentInput.tools` run in the browser (`TOOL_CALL_*`, then a result back).
  tools: { supported: true, clientProvided: true },
  // Reasoning chunks stream as `REASONING_*`, when the model reasons.
  reasoning: { supported: true, streaming: true },
  // A tool that needs approval ends the run with an interrupt outcome, answered in `resume`.
  humanInTheLoop: { supported: true, approvals: true, interrupts: true },
} as const satisfies AgentCapabilities;

/** What varies from agent to agent, as `AgentProvider` finds it. */
export interface AgentFacts {
  /** The scope of the agent's working memory, when it keeps one (its state). */
  workingMemory?: 'thread' | 'resource';
  /** Its sub-agents (`agents: { … }`): the name it delegates to them by, and what each is for. */
  subagents?: Array<{ name: string; description?: string }>;
}

/**
 * AG-UI's `AgentCapabilities` for a Mastra agent behind the bridge: only what the bridge does for
 * it. State only for an agent with working memory (snapshots and deltas, kept across runs; a
 * resource-scoped one is shared by the resource's threads, which AG-UI calls memory); multi-agent
 * only for an agent with sub-agents, which it delegates to (`SUBAGENT_*`).
 *
 * @example
 * capabilitiesOf(mastra.getAgent('demo'), { workingMemory: 'thread' });
 * // { identity: { name: 'Demo Agent', type: 'mastra', … }, transport: { streaming: true, httpBinary: true, resumable: true }, state: { … }, … }
 */
export function capabilitiesOf(agent: Agent, facts: AgentFacts = {}): AgentCapabilities {
  const description = descriptionOf(agent);
  return {
    identity: { name: agent.name, type: 'mastra', ...(description && { description }) },
    ...ALWAYS,
    ...(facts.workingMemory && { state: { snapshots: true, deltas: true, persistentState: true, memory: facts.workingMemory === 'resource' } }),
    ...(facts.subagents?.length && { multiAgent: { supported: true, delegation: true, subagents: facts.subagents } }),
  };
}

/** What varies from workflow to workflow. */
export interface WorkflowFacts {
  name: string;
  description?: string;
  /** A step can suspend for a person (it declares a resume schema). */
  canSuspend: boolean;
  /** The workflow keeps state (`stateSchema`): snapshots and deltas while it runs. */
  hasState: boolean;
}

/**
 * AG-UI's `AgentCapabilities` for a Mastra workflow behind the bridge: its runs stream over the
 * same transport as an agent's; interrupts when a step can suspend; state when it declares a
 * state schema. No tools, reasoning or sub-agents: a workflow's steps are its own.
 *
 * @example
 * workflowCapabilities({ name: 'draft-and-send', canSuspend: true, hasState: true });
 * // { identity: { name: 'draft-and-send', type: 'mastra-workflow' }, transport: { … }, humanInTheLoop: { supported: true, interrupts: true }, state: { … } }
 */
export function workflowCapabilities(facts: WorkflowFacts): AgentCapabilities {
  return {
    identity: { name: facts.name, type: 'mastra-workflow', ...(facts.description && { description: facts.description }) },
    transport: ALWAYS.transport,
    ...(facts.canSuspend && { humanInTheLoop: { supported: true, interrupts: true } }),
    ...(facts.hasState && { state: { snapshots: true, deltas: true, persistentState: true } }),
  };
}
