import { EventType, HttpAgent } from '@ag-ui/client';
import { describe, expect, it } from 'vitest';
import { assistantText, ofType, runInput, runStrict, uid, userMessage } from './support/agui.js';
import { postRun, runAgentStrict, sseEvents } from './support/run.js';
import { http, useTestBridge } from './support/server.js';

// POST /run over real HTTP, read by the real @ag-ui/client (strict pipeline + the checks it lacks).

const tb = useTestBridge();

const runUrl = () => `${tb.base}/run`;

describe('POST /run: text, reasoning, server tools, failures', () => {
  it('echoes the input as streamed assistant text', async () => {
    const input = runInput({ messages: [userMessage('hello bridge, how are you')] });
    const run = await runStrict(runUrl(), input);

    expect(assistantText(run.events)).toBe('Echo: hello bridge, how are you');
    expect(ofType(run.events, EventType.TEXT_MESSAGE_CONTENT).length).toBeGreaterThan(1); // streamed, not one blob
    expect(ofType(run.events, EventType.TEXT_MESSAGE_START)[0].role).toBe('assistant');
    expect(run.terminal.type).toBe(EventType.RUN_FINISHED);
  });

  it('streams reasoning before the answer', async () => {
    const input = runInput({ messages: [userMessage('think about tides')] });
    const run = await runStrict(runUrl(), input);

    const reasoning = ofType(run.events, EventType.REASONING_MESSAGE_CONTENT)
      .map((e) => e.delta)
      .join('');
    expect(reasoning).toBe('Let me think about that step by step.');
    for (const type of [EventType.REASONING_START, EventType.REASONING_MESSAGE_START, EventType.REASONING_MESSAGE_END, EventType.REASONING_END]) {
      expect(ofType(run.events, type)).toHaveLength(1);
    }
    expect(run.types.indexOf(EventType.REASONING_END)).toBeLessThan(run.types.indexOf(EventType.TEXT_MESSAGE_START));
    expect(assistantText(run.events)).toBe('Here is my answer to: think about tides');
    expect(run.terminal.type).toBe(EventType.RUN_FINISHED);
  });

  it('streams a server tool call, its result, and an answer that uses it', async () => {
    const input = runInput({ messages: [userMessage('what is the weather in Rome')] });
    const run = await runStrict(runUrl(), input);

    const [start] = ofType(run.events, EventType.TOOL_CALL_START);
    expect(start.toolCallName).toBe('get_weather');
    const id = start.toolCallId;
    const callEvents = run.events.filter((e) => (e as { toolCallId?: string }).toolCallId === id).map((e) => e.type);
    expect(callEvents[0]).toBe(EventType.TOOL_CALL_START);
    expect(callEvents.slice(-2)).toEqual([EventType.TOOL_CALL_END, EventType.TOOL_CALL_RESULT]);
    const args = ofType(run.events, EventType.TOOL_CALL_ARGS)
      .filter((e) => e.toolCallId === id)
      .map((e) => e.delta)
      .join('');
    expect(JSON.parse(args)).toEqual({ city: 'Rome' });

    const [result] = ofType(run.events, EventType.TOOL_CALL_RESULT);
    expect(result).toMatchObject({ toolCallId: id, role: 'tool', messageId: `tool-result-${id}` });
    const forecast = JSON.parse(result.content);
    expect(forecast).toMatchObject({ city: 'Rome', tempC: expect.any(Number), conditions: expect.any(String) });
    // The answer comes after the result and reports it.
    expect(run.types.lastIndexOf(EventType.TEXT_MESSAGE_CONTENT)).toBeGreaterThan(run.types.indexOf(EventType.TOOL_CALL_RESULT));
    expect(assistantText(run.events)).toContain(result.content);
    expect(run.terminal.type).toBe(EventType.RUN_FINISHED);
  });

  it('turns a throwing server tool into an error result, and the run still finishes', async () => {
    const input = runInput({ messages: [userMessage('weather in Atlantis please')] });
    const run = await runStrict(runUrl(), input);

    const [start] = ofType(run.events, EventType.TOOL_CALL_START);
    const results = ofType(run.events, EventType.TOOL_CALL_RESULT);
    expect(results).toHaveLength(1);
    expect(results[0].toolCallId).toBe(start.toolCallId);
    expect(JSON.parse(results[0].content)).toEqual({ error: 'no weather station in Atlantis' });
    expect(assistantText(run.events)).toContain('failed: no weather station in Atlantis');
    expect(run.terminal.type).toBe(EventType.RUN_FINISHED);
    // A reloaded page reads the failure from history exactly as the live stream gave it.
    const history = await http(`${tb.base}/threads/${input.threadId}/messages?resourceId=default&format=agui`);
    expect(history.body.filter((m: { role: string }) => m.role === 'tool')).toEqual([
      { id: `tool-result-${start.toolCallId}`, role: 'tool', toolCallId: start.toolCallId, content: results[0].content },
    ]);
  });

  it('ends a failing model call with RUN_ERROR as the last event, on a 200 stream', async () => {
    const input = runInput({ messages: [userMessage('please fail now')] });
    // The raw response: headers went out before the model failed, so the status is 200 and the
    // failure travels as the stream's last event.
    const res = await postRun(runUrl(), input);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const raw = [];
    for await (const event of sseEvents(res.body!)) raw.push(event);
    expect(raw.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, message: 'demo model failure' });

    // And the real client accepts it as a well-formed failed run.
    const run = await runStrict(runUrl(), runInput({ messages: [userMessage('please fail now')] }));
    expect(run.terminal).toMatchObject({ type: EventType.RUN_ERROR, message: 'demo model failure', code: expect.any(String) });
    expect(ofType(run.events, EventType.RUN_ERROR)).toHaveLength(1);
  });
});

