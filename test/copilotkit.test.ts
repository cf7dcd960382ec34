import { EventType, type AbstractAgent, type BaseEvent } from '@ag-ui/client';
import type { Context } from 'hono';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoWorkflow, DEMO_WORKFLOW_ID } from '../src/demo/workflow.js';
import { assistantText, runInput, runStrict, uid, userMessage } from './support/agui.js';
import { installExample, type CopilotKitServerModule } from './support/examples.js';
import { http, useTestBridge } from './support/server.js';

// examples/copilotkit (docs/client.md's CopilotKit section) run for real: the bridge, CopilotKit's
// runtime in front of it on its own socket, and CopilotKit's frontend core driving runs through
// the runtime's single-route endpoint over HTTP.
//
// The example's modules are imported by a computed path so that the root `tsc` does not follow
// them into examples/copilotkit/node_modules, which is absent until the first run installs it
// (`tsc -p examples/copilotkit` checks them). These are the parts used here; `AbstractAgent` is
// typed with the root's @ag-ui/client, close enough to the 0.0.59 one CopilotKit uses.
interface CopilotKitError {
  error: Error;
  code: string;
  context: Record<string, unknown>;
}
interface CopilotKitCore {
  runAgent(params: { agent: AbstractAgent }): Promise<unknown>;
  connectAgent(params: { agent: AbstractAgent }): Promise<unknown>;
  subscribe(subscriber: { onError?: (event: CopilotKitError) => void }): { unsubscribe(): void };
}
interface ClientModule {
  createCopilotKit(runtimeUrl: string, options?: { headers?: Record<string, string> }): { core: CopilotKitCore; agent: AbstractAgent };
  sendAndAnswer(
    runtimeUrl: string,
    text: string,
    approved: boolean,
    options?: { agentId?: string },
  ): Promise<{ interrupts: Array<{ id: string; reason: string; metadata?: Record<string, unknown> }>; messages: AbstractAgent['messages']; threadId: string }>;
}

