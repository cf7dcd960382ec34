import { EventType, HttpAgent, type Tool } from '@ag-ui/client';
import { describe, expect, it } from 'vitest';
import { assistantText, ofType, runInput, runStrict, uid, userMessage } from './support/agui.js';
import { postRun, runAgentStrict, sseEvents } from './support/run.js';
import { watchThread } from './support/thread-watch.js';
import { http, startTestBridge, useTestBridge } from './support/server.js';
import { mastraRunIdOf } from '../src/translate/ids.js';

// Frontend tools (RunAgentInput.tools) on POST /run, in both modes of the contract.

const pickColor: Tool = {
  name: 'pick_color',
  description: 'Ask the user to pick a color',
  parameters: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] },
};

const resultUrl = (base: string, runId: string, toolCallId: string) => `${base}/runs/${runId}/tool-calls/${toolCallId}/result`;

const tb = useTestBridge();

describe('frontend tools, proxy mode (default)', () => {
  it('keeps the run open until the result is posted, then continues the same run', async () => {
    const input = runInput({ messages: [userMessage('use pick_color')], tools: [pickColor] });
    let answers: Promise<Array<Awaited<ReturnType<typeof http>>>> | undefined;
    const run = await runStrict(`${tb.base}/run`, input, (event) => {
      if (event.type !== EventType.TOOL_CALL_END) return;
      const { toolCallId } = event as typeof event & { toolCallId: string };
      const url = resultUrl(tb.base, input.runId, toolCallId);
      // Answer the instant the call is complete, as a browser would; then answer again, and
      // answer a call that does not exist. The stream is still open while these go out.
      answers = (async () => [
        await http(url, { body: { content: 'teal' } }),
        await http(url, { body: { content: 'navy' } }),
        await http(resultUrl(tb.base, input.runId, 'no-such-call'), { body: { content: 'teal' } }),
      ])();
    });
    expect(answers).toBeDefined();
    const [accepted, twice, unknown] = await answers!;
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({ accepted: true });
    expect(twice.status).toBe(409);
    expect(twice.body.code).toBe('CONFLICT');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('TOOL_CALL_NOT_FOUND');

    // One run: the call, the posted result, the answer built on it, then RUN_FINISHED.
    expect(ofType(run.events, EventType.RUN_STARTED)).toHaveLength(1);
    const [start] = ofType(run.events, EventType.TOOL_CALL_START);
    expect(start.toolCallName).toBe('pick_color');
    const [result] = ofType(run.events, EventType.TOOL_CALL_RESULT);
    expect(result).toMatchObject({ toolCallId: start.toolCallId, content: 'teal' });
    expect(run.types.indexOf(EventType.TOOL_CALL_END)).toBeLessThan(run.types.indexOf(EventType.TOOL_CALL_RESULT));
    expect(assistantText(run.events)).toContain('teal');
    expect(run.terminal.type).toBe(EventType.RUN_FINISHED);
    expect(run.terminal).not.toHaveProperty('outcome.pendingToolCallIds');
  });

  it('fails the tool with a clear message when no result comes in time, and finishes the run', async () => {
    const quick = await startTestBridge({ config: { frontendToolTimeoutMs: 200 } });
    try {
      const input = runInput({ messages: [userMessage('use pick_color')], tools: [pickColor] });
      const run = await runStrict(`${quick.base}/run`, input);

      const [start] = ofType(run.events, EventType.TOOL_CALL_START);
      const [result] = ofType(run.events, EventType.TOOL_CALL_RESULT);
      expect(result.toolCallId).toBe(start.toolCallId);
      const { error } = JSON.parse(result.content) as { error: string };
      expect(error).toMatch(/pick_color timed out/);
      expect(error).toContain('200 ms');
      expect(assistantText(run.events)).toContain('timed out');
      expect(run.terminal.type).toBe(EventType.RUN_FINISHED);
    } finally {
      await quick.close();
    }
  });

  it('drops the pending call when the client disconnects', async () => {
    const threadId = uid('thread');
    // Mastra's own view of the thread, to know when the server has handled the disconnect.
    const watch = await watchThread(tb.demo, { threadId });
    try {
      const input = runInput({ threadId, messages: [userMessage('use pick_color')], tools: [pickColor] });
      const leave = new AbortController();
      const res = await postRun(`${tb.base}/run`, input, { signal: leave.signal });
      let toolCallId: string | undefined;
      for await (const event of sseEvents(res.body!)) {
        if (event.type === EventType.TOOL_CALL_END) {
          toolCallId = event.toolCallId;
          break;
        }
      }
      expect(toolCallId).toBeDefined();
      leave.abort();

      // The Mastra run can only end once its tool call settles, and nothing but the disconnect can
      // settle it here (no result was posted; the timeout is 5 min). The abort that rejects the
      // pending call runs before any later I/O, so once Mastra reports the run's end, the result
      // route must no longer know the call.
      const end = await watch.until((c) => c.runId === mastraRunIdOf(input.threadId, input.runId) && ['finish', 'abort', 'error'].includes(c.type));
      expect(end).toBeDefined();
      expect(watch.chunks.some((c) => c.runId === mastraRunIdOf(input.threadId, input.runId) && c.type === 'tool-result')).toBe(false);

      const late = await http(resultUrl(tb.base, input.runId, toolCallId!), { body: { content: 'teal' } });
      expect(late.status).toBe(404);
      expect(late.body.code).toBe('TOOL_CALL_NOT_FOUND');
    } finally {
      watch.close();
    }
  });
});

