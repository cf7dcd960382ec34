import type { Message } from '@ag-ui/core';
import { Mastra } from '@mastra/core/mastra';
import type { MessageListInput } from '@mastra/core/agent/message-list';
import { InMemoryStore } from '@mastra/core/storage';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { createDemoAgent } from '../demo/agent.js';
import { selectNewMessages, tailIds, toMastraMessages, type MastraInputMessage } from './messages.js';

const weatherCall = { id: 'c1', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } };

describe('toMastraMessages', () => {
  it('keeps user string content and ids', () => {
    expect(toMastraMessages([{ id: 'u1', role: 'user', content: 'hi' }])).toEqual([{ id: 'u1', role: 'user', content: 'hi' }]);
  });

  it('maps user content parts: text, image, and other media as files', () => {
    const out = toMastraMessages([
      {
        id: 'u1',
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image', source: { type: 'url', value: 'https://x.test/a.png', mimeType: 'image/png' } },
          { type: 'image', source: { type: 'data', value: 'iVBORw0KGgo=', mimeType: 'image/png' } },
          { type: 'image', source: { type: 'url', value: 'https://x.test/b' } },
          { type: 'audio', source: { type: 'data', value: 'AAAA', mimeType: 'audio/wav' } },
          { type: 'video', source: { type: 'url', value: 'https://x.test/v.mp4', mimeType: 'video/mp4' } },
          { type: 'document', source: { type: 'url', value: 'https://x.test/doc' } },
          { type: 'document', source: { type: 'file', value: 'file-abc', mimeType: 'application/pdf' } },
        ],
      },
    ]);
    expect(out).toEqual([
      {
        id: 'u1',
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image', image: 'https://x.test/a.png', mediaType: 'image/png' },
          { type: 'image', image: 'iVBORw0KGgo=', mediaType: 'image/png' },
          { type: 'image', image: 'https://x.test/b' },
          { type: 'file', data: 'AAAA', mediaType: 'audio/wav' },
          { type: 'file', data: 'https://x.test/v.mp4', mediaType: 'video/mp4' },
          { type: 'file', data: 'https://x.test/doc', mediaType: 'application/octet-stream' },
          { type: 'file', data: 'file-abc', mediaType: 'application/pdf' },
        ],
      },
    ]);
  });

  it('maps assistant text and tool calls, parsing arguments with an {} fallback', () => {
    const out = toMastraMessages([
      {
        id: 'a1',
        role: 'assistant',
        content: 'Checking',
        toolCalls: [
          weatherCall,
          { id: 'c2', type: 'function', function: { name: 'noop', arguments: '' } },
          { id: 'c3', type: 'function', function: { name: 'bad', arguments: '{not json' } },
          { id: 'c4', type: 'function', function: { name: 'arr', arguments: '[1,2]' } },
        ],
      },
    ]);
    expect(out).toEqual([
      {
        id: 'a1',
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'get_weather', input: { city: 'Oslo' } },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'noop', input: {} },
          { type: 'tool-call', toolCallId: 'c3', toolName: 'bad', input: {} },
          { type: 'tool-call', toolCallId: 'c4', toolName: 'arr', input: {} },
        ],
      },
    ]);
  });

  it('drops an assistant message with neither text nor tool calls', () => {
    expect(
      toMastraMessages([
        { id: 'a1', role: 'assistant' },
        { id: 'a2', role: 'assistant', content: '' },
      ]),
    ).toEqual([]);
  });

  it('maps tool results: name from an earlier call, json / text / error outputs', () => {
    const out = toMastraMessages([
      { id: 'a1', role: 'assistant', toolCalls: [weatherCall] },
      { id: 't1', role: 'tool', toolCallId: 'c1', content: '{"tempC":3}' },
      { id: 't2', role: 'tool', toolCallId: 'c1', content: '[1,2]' },
      { id: 't3', role: 'tool', toolCallId: 'c1', content: '42' },
      { id: 't4', role: 'tool', toolCallId: 'c1', content: 'sunny' },
      { id: 't5', role: 'tool', toolCallId: 'c1', content: 'ignored', error: 'boom' },
      { id: 't6', role: 'tool', toolCallId: 'c1', content: 'station down', error: '' },
      { id: 't7', role: 'tool', toolCallId: 'nope', content: 'x' },
    ]);
    const outputs = out.slice(1).map((m) => (m.role === 'tool' ? [m.content[0].toolName, m.content[0].output] : m));
    expect(outputs).toEqual([
      ['get_weather', { type: 'json', value: { tempC: 3 } }],
      ['get_weather', { type: 'json', value: [1, 2] }],
      ['get_weather', { type: 'text', value: '42' }],
      ['get_weather', { type: 'text', value: 'sunny' }],
      ['get_weather', { type: 'error-text', value: 'boom' }],
      ['get_weather', { type: 'error-text', value: 'station down' }],
      ['unknown', { type: 'text', value: 'x' }],
    ]);
    expect(out[1]).toEqual({
      id: 't1',
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'get_weather', output: { type: 'json', value: { tempC: 3 } } }],
    });
  });

  it('only looks up tool names from earlier assistant messages', () => {
    const out = toMastraMessages([
      { id: 't1', role: 'tool', toolCallId: 'c1', content: 'early' },
      { id: 'a1', role: 'assistant', toolCalls: [weatherCall] },
    ]);
    expect(out[0].role === 'tool' && out[0].content[0].toolName).toBe('unknown');
  });

  it('maps tool content parts: text-only parts as a string, media as content', () => {
    const out = toMastraMessages([
      { id: 't1', role: 'tool', toolCallId: 'c1', content: [{ type: 'text', text: '{"a":1}' }] },
      {
        id: 't2',
        role: 'tool',
        toolCallId: 'c1',
        content: [
          { type: 'text', text: 'chart:' },
          { type: 'image', source: { type: 'data', value: 'iVBO', mimeType: 'image/png' } },
          { type: 'image', source: { type: 'url', value: 'https://x.test/c.png' } },
        ],
      },
    ]);
    expect(out.map((m) => m.role === 'tool' && m.content[0].output)).toEqual([
      { type: 'json', value: { a: 1 } },
      {
        type: 'content',
        value: [
          { type: 'text', text: 'chart:' },
          { type: 'media', data: 'iVBO', mediaType: 'image/png' },
          { type: 'text', text: '[image: https://x.test/c.png]' },
        ],
      },
    ]);
  });

  it('maps system and developer to system, and drops activity and reasoning', () => {
    const out = toMastraMessages([
      { id: 's1', role: 'system', content: 'be brief' },
      { id: 'd1', role: 'developer', content: 'use metric' },
      { id: 'x1', role: 'activity', activityType: 'signal.notification', content: { contents: 'Build done' } },
      { id: 'r1', role: 'reasoning', content: 'hmm' },
    ]);
    expect(out).toEqual([
      { id: 's1', role: 'system', content: 'be brief' },
      { id: 'd1', role: 'system', content: 'use metric' },
    ]);
  });

  it('produces what agent.stream() accepts (type level)', () => {
    expectTypeOf<MastraInputMessage[]>().toExtend<MessageListInput>();
  });

  it('is accepted by a real agent run, and the stored rows keep the client ids', async () => {
    const storage = new InMemoryStore();
    const demo = createDemoAgent({ storage, delayMs: 0 });
    const agent = new Mastra({ agents: { demo }, storage, logger: false }).getAgent('demo');
    const history: Message[] = [
      { id: 'u1', role: 'user', content: 'weather in Oslo' },
      { id: 'a1', role: 'assistant', toolCalls: [weatherCall] },
      { id: 't1', role: 'tool', toolCallId: 'c1', content: '{"city":"Oslo","tempC":3,"conditions":"sunny"}' },
      { id: 'u2', role: 'user', content: 'thanks, and hello' },
    ];
    const output = await agent.stream(toMastraMessages(history), { memory: { thread: 'rt', resource: 'r' } });
    const types: string[] = [];
    for await (const chunk of output.fullStream) types.push(chunk.type);
    expect(types).not.toContain('error');
    expect(types.at(-1)).toBe('finish');
    expect(await output.text).toBe('Echo: thanks, and hello');

    const memory = await agent.getMemory();
    const { messages } = await memory!.recall({ threadId: 'rt', resourceId: 'r', perPage: false });
    // Mastra merges the tool result into the assistant row that made the call, so `t1` has no row.
    expect(messages.map((m) => m.id).slice(0, 3)).toEqual(['u1', 'a1', 'u2']);
    expect(messages[1].content.parts[0]).toMatchObject({ type: 'tool-invocation', toolInvocation: { state: 'result', toolName: 'get_weather' } });
  });
});