describe('CopilotKit runtime 1.75 in front of the bridge (examples/copilotkit)', () => {
  // The caller is whoever the bearer token names (a stand-in for real auth), else `default`.
  const resolveResourceId = (c: Context) => c.req.header('authorization')?.replace(/^Bearer /, '') ?? 'default';
  const bridge = useTestBridge({ delayMs: 0, config: { resolveResourceId }, workflows: () => ({ [DEMO_WORKFLOW_ID]: createDemoWorkflow() }) });
  let runtime: Server;
  let runtimeUrl: string;
  let client: ClientModule;

  beforeAll(async () => {
    const dir = await installExample('copilotkit');
    // CopilotKit reports usage by default; keep the test off the network.
    process.env.COPILOTKIT_TELEMETRY_DISABLED = 'true';
    const server: CopilotKitServerModule = await import(join(dir, 'server.ts'));
    client = await import(join(dir, 'client.ts'));
    runtime = await server.listen(bridge.base, 0);
    runtimeUrl = `http://127.0.0.1:${(runtime.address() as AddressInfo).port}${server.COPILOTKIT_PATH}`;
  }, 600_000); // a first run installs the example (about 30 s here; more on a cold npm cache)

  afterAll(async () => {
    runtime?.closeAllConnections();
    await new Promise((resolve) => (runtime ? runtime.close(resolve) : resolve(undefined)));
  });

  /** Connects a fresh CopilotKit frontend and sends one message, as the chat UI does; records what it saw. */
  async function send(text: string, headers?: Record<string, string>) {
    const { core, agent } = client.createCopilotKit(runtimeUrl, { headers });
    const events: BaseEvent[] = [];
    const hooks: string[] = [];
    const errors: CopilotKitError[] = [];
    agent.subscribe({
      onEvent: ({ event }) => void events.push(event),
      onRunErrorEvent: () => void hooks.push('onRunErrorEvent'),
      onRunFailed: () => void hooks.push('onRunFailed'),
    });
    core.subscribe({ onError: (error) => void errors.push(error) });
    agent.addMessage(userMessage(text));
    await core.runAgent({ agent }); // resolves when the run has ended; CopilotKit reports failures to onError
    return { core, agent, events, types: events.map((e) => e.type), hooks, errors };
  }

  it('answers a browser’s CORS preflight from a page on an allowed origin (Vite’s dev server by default), and no other', async () => {
    const preflight = (origin: string) =>
      fetch(runtimeUrl, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,authorization' },
      });
    const allowed = await preflight('http://localhost:5173');
    expect(allowed.status).toBeLessThan(300);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(allowed.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    const other = await preflight('https://elsewhere.example');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('streams an echo run from the bridge and ends it with RUN_FINISHED', async () => {
    const run = await send('hello from CopilotKit');
    expect(run.errors).toEqual([]);
    expect(run.types[0]).toBe(EventType.RUN_STARTED);
    expect(run.types).toContain(EventType.TEXT_MESSAGE_CONTENT);
    expect(run.types.at(-1)).toBe(EventType.RUN_FINISHED);
    expect(assistantText(run.events)).toBe('Echo: hello from CopilotKit');
    expect(run.agent.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Echo: hello from CopilotKit' });
  });

  it('carries a server tool call and its result', async () => {
    const run = await send('what is the weather in Rome');
    expect(run.errors).toEqual([]);
    expect(run.types.at(-1)).toBe(EventType.RUN_FINISHED);
    const start = run.events.find((e) => e.type === EventType.TOOL_CALL_START) as BaseEvent & { toolCallId: string; toolCallName: string };
    expect(start.toolCallName).toBe('get_weather');
    const result = run.events.find((e) => e.type === EventType.TOOL_CALL_RESULT) as BaseEvent & { toolCallId: string; content: string };
    expect(result.toolCallId).toBe(start.toolCallId);
    expect(JSON.parse(result.content)).toMatchObject({ city: 'Rome' });
    expect(run.agent.messages).toContainEqual(expect.objectContaining({ role: 'tool', toolCallId: start.toolCallId }));
  });

  it('delivers a failing run as RUN_ERROR, to onRunErrorEvent and not onRunFailed', async () => {
    const run = await send('please fail now');
    expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, message: 'demo model failure' });
    // A RUN_ERROR event is a run that ended in the stream, not a transport failure (`onRunFailed`):
    // listen on `onRunErrorEvent`. CopilotKit's core does, and passes it on to its `onError`.
    expect(run.hooks).toEqual(['onRunErrorEvent']);
    expect(run.errors).toHaveLength(1);
    expect(run.errors[0]).toMatchObject({ code: 'agent_run_error_event', context: { source: 'onRunErrorEvent' } });
    expect(run.errors[0].error.message).toBe('demo model failure');
  });

  it('carries the agent’s shared state (its working memory) to the frontend agent, equal to what the bridge stores', async () => {
    const { core, agent } = client.createCopilotKit(runtimeUrl);
    for (const fact of ['tea, no sugar', 'the window seat']) {
      agent.addMessage(userMessage(`remember ${fact}`));
      await core.runAgent({ agent });
    }
    expect(agent.state).toEqual({ facts: ['tea, no sugar', 'the window seat'] });
    const stored = await http(`${bridge.base}/threads/${agent.threadId}/state`);
    expect(stored.body).toEqual({ state: agent.state });
    expect(agent.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Noted: the window seat' });
  });

  it.each([
    [true, 'Deleted as requested: {"deleted":"notes.txt"}'],
    [false, 'I did not delete the file: Tool call was not approved by the user'],
  ])('an approval through CopilotKit (approved: %s): the interrupt reaches the frontend, its answer resumes the run', async (approved, answer) => {
    const { interrupts, messages } = await client.sendAndAnswer(runtimeUrl, 'delete notes.txt', approved);
    expect(interrupts).toEqual([
      expect.objectContaining({ reason: 'tool_approval', metadata: expect.objectContaining({ toolName: 'delete_file', args: { path: 'notes.txt' } }) }),
    ]);
    expect(messages.at(-1)).toMatchObject({ role: 'assistant', content: expect.stringContaining(answer) });
  });

  it.each([
    [true, 'Sent: Draft about tea.'],
    [false, 'Discarded.'],
  ])('a workflow through CopilotKit (approved: %s): its review step suspends it, the frontend’s answer resumes it', async (approved, answer) => {
    const { interrupts, messages, threadId } = await client.sendAndAnswer(runtimeUrl, 'tea', approved, { agentId: DEMO_WORKFLOW_ID });
    expect(interrupts).toEqual([
      expect.objectContaining({
        reason: 'workflow_suspended',
        responseSchema: expect.objectContaining({ required: ['approved'] }),
        metadata: expect.objectContaining({ workflowId: DEMO_WORKFLOW_ID, stepId: 'review', suspendPayload: { draft: 'Draft about tea.' } }),
      }),
    ]);
    expect(messages.at(-1)).toMatchObject({ role: 'assistant', content: answer });
    expect(
      (await http(`${bridge.base}/threads/${threadId}/messages?format=agui&agentId=${DEMO_WORKFLOW_ID}`)).body.map((m: { content: string }) => m.content),
    ).toEqual(['tea', 'Draft about tea.', answer]);
  });

  it('forwards the Authorization header from the frontend, so the bridge knows the caller', async () => {
    const run = await send('who am I', { authorization: 'Bearer alice' });
    expect(run.types.at(-1)).toBe(EventType.RUN_FINISHED);
    const thread = (caller: string) => http(`${bridge.base}/threads/${run.agent.threadId}`, { headers: { authorization: `Bearer ${caller}` } });
    expect((await thread('alice')).status).toBe(200);
    expect((await thread('bob')).status).toBe(404);
  });

  it('answers connectAgent() from the runtime memory, without asking the bridge', async () => {
    const ran = await send('keep me in mind');
    const threadOnBridgeOnly = uid('thread');
    await runStrict(`${bridge.base}/run`, runInput({ threadId: threadOnBridgeOnly, messages: [userMessage('only the bridge saw this')] }));

    // A page reload: a new frontend restores the thread with connectAgent(), which resolves (it does
    // not stay open) with what the runtime's in-memory runner kept of runs made through it.
    const restored = client.createCopilotKit(runtimeUrl);
    restored.agent.threadId = ran.agent.threadId;
    await restored.core.connectAgent({ agent: restored.agent });
    expect(restored.agent.messages.map((m) => m.content)).toEqual(['keep me in mind', 'Echo: keep me in mind']);

    // The registered HttpAgent is never asked to connect: a thread the bridge has but this
    // runtime never ran comes back empty.
    const other = client.createCopilotKit(runtimeUrl);
    other.agent.threadId = threadOnBridgeOnly;
    await other.core.connectAgent({ agent: other.agent });
    expect(other.agent.messages).toEqual([]);
  });
});
