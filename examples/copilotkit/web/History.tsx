import { useEffect } from 'react';
import { useAgent } from '@copilotkit/react-core/v2';

/** The runtime's read of a thread's history (server.ts's THREADS_PATH: the bridge's messages and state). */
const THREADS_URL = import.meta.env.VITE_THREADS_URL ?? '/api/threads/';

/**
 * Shows a thread as the bridge stores it when the app opens on it (a reload, a shared link): its
 * messages and the agent's state, once, into the agent CopilotKit's chat shows. A conversation
 * already under way in this tab keeps its own.
 */
export function History({ agentId, threadId }: { agentId: string; threadId: string }) {
  const { agent, isReady } = useAgent({ agentId });
  useEffect(() => {
    if (!isReady) return;
    let live = true;
    fetch(`${THREADS_URL}${encodeURIComponent(threadId)}?agent=${encodeURIComponent(agentId)}`)
      .then((response) => (response.ok ? (response.json() as Promise<{ messages: typeof agent.messages; state: unknown }>) : undefined))
      .then((history) => {
        if (!live || !history || history.messages.length === 0 || agent.messages.length > 0) return;
        agent.setMessages(history.messages);
        agent.setState(history.state as typeof agent.state);
      })
      .catch(() => {
        // The bridge did not answer: the chat starts empty, and the thread is still the same.
      });
    return () => {
      live = false;
    };
  }, [agent, isReady, agentId, threadId]);
  return null;
}
