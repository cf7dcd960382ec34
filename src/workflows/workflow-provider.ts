import type { Mastra } from '@mastra/core';
import { inject, injectable } from 'inversify';
import type { AgentInfo } from '../agents/agent-provider.js';
import { workflowCapabilities } from '../agents/capabilities.js';
import { canSuspend, workflowsOf, type AnyWorkflow } from '../mastra/index.js';
import { notFound } from '../errors.js';
import { TOKENS } from '../tokens.js';

/**
 * Finds workflows in the Mastra instance, by `workflow.id` first, then by registration key, as
 * `AgentProvider` finds agents; `GET /agents` lists them beside the agents (`kind: "workflow"`).
 *
 * @example
 * const workflow = workflows.find(input.forwardedProps?.agentId); // undefined: not a workflow
 */
@injectable()
export class WorkflowProvider {
  constructor(@inject(TOKENS.Mastra) private readonly mastra: Mastra) {}

  /** Every registered workflow as `[registration key, workflow]`. */
  entries(): Array<[string, AnyWorkflow]> {
    return workflowsOf(this.mastra);
  }

  /** The workflow with this id or registration key, if there is one. */
  find(id: string | undefined): AnyWorkflow | undefined {
    if (id === undefined) return undefined;
    const entries = this.entries();
    return (entries.find(([, workflow]) => workflow.id === id) ?? entries.find(([key]) => key === id))?.[1];
  }

  /** The workflow for an id; unknown ids are `404 AGENT_NOT_FOUND` (a workflow is served as an agent). */
  get(id: string): AnyWorkflow {
    const workflow = this.find(id);
    if (!workflow) throw notFound('AGENT_NOT_FOUND', `Agent ${id} not found`);
    return workflow;
  }

  /** The public description of a workflow, as `GET /agents` lists it. */
  info(workflow: AnyWorkflow): AgentInfo {
    const { description } = workflow;
    const capabilities = workflowCapabilities({
      name: workflow.id,
      description,
      canSuspend: canSuspend(workflow),
      hasState: workflow.stateSchema !== undefined,
    });
    return { id: workflow.id, name: workflow.id, kind: 'workflow', default: false, ...(description && { description }), capabilities };
  }
}

/**
 * An id names one thing: a workflow registered under an agent's id (or key) could never be run.
 * Checked once, when the bridge is wired for a Mastra instance.
 *
 * @example
 * assertDistinctIds(agents.entries(), workflows.entries()); // throws: 'draft' is both agent … and workflow …
 */
export function assertDistinctIds(agents: Array<[string, { id: string }]>, workflows: Array<[string, { id: string }]>): void {
  const names = (key: string, id: string) => new Set([key, id]);
  for (const [agentKey, agent] of agents) {
    for (const [workflowKey, workflow] of workflows) {
      const shared = [...names(agentKey, agent.id)].find((name) => names(workflowKey, workflow.id).has(name));
      if (shared !== undefined) {
        throw new Error(
          `"${shared}" names both agent ${agent.id} (key ${agentKey}) and workflow ${workflow.id} (key ${workflowKey}): give one of them another id`,
        );
      }
    }
  }
}
