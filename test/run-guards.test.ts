import { EventType } from '@ag-ui/client';
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import type { MastraStorage } from '@mastra/core/storage';
import { Memory } from '@mastra/memory';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createScriptedModel } from '../src/demo/scripted-model.js';
import { ofType, runInput, runStrict, userMessage } from './support/agui.js';
import { postRun, sseEvents } from './support/run.js';
import { http, useTestBridge } from './support/server.js';

// What /run refuses or keeps apart: ids of other threads, answers from other callers, non-JSON
// bodies; and what it hands to tools: the AG-UI context.

/** An agent whose `get_weather` returns what the run put in Mastra's request context. */
function contextEcho(storage: MastraStorage) {
  return new Agent({
    id: 'context-echo',
    name: 'Context Echo',
    instructions: 'x',
    model: createScriptedModel({ delayMs: 0 }),
    memory: new Memory({ storage }),
    tools: {
      get_weather: createTool({
        id: 'get_weather',
        description: 'returns the AG-UI request context',
        inputSchema: z.object({ city: z.string() }),
        execute: async (_input, ctx) => ctx.requestContext?.get<string, Record<string, unknown>>('ag-ui'),
      }),
    },
  });
}

const tb = useTestBridge({ agents: (storage) => ({ 'context-echo': contextEcho(storage) }) });

describe('message ids', () => {
  it('refuses a message id that belongs to another thread, and leaves that thread alone', async () => {
    const owned = userMessage('mine');
    const first = runInput({ messages: [owned], forwardedProps: { resourceId: 'alice' } });
    await runStrict(`${tb.base}/run`, first);

    const hijack = await http(`${tb.base}/run`, {
      body: runInput({ messages: [userMessage('taken', owned.id)], forwardedProps: { resourceId: 'eve' } }),
    });
    expect(hijack.status).toBe(409);
    expect(hijack.body.code).toBe('CONFLICT');

    const history = await http(`${tb.base}/threads/${first.threadId}/messages?resourceId=alice`);
    expect(history.body.find((m: { id: string }) => m.id === owned.id)?.content).toBe('mine');
  });
});

describe('frontend tool answers', () => {
  it('are taken only from the resource that started the run', async () => {
    const input = runInput({
      messages: [userMessage('use pick_color')],
      tools: [{ name: 'pick_color', description: 'pick', parameters: { type: 'object', properties: { color: { type: 'string' } } } }],
      forwardedProps: { resourceId: 'alice' },
    });
    const res = await postRun(`${tb.base}/run`, input);
    const seen: string[] = [];
    for await (const event of sseEvents(res.body!)) {
      seen.push(event.type);
      if (event.type !== EventType.TOOL_CALL_END) continue;
      const url = `${tb.base}/runs/${input.runId}/tool-calls/${event.toolCallId}/result`;
      const stranger = await http(`${url}?resourceId=mallory`, { body: { content: 'red' } });
      expect(stranger.status).toBe(404);
      expect(stranger.body.code).toBe('TOOL_CALL_NOT_FOUND');
      expect((await http(`${url}?resourceId=alice`, { body: { content: 'teal' } })).status).toBe(202);
    }
    expect(seen).toContain(EventType.TOOL_CALL_RESULT);
    expect(seen.at(-1)).toBe(EventType.RUN_FINISHED);
  });
});

describe('bodies', () => {
  it('must be sent as JSON: valid JSON under text/plain is refused', async () => {
    const body = JSON.stringify(runInput({ messages: [userMessage('hi')] }));
    const res = await http(`${tb.base}/run`, { rawBody: body, headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_INPUT', error: 'Content-Type must be application/json' });
  });
});

describe('the AG-UI context', () => {
  it('reaches tools as requestContext "ag-ui" (context, state, forwardedProps)', async () => {
    const input = runInput({
      messages: [userMessage('weather in Oslo')],
      context: [{ description: 'timezone', value: 'Europe/Oslo' }],
      state: { cart: 2 },
      forwardedProps: { agentId: 'context-echo' },
    });
    const run = await runStrict(`${tb.base}/run`, input);
    const [result] = ofType(run.events, EventType.TOOL_CALL_RESULT);
    expect(JSON.parse(result.content)).toEqual({
      context: [{ description: 'timezone', value: 'Europe/Oslo' }],
      state: { cart: 2 },
      forwardedProps: { agentId: 'context-echo' },
    });
  });
});
