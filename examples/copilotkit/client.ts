// The frontend side without React: `CopilotKitCore` is what CopilotKit's React provider builds from
// `runtimeUrl` (here with the single-endpoint transport), and its agent is what `useAgent` hands a
// component: a proxy that runs the runtime's agent over HTTP. test/copilotkit.test.ts drives runs
// through it.
//
//   npx tsx examples/copilotkit/client.ts "what is the weather in Rome"   (RUNTIME_URL defaults to the server.ts address)
//   npx tsx examples/copilotkit/client.ts "delete notes.txt" --approve    (or --decline: answers the approval)
//   AGENT_ID=draft-and-send npx tsx examples/copilotkit/client.ts "tea" --approve   (the demo workflow, suspended for review)
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

/**
 * Sends a message whose run stops for approval (`delete notes.txt` asks to approve `delete_file`),
 * then answers every interrupt of that run with `approved`, as an approval card's buttons would: the
 * interrupts are the frontend agent's `pendingInterrupts`, and the answer is the next run's `resume`.
 * Answers the interrupts that were asked and the agent's messages after the resumed run. With
 * `agentId: 'draft-and-send'` (the bridge's demo workflow) the interrupt is the workflow's review step.
 */
export async function sendAndAnswer(runtimeUrl: string, text: string, approved: boolean, { agentId = 'demo' }: { agentId?: string } = {}) {
  const { core, agent } = createCopilotKit(runtimeUrl, { agentId });
  agent.addMessage({ id: randomUUID(), role: 'user', content: text });
  await core.runAgent({ agent });
  const interrupts = [...agent.pendingInterrupts];
  if (interrupts.length > 0) {
    const resume = interrupts.map((interrupt) => ({ interruptId: interrupt.id, status: 'resolved' as const, payload: { approved } }));
    await core.runAgent({ agent, resume });
  }
  return { interrupts, messages: agent.messages, threadId: agent.threadId };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const runtimeUrl = process.env.RUNTIME_URL ?? `http://127.0.0.1:${process.env.PORT ?? 4000}/api/copilotkit`;
  const [text = 'hello', answer] = process.argv.slice(2);
  const agentId = process.env.AGENT_ID ?? 'demo';
  const result =
    answer === '--approve' || answer === '--decline'
      ? await sendAndAnswer(runtimeUrl, text, answer === '--approve', { agentId })
      : await send(runtimeUrl, text);
  console.log(JSON.stringify(result, null, 2));
}