describe('frontend tools, return mode', () => {
  it('ends the run with the pending call, and answers from the tool message of the next run', async () => {
    const threadId = uid('thread');
    const agent = new HttpAgent({ url: `${tb.base}/run`, threadId });
    const forwardedProps = { frontendToolMode: 'return' };
    agent.addMessage(userMessage('use pick_color'));

    const first = await runAgentStrict(agent, { runId: uid('run'), tools: [pickColor], forwardedProps });
    const [start] = ofType(first.events, EventType.TOOL_CALL_START);
    expect(start.toolCallName).toBe('pick_color');
    expect(ofType(first.events, EventType.TOOL_CALL_RESULT)).toHaveLength(0);
    expect(first.terminal.outcome).toEqual({ type: 'success', pendingToolCallIds: [start.toolCallId] });
    expect(first.finished).toMatchObject({ outcome: 'success', pendingToolCallIds: [start.toolCallId] });

    // The client runs the tool and sends its result with the whole history, as HttpAgent users do.
    agent.addMessage({ id: uid('tool'), role: 'tool', toolCallId: start.toolCallId, content: 'teal' });
    const second = await runAgentStrict(agent, { runId: uid('run'), tools: [pickColor], forwardedProps });
    expect(assistantText(second.events)).toContain('teal');
    expect(assistantText(second.events)).toContain('pick_color'); // the result reached the model under its tool's name
    expect(second.terminal.type).toBe(EventType.RUN_FINISHED);
    expect(second.terminal).not.toHaveProperty('outcome.pendingToolCallIds');

    // The stored history holds the call once, its result, and the answer: no second copy of the call.
    const history = await http(`${tb.base}/threads/${threadId}/messages?resourceId=default&format=agui`);
    const messages = history.body as Array<{
      role: string;
      toolCalls?: Array<{ id: string; function: { name: string; arguments: string } }>;
      toolCallId?: string;
      content?: unknown;
    }>;
    const calls = messages.flatMap((m) => m.toolCalls ?? []);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ id: start.toolCallId, function: { name: 'pick_color' } });
    expect(JSON.parse(calls[0].function.arguments)).toEqual({ color: 'use pick_color' });
    expect(messages.filter((m) => m.role === 'tool')).toEqual([expect.objectContaining({ toolCallId: start.toolCallId, content: 'teal' })]);
    expect(messages.filter((m) => m.role === 'user')).toHaveLength(1);
  });
});
