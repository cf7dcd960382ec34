// A CopilotKit (v2) app in front of the bridge: CopilotKit's chat, the agent's shared state beside
// it, a card for a delegation to a sub-agent, and approvals answered through CopilotKit's interrupt
// UI. The runtime (../server.ts) serves this page and the runtime endpoint from one origin;
// `npm run dev` serves it from Vite with the endpoint proxied to the runtime.
import { useEffect, useState } from 'react';
import { CopilotChat, CopilotKitProvider, useAgent, useInterrupt, UseAgentUpdate } from '@copilotkit/react-core/v2';
import { AgentPicker, useAgents, type AgentInfo } from './AgentPicker';
import { Approval } from './Approval';
import { History } from './History';
import { delegationCard } from './Delegation';

/** The runtime's single-route endpoint (server.ts's COPILOTKIT_PATH), on this page's origin. */
const RUNTIME_URL = import.meta.env.VITE_RUNTIME_URL ?? '/api/copilotkit';
const opened = new URLSearchParams(location.search);
/** What the app talks to first: the agent or workflow the URL names (`?agent=`), else the bridge's demo agent. */
const FIRST_AGENT = opened.get('agent') ?? 'demo';
/** The thread the URL names (`?thread=`: a reload goes on with it); without one, CopilotKit's new thread. */
const OPENED_THREAD = opened.get('thread') ?? undefined;

/** Keeps a choice in the page's URL (`?agent=`, `?thread=`; none: left out), so that a reload or a shared link opens the same. */
function keepInUrl(name: string, value: string | undefined): void {
  const url = new URL(location.href);
  if (value === undefined) url.searchParams.delete(name);
  else url.searchParams.set(name, value);
  history.replaceState(null, '', url);
}

/** The input's hint for what is picked: the demo agent's prompts, a workflow's input, or any other agent's name. */
function labelsFor({ id, name = id, kind }: AgentInfo) {
  if (kind === 'workflow') return { chatInputPlaceholder: `Input for ${name}: its text, or a JSON object` };
  return { chatInputPlaceholder: id === 'demo' ? 'Try “remember tea”, “research bees” or “delete notes.txt”' : `Message ${name}` };
}
/** CopilotKit 1.74's icon-only input buttons have no accessible name (axe: button-name): give them one. */
const INPUT = { sendButton: { 'aria-label': 'Send' }, addMenuButton: { 'aria-label': 'Add attachments or tools' } };
const TOOL_RENDERERS = [delegationCard];

export function App() {
  const [agentId, setAgentId] = useState(FIRST_AGENT);
  const [threadId, setThreadId] = useState(OPENED_THREAD);
  const { agents, error } = useAgents(FIRST_AGENT);
  const picked = agents.find((a) => a.id === agentId) ?? { id: agentId };
  // Another agent or workflow is another conversation: a new thread of its own.
  const pick = (id: string) => {
    keepInUrl('agent', id);
    keepInUrl('thread', undefined);
    setAgentId(id);
    setThreadId(undefined);
  };
  return (
    <CopilotKitProvider runtimeUrl={RUNTIME_URL} useSingleEndpoint agentId={agentId} renderToolCalls={TOOL_RENDERERS}>
      <div className="layout">
        <main className="chat">
          <header className="top">
            <h1>Mastra agent over AG-UI</h1>
            <AgentPicker agents={agents} error={error} value={agentId} onChange={pick} />
          </header>
          <Chat key={`${agentId}:${threadId ?? 'new'}`} picked={picked} threadId={threadId} />
          {threadId ? <History agentId={agentId} threadId={threadId} /> : <ThreadInUrl agentId={agentId} />}
        </main>
        <SharedState picked={picked} />
      </div>
      <Approvals agentId={agentId} />
    </CopilotKitProvider>
  );
}

/**
 * CopilotKit's chat, once the runtime has said which agents it serves. Until then CopilotKit runs a
 * message on a stand-in agent that the rest of the page (the state beside the chat, the approval
 * cards) never sees, so nothing is offered to type into before the runtime answers.
 */
function Chat({ picked, threadId }: { picked: AgentInfo; threadId?: string }) {
  const { isReady } = useAgent({ agentId: picked.id, updates: [] });
  if (!isReady) return <p role="status">Connecting to the runtime…</p>;
  return <CopilotChat agentId={picked.id} threadId={threadId} labels={labelsFor(picked)} input={INPUT} />;
}

/**
 * A new conversation's thread (CopilotKit's) into the URL once its first run starts, so that a
 * reload opens it again (and shows it from the bridge's history).
 */
function ThreadInUrl({ agentId }: { agentId: string }) {
  const { agent } = useAgent({ agentId, updates: [UseAgentUpdate.OnRunStatusChanged] });
  useEffect(() => {
    if (agent.isRunning && agent.threadId) keepInUrl('thread', agent.threadId);
  }, [agent, agent.isRunning]);
  return null;
}

/**
 * The run's shared state, which the bridge streams as AG-UI state: an agent's working memory
 * (`remember …` adds a fact), or a workflow's state, value by value.
 */
function SharedState({ picked }: { picked: AgentInfo }) {
  const { agent } = useAgent({ agentId: picked.id, updates: [UseAgentUpdate.OnStateChanged] });
  const workflow = picked.kind === 'workflow';
  return (
    <aside className="state" aria-labelledby="state-title">
      <h2 id="state-title">{workflow ? 'The workflow’s state' : 'What the agent remembers'}</h2>
      {workflow ? <WorkflowState state={agent.state} /> : <Facts facts={factsOf(agent.state)} />}
    </aside>
  );
}

function Facts({ facts }: { facts: string[] }) {
  if (facts.length === 0) return <p>Nothing yet: say “remember …”.</p>;
  return (
    <ul id="facts">
      {facts.map((fact) => (
        <li key={fact}>{fact}</li>
      ))}
    </ul>
  );
}

/** The demo agent's state is `{ facts: string[] }`; anything else shows as nothing remembered. */
function factsOf(state: unknown): string[] {
  const facts = (state as { facts?: unknown } | undefined)?.facts;
  return Array.isArray(facts) ? facts.filter((fact): fact is string => typeof fact === 'string') : [];
}

/** A workflow's state (its `stateSchema`), each top-level value as JSON. */
function WorkflowState({ state }: { state: unknown }) {
  const entries = state && typeof state === 'object' ? Object.entries(state) : [];
  if (entries.length === 0) return <p>Nothing yet: it shows here once a run starts.</p>;
  return (
    <dl id="workflow-state">
      {entries.map(([key, value]) => (
        <div key={key}>
          <dt>{key}</dt>
          <dd>{JSON.stringify(value)}</dd>
        </div>
      ))}
    </dl>
  );
}

/**
 * A run that stops for a person ends with an AG-UI interrupt (`RUN_FINISHED`, outcome `interrupt`);
 * CopilotKit shows the card in the chat, and `resolve` resumes the run with the answer.
 */
function Approvals({ agentId }: { agentId: string }) {
  useInterrupt({ agentId, render: ({ interrupt, resolve }) => <Approval interrupt={interrupt} onAnswer={(answer) => void resolve(answer)} /> });
  return null;
}