describe('tailIds', () => {
  const m = (id: string, role: Message['role']) => ({ id, role, content: id }) as Message;

  it('names the trailing input messages and the one before them, skipping activities and reasoning', () => {
    const input = [m('u1', 'user'), m('a1', 'assistant'), m('u2', 'user'), m('r1', 'reasoning'), m('t1', 'tool'), m('x1', 'activity')];
    expect(tailIds(input)).toEqual(['t1', 'u2', 'a1']);
  });

  it('is what selectNewMessages looks at: any other stored id changes nothing', () => {
    const input = [m('u1', 'user'), m('a1', 'assistant'), m('u2', 'user'), m('a2', 'assistant'), m('u3', 'user')];
    const looked = new Set(tailIds(input));
    for (const stored of [
      ['u1', 'a1', 'u2'],
      ['u1', 'a1', 'u2', 'a2'],
      ['u1', 'a1', 'u2', 'a2', 'u3'],
    ]) {
      expect(selectNewMessages(input, new Set(stored.filter((id) => looked.has(id))), true)).toEqual(selectNewMessages(input, new Set(stored), true));
    }
    expect(tailIds([m('a1', 'assistant')])).toEqual(['a1']);
    expect(tailIds([])).toEqual([]);
  });
});

describe('selectNewMessages', () => {
  const u1: Message = { id: 'u1', role: 'user', content: 'weather?' };
  const a1: Message = { id: 'a1', role: 'assistant', toolCalls: [weatherCall] };
  const t1: Message = { id: 't1', role: 'tool', toolCallId: 'c1', content: '{"tempC":3}' };
  const a2: Message = { id: 'a2', role: 'assistant', content: 'It is 3C' };
  const u2: Message = { id: 'u2', role: 'user', content: 'thanks' };
  const activity: Message = { id: 'x1', role: 'activity', activityType: 'signal.notification', content: {} };
  const reasoning: Message = { id: 'r1', role: 'reasoning', content: 'hmm' };

  it('returns every non-activity message when the thread has no history', () => {
    expect(selectNewMessages([u1, activity, reasoning, a1, t1], new Set(), false)).toEqual([u1, reasoning, a1, t1]);
  });

  it('returns the messages after the last assistant message', () => {
    expect(selectNewMessages([u1, a1, t1, a2, u2], new Set(['u1', 'a1', 'a2']), true)).toEqual([u2]);
  });

  it('keeps a tool result that answers a (frontend) tool call of the stored assistant message', () => {
    expect(selectNewMessages([u1, a1, t1], new Set(['u1', 'a1']), true)).toEqual([t1]);
    expect(selectNewMessages([u1, a1, t1, u2], new Set(['u1', 'a1']), true)).toEqual([t1, u2]);
  });

  it('stops at an assistant message even when it is not stored', () => {
    expect(selectNewMessages([u1, a1, t1, a2, u2], new Set(['u1']), true)).toEqual([u2]);
  });

  it('stops at a stored message, so a re-sent history yields nothing', () => {
    expect(selectNewMessages([u1, a1, t1, a2, u2], new Set(['u2']), true)).toEqual([]);
  });

  it('skips trailing activity and reasoning messages', () => {
    const system: Message = { id: 's1', role: 'system', content: 'be brief' };
    expect(selectNewMessages([u1, a2, system, activity, u2, reasoning, activity], new Set(['u1', 'a2']), true)).toEqual([system, u2]);
  });
});