describe('POST /run: structured output', () => {
  const schema = {
    type: 'object',
    properties: { answer: { type: 'string' }, confidence: { type: 'number' } },
    required: ['answer', 'confidence'],
  };

  const expectMatchesSchema = (text: string) => {
    const value = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(value).sort()).toEqual(['answer', 'confidence']);
    expect(typeof value.answer).toBe('string');
    expect(typeof value.confidence).toBe('number');
  };

  it('streams JSON matching a schema given as an object', async () => {
    const input = runInput({ messages: [userMessage('what is the capital of France')], forwardedProps: { structuredOutput: schema } });
    const run = await runStrict(runUrl(), input);
    expectMatchesSchema(assistantText(run.events));
    expect(run.terminal.type).toBe(EventType.RUN_FINISHED);
  });

  it('accepts the schema as JSON text too', async () => {
    const input = runInput({ messages: [userMessage('what is the capital of Peru')], forwardedProps: { structuredOutput: JSON.stringify(schema) } });
    const run = await runStrict(runUrl(), input);
    expectMatchesSchema(assistantText(run.events));
    expect(run.terminal.type).toBe(EventType.RUN_FINISHED);
  });
});

describe('POST /run: memory across runs', () => {
  it('stores each message once when the client re-sends its whole history', async () => {
    const threadId = uid('thread');
    // One HttpAgent for the conversation: it keeps `agent.messages` and sends all of them each run.
    const agent = new HttpAgent({ url: runUrl(), threadId });
    agent.addMessage(userMessage('first message'));
    const first = await runAgentStrict(agent, { runId: uid('run') });
    expect(assistantText(first.events)).toBe('Echo: first message');

    agent.addMessage(userMessage('second message'));
    const second = await runAgentStrict(agent, { runId: uid('run') });
    expect(assistantText(second.events)).toBe('Echo: second message');
    expect(agent.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);

    const stored = await http(`${tb.base}/threads/${threadId}/messages?resourceId=default`);
    expect(stored.status).toBe(200);
    const rows = stored.body as Array<{ id: string; role: string; content: unknown }>;
    expect(rows.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['first message', 'second message']);
    expect(rows.filter((m) => m.role === 'assistant').map((m) => m.content)).toEqual(['Echo: first message', 'Echo: second message']);
    expect(new Set(rows.map((m) => m.id)).size).toBe(rows.length);

    // The AG-UI view of the history matches what the client holds, ids included (no drift that
    // would make a later run re-send a message as new).
    const agui = await http(`${tb.base}/threads/${threadId}/messages?resourceId=default&format=agui`);
    expect((agui.body as Array<{ id: string; role: string; content: unknown }>).map((m) => [m.id, m.role, m.content])).toEqual(
      agent.messages.map((m) => [m.id, m.role, m.content]),
    );
  });

  it('memoryOptions.readOnly: the run reads the history and stores nothing', async () => {
    const threadId = uid('thread');
    await runStrict(runUrl(), runInput({ threadId, messages: [userMessage('kept')] }));
    const readOnly = { memoryOptions: { readOnly: true } };
    const run = await runStrict(runUrl(), runInput({ threadId, messages: [userMessage('not kept')], forwardedProps: readOnly }));
    expect(assistantText(run.events)).toBe('Echo: not kept');
    const stored = await http(`${tb.base}/threads/${threadId}/messages?resourceId=default`);
    expect(stored.body.map((m: { content: unknown }) => m.content)).toEqual(['kept', 'Echo: kept']);
  });
});
