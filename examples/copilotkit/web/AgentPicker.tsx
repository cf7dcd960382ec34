import { useEffect, useState } from 'react';

/** The runtime's list of the bridge's agents and workflows (server.ts's AGENTS_PATH, the bridge's `GET /agents`). */
const AGENTS_URL = import.meta.env.VITE_AGENTS_URL ?? '/api/agents';

/** One entry of the bridge's `GET /agents`: an agent or a workflow. */
export interface AgentInfo {
  id: string;
  name?: string;
  kind?: 'agent' | 'workflow';
  description?: string;
}

/** Every agent and workflow the bridge serves, read once when the app opens; until then (or if it fails), the one picked. */
export function useAgents(picked: string): { agents: AgentInfo[]; error?: string } {
  const [agents, setAgents] = useState<AgentInfo[]>([{ id: picked }]);
  const [error, setError] = useState<string>();
  useEffect(() => {
    let live = true;
    fetch(AGENTS_URL)
      .then(async (response) => {
        if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
        const listed = (await response.json()) as AgentInfo[];
        if (live) setAgents(listed.some((a) => a.id === picked) ? listed : [{ id: picked }, ...listed]);
      })
      .catch((reason: unknown) => live && setError(`Could not list the agents: ${(reason as Error).message}`));
    return () => {
      live = false;
    };
    // Read once, when the app opens: the list does not follow the pick.
  }, []);
  return { agents, error };
}

/** What to talk to: a select of `agents` (workflows marked), and why the list is missing if it is. */
export function AgentPicker({ agents, error, value, onChange }: { agents: AgentInfo[]; error?: string; value: string; onChange: (agentId: string) => void }) {
  return (
    <div className="picker">
      <label htmlFor="agent">Talk to</label>
      <select id="agent" value={value} onChange={(event) => onChange(event.target.value)}>
        {agents.map((agent) => (
          <option key={agent.id} value={agent.id}>
            {agent.kind === 'workflow' ? `${agent.name ?? agent.id} (workflow)` : (agent.name ?? agent.id)}
          </option>
        ))}
      </select>
      {error && <p role="alert">{error}</p>}
    </div>
  );
}
