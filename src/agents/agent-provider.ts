import type { Mastra } from '@mastra/core';
import type { Agent } from '@mastra/core/agent';
import { AgentCapabilitiesSchema } from '@ag-ui/core/schemas';
import { z } from 'zod';
import type { MastraMemory } from '@mastra/core/memory';
import { inject, injectable } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import { BridgeError, notFound } from '../errors.js';
import { TOKENS } from '../tokens.js';
import { WorkingMemoryState } from '../state/working-memory.js';
import { capabilitiesOf } from './capabilities.js';
import { activeThreadRuns, agentsOf, descriptionOf, memoryOf, modelOf, stoppedOnInterrupt, subagentsOf, workflowsOf } from '../mastra/index.js';

/** What `GET /agents` lists about an agent. */
export const AgentInfoSchema = z.object({
  id: z.string(),
  name: z.string(),
  /** An agent, or a workflow served as one (`POST /run` runs either). */
  kind: z.enum(['agent', 'workflow']),
  description: z.string().optional(),
  model: z.object({ provider: z.string(), name: z.string() }).optional(),
  /** Whether a run that names no agent runs this one. */
  default: z.boolean(),
  /** AG-UI's capabilities: what the bridge does for this agent. */
  capabilities: AgentCapabilitiesSchema,
});

export type AgentInfo = z.infer<typeof AgentInfoSchema>;

/**
 * Finds agents in the Mastra instance: by `agent.id` first, then by registration key, else the
 * configured default, else the first registered agent.
 *
 * @example
 * const agent = provider.get(input.forwardedProps?.agentId); // throws 404 AGENT_NOT_FOUND
 */
@injectable()
export class AgentProvider {
  private readonly resolved = new Map<string | undefined, { agent: Agent; memory: MastraMemory }>();

  constructor(
    @inject(TOKENS.Mastra) private readonly mastra: Mastra,
    @inject(TOKENS.Config) private readonly config: ResolvedConfig,
  ) {}

  /** Every registered agent as `[registration key, agent]`. */
  entries(): Array<[string, Agent]> {
    return agentsOf(this.mastra);
  }

  /**
   * How many runs of this process's agents are in flight on their threads now: Mastra's active
   * thread runs, less those stopped on an interrupt. Mastra keeps such a run active, but it waits
   * on a person, not on this process, and stays answerable after a restart (its snapshot is
   * stored). A run whose state cannot be read counts as in flight.
   */
  async runsInFlight(): Promise<number> {
    let count = 0;
    for (const [, agent] of this.entries()) {
      for (const { runId, ...thread } of activeThreadRuns(agent)) if (!(await stoppedOnInterrupt(agent, thread, runId))) count += 1;
    }
    return count;
  }

  /** The agent for an id (or the default when none is given); unknown ids are `404 AGENT_NOT_FOUND`. */
  get(agentId?: string): Agent {
    const wanted = agentId ?? this.config.defaultAgentId;
    const agent = this.find(wanted);
    if (agent) return agent;
    throw notFound('AGENT_NOT_FOUND', wanted === undefined ? 'No agents are registered' : `Agent ${wanted} not found`);
  }

  /** The agent with this id or registration key; with none, the first registered. */
  private find(wanted: string | undefined): Agent | undefined {
    return pick(this.entries(), wanted);
  }

  /**
   * The agent and its memory, for thread routes: the named agent must have memory; with no id, the
   * default agent if it has memory, else the first agent that does. None: `500 MEMORY_NOT_CONFIGURED`.
   * Resolved once per id while that agent stays registered (every thread request asks, and
   * resolving an agent's memory is work Mastra does afresh each time); a refusal is not kept.
   */
  async withMemory(agentId?: string): Promise<{ agent: Agent; memory: MastraMemory }> {
    const entries = agentsOf(this.mastra);
    const kept = this.resolved.get(agentId);
    if (kept && entries.some(([, agent]) => agent === kept.agent)) return kept;
    const found = await this.resolveWithMemory(entries, agentId);
    this.resolved.set(agentId, found);
    return found;
  }

  private async resolveWithMemory(entries: Array<[string, Agent]>, agentId: string | undefined): Promise<{ agent: Agent; memory: MastraMemory }> {
    const agent = pick(entries, agentId ?? this.config.defaultAgentId);
    // A workflow keeps no memory of its own: its threads live where the agents' do.
    const named = agentId !== undefined && this.isWorkflow(agentId, agent) ? undefined : agentId;
    const candidates = named !== undefined || this.config.defaultAgentId !== undefined ? [agent ?? this.get(named)] : entries.map(([, a]) => a);
    for (const candidate of candidates) {
      const memory = await memoryOf(candidate);
      if (memory) return { agent: candidate, memory };
    }
    throw new BridgeError(500, 'MEMORY_NOT_CONFIGURED', named ? `Agent ${named} has no memory configured` : 'No agent has memory configured');
  }

  /** Whether the id names a registered agent or workflow (by id or registration key). */
  knows(id: string): boolean {
    return this.find(id) !== undefined || this.isWorkflow(id);
  }

  /** Whether the id names a workflow and no agent (`agent`: the one it names, if any; ids are distinct: `assertDistinctIds`). */
  private isWorkflow(id: string, agent = this.find(id)): boolean {
    return !agent && workflowsOf(this.mastra).some(([key, workflow]) => workflow.id === id || key === id);
  }

  /** The public description of an agent. */
  async info(agent: Agent): Promise<AgentInfo> {
    const [memory, subagents] = await Promise.all([memoryOf(agent), subagentsOf(agent)]);
    const workingMemory = WorkingMemoryState.of(memory)?.scope;
    const info: AgentInfo = {
      id: agent.id,
      name: agent.name,
      kind: 'agent',
      default: this.find(this.config.defaultAgentId) === agent,
      capabilities: capabilitiesOf(agent, { workingMemory, subagents }),
    };
    const description = descriptionOf(agent);
    if (description) info.description = description;
    const model = await modelOf(agent);
    if (model) info.model = model;
    return info;
  }
}

/** The agent with this id, else with this registration key; with none wanted, the first registered. */
function pick(entries: Array<[string, Agent]>, wanted: string | undefined): Agent | undefined {
  if (wanted === undefined) return entries[0]?.[1];
  return (entries.find(([, agent]) => agent.id === wanted) ?? entries.find(([key]) => key === wanted))?.[1];
}
