// The frontend side without React: `CopilotKitCore` is what CopilotKit's React provider builds from
// `runtimeUrl` (here with the single-endpoint transport), and its agent is what `useAgent` hands a
// component: a proxy that runs the runtime's agent over HTTP. test/copilotkit.test.ts drives runs
// through it.
//
//   npx tsx examples/copilotkit/client.ts "what is the weather in Rome"   (RUNTIME_URL defaults to the server.ts address)
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { CopilotKitCore } from '@copilotkit/core';

/**
 * The frontend core for a runtime, and the proxy through which it runs the runtime's agent `agentId`.
 * `headers` go with every request; the runtime forwards `Authorization` and `x-*` ones to the bridge.
 */
export function createCopilotKit(runtimeUrl: string, { agentId = 'demo', headers }: { agentId?: string; headers?: Record<string, string> } = {}) {
  const core = new CopilotKitCore({ runtimeUrl, runtimeTransport: 'single', headers });
  // In a browser the core asks the runtime for its agents (`info`) and registers them; without a
  // `window` it skips that, so register the runtime's agent here. The proxy asks `info` on first use.
  const { agent } = core.registerProxiedAgent({ agentId, runtimeAgentId: agentId });
  return { core, agent };
}

/**
 * Sends one user message the way the chat UI does: add it to the agent, then run through the core.
 * Answers the agent's messages and its shared state (the bridge agent's working memory, which
 * `useCoAgent` / `agent.state` read in React): `remember tea` gives `{ facts: ['tea'] }`.
 */
export async function send(runtimeUrl: string, text: string) {
  const { core, agent } = createCopilotKit(runtimeUrl);
  agent.addMessage({ id: randomUUID(), role: 'user', content: text });
  await core.runAgent({ agent });
  return { messages: agent.messages, state: agent.state };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const answer = await send(process.env.RUNTIME_URL ?? 'http://127.0.0.1:4000/api/copilotkit', process.argv[2] ?? 'hello');
  console.log(JSON.stringify(answer, null, 2));
}
