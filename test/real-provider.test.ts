import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventType, HttpAgent, type ResumeEntry } from '@ag-ui/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assistantText, ofType, runInput, runStrict, uid, userMessage } from './support/agui.js';
import { startFakeOpenAI, type FakeOpenAI, type ModelReply, type ModelRequest } from './support/openai-compatible.js';
import { runAgentStrict } from './support/run.js';
import { http } from './support/server.js';
import { killIfRunning, startServerProcess, type ServerProcess } from './support/process.js';
import { jsonText } from '../src/text.js';

// A real provider: the standalone server with `MODEL=openai/<model>` and `OPENAI_BASE_URL`
// pointing at an OpenAI-compatible server written for this test (support/openai-compatible.ts).
// Mastra's own OpenAI provider streams from it over HTTP; nothing of Mastra's model path is
// replaced. What the model "decides" is the script below, keyed on the user's words.

const API_KEY = 'sk-test-provider-key';

/** The model's side: a text, a tool call (then a text once its result came back), or an error. */
function script({ lastUserText, toolOutputs }: ModelRequest): ModelReply {
  const [output] = toolOutputs.values();
  if (lastUserText === 'weather in Oslo')
    return output === undefined ? { call: { name: 'get_weather', args: { city: 'Oslo' } } } : { text: `The tool says: ${jsonText(output)}` };
  if (lastUserText === 'delete notes.txt')
    return output === undefined ? { call: { name: 'delete_file', args: { path: 'notes.txt' } } } : { text: `Done: ${jsonText(output)}` };
  if (lastUserText === 'fail please')
    return {
      status: 400,
      error: { message: 'The model `local-model` does not support this request.', type: 'invalid_request_error', code: 'unsupported_request' },
    };
  return { text: `You said: ${lastUserText}. Anything else?` };
}

let model: FakeOpenAI;
let server: ServerProcess;
let dir: string;

beforeAll(async () => {
  model = await startFakeOpenAI(script);
  dir = mkdtempSync(join(tmpdir(), 'bridge-provider-'));
  server = await startServerProcess({
    MODEL: 'openai/local-model',
    OPENAI_API_KEY: API_KEY,
    OPENAI_BASE_URL: model.baseUrl,
    DATABASE_URL: `file:${join(dir, 'bridge.db')}`,
  });
}, 60_000);

afterAll(async () => {
  killIfRunning(server);
  await model?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const newAgent = () => new HttpAgent({ url: `${server.url}/run`, threadId: uid('thread') });

describe('MODEL=openai/… against an OpenAI-compatible server (OPENAI_BASE_URL)', () => {
  it('streams the provider’s text as one assistant message, with the key and model sent', async () => {
    const before = model.requests.length;
    const run = await runStrict(`${server.url}/run`, runInput({ messages: [userMessage('hello there')] }));
    expect(run.terminal.type).toBe(EventType.RUN_FINISHED);
    expect(assistantText(run.events)).toBe('You said: hello there. Anything else?');
    // Streamed in pieces, as the provider sent them.
    expect(ofType(run.events, EventType.TEXT_MESSAGE_CONTENT).length).toBeGreaterThan(1);
    const [request] = model.requests.slice(before);
    expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request.body).toMatchObject({ model: 'local-model', stream: true });
    expect(request.body.tools?.map((t) => t.name)).toEqual(expect.arrayContaining(['get_weather', 'delete_file']));
  });

  it('a tool call: its arguments streamed, the tool run by Mastra, its result sent back, the answer after it', async () => {
    const before = model.requests.length;
    const agent = newAgent();
    agent.addMessage(userMessage('weather in Oslo'));
    const run = await runAgentStrict(agent, { runId: uid('run') });
    const [start] = ofType(run.events, EventType.TOOL_CALL_START);
    expect(start).toMatchObject({ toolCallName: 'get_weather' });
    const args = ofType(run.events, EventType.TOOL_CALL_ARGS).filter((e) => e.toolCallId === start.toolCallId);
    expect(args.length).toBeGreaterThan(1);
    expect(JSON.parse(args.map((e) => e.delta).join(''))).toEqual({ city: 'Oslo' });
    const [result] = ofType(run.events, EventType.TOOL_CALL_RESULT);
    expect(result.toolCallId).toBe(start.toolCallId);
    const weather = JSON.parse(result.content) as { city: string; conditions: string };
    expect(weather.city).toBe('Oslo');
    // The model's second request carried the result; its answer is the run's last text.
    const second = model.requests.slice(before)[1];
    expect(JSON.parse(String([...second.toolOutputs.values()][0]))).toEqual(weather);
    expect(assistantText(run.events)).toBe(`The tool says: ${result.content}`);
    expect(run.terminal.type).toBe(EventType.RUN_FINISHED);
    // Stored as streamed: the thread's history equals what the client's reducer holds.
    const history = await http(`${server.url}/threads/${agent.threadId}/messages?resourceId=default&format=agui`);
    expect(history.body).toEqual(JSON.parse(JSON.stringify(agent.messages)));
  });

  it('an approval: the run ends with the interrupt; the resume approves, the tool runs, the model answers', async () => {
    const agent = newAgent();
    agent.addMessage(userMessage('delete notes.txt'));
    const first = await runAgentStrict(agent, { runId: uid('run') });
    expect(first.terminal.outcome?.type).toBe('interrupt');
    const [start] = ofType(first.events, EventType.TOOL_CALL_START);
    expect(start).toMatchObject({ toolCallName: 'delete_file' });
    expect(ofType(first.events, EventType.TOOL_CALL_RESULT)).toEqual([]);
    const [interrupt] = agent.pendingInterrupts;
    expect(interrupt).toMatchObject({ toolCallId: start.toolCallId });

    const resume: ResumeEntry[] = [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }];
    const second = await runAgentStrict(agent, { runId: uid('run'), resume });
    const [result] = ofType(second.events, EventType.TOOL_CALL_RESULT);
    expect(result).toMatchObject({ toolCallId: start.toolCallId });
    expect(JSON.parse(result.content)).toEqual({ deleted: 'notes.txt' });
    expect(assistantText(second.events)).toBe(`Done: ${result.content}`);
    expect(second.terminal.type).toBe(EventType.RUN_FINISHED);
    expect(agent.pendingInterrupts).toEqual([]);
  });

  it('a provider error is RUN_ERROR { code: "MODEL_ERROR" } with the provider’s message, and the server goes on', async () => {
    const run = await runStrict(`${server.url}/run`, runInput({ messages: [userMessage('fail please')] }));
    expect(run.terminal).toMatchObject({ type: EventType.RUN_ERROR, code: 'MODEL_ERROR' });
    expect(run.terminal.message).toContain('does not support this request');
    const next = await runStrict(`${server.url}/run`, runInput({ messages: [userMessage('still there?')] }));
    expect(assistantText(next.events)).toBe('You said: still there?. Anything else?');
  });
});
