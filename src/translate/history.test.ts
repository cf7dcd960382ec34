import { readFileSync } from 'node:fs';
import type { Message } from '@ag-ui/core';
import { MessageSchema } from '@ag-ui/core/schemas';
import type { MastraDBMessage } from '@mastra/core/agent/message-list';
import { describe, expect, it } from 'vitest';
import { appendPosition, subagentThreads, toAguiMessages } from './history.js';
import { toThreadMessage } from './thread-message.js';
import { MessageNumbering } from './ids.js';
import { selectNewMessages, toMastraMessages } from './messages.js';

/**
 * Real `memory.recall({ …, perPage: false, hideSignals: [] })` output of the demo agent, recorded
 * with a throwaway script: `tools` (weather, think, declined delete, failing tool, approved delete,
 * pending delete), `signals` (sendMessage + notification signal), `media` (user image + document).
 */
function fixture(name: 'tools' | 'signals' | 'media'): MastraDBMessage[] {
  const raw = JSON.parse(readFileSync(new URL(`../../test/fixtures/messages/${name}.json`, import.meta.url), 'utf8')) as Array<
    Omit<MastraDBMessage, 'createdAt'> & { createdAt: string }
  >;
  // JSON has ISO strings; storage hands out Dates.
  return raw.map((row) => ({ ...row, createdAt: new Date(row.createdAt) }));
}

function row(partial: Partial<MastraDBMessage> & Pick<MastraDBMessage, 'id' | 'role'> & { parts: MastraDBMessage['content']['parts'] }): MastraDBMessage {
  const { parts, ...rest } = partial;
  return { createdAt: new Date('2026-01-01T00:00:00Z'), threadId: 't', ...rest, content: { format: 2, parts, ...partial.content } };
}

describe('toAguiMessages', () => {
  it('turns the real tools thread into reasoning / assistant / tool messages in order', () => {
    const stored = fixture('tools');
    const out = toAguiMessages(stored);
    const [rome, romeAnswer, think, denied, deniedAnswer, atlantis, approved, approvedAnswer, pending] = [1, 1, 3, 5, 6, 8, 10, 11, 13].map(
      (i) => stored[i].id,
    );
    const call = (row: number) => (stored[row].content.parts[0] as { toolInvocation: { toolCallId: string } }).toolInvocation.toolCallId;
    expect(out.map((m) => [m.role, m.id])).toEqual([
      ['user', stored[0].id],
      ['assistant', rome],
      ['tool', `tool-result-${call(1)}`],
      ['assistant', `${romeAnswer}-1`],
      ['user', stored[2].id],
      ['reasoning', `${think}-reasoning`],
      ['assistant', think],
      ['user', stored[4].id],
      ['assistant', denied],
      ['tool', `tool-result-${call(5)}`],
      ['assistant', deniedAnswer],
      ['user', stored[7].id],
      ['assistant', atlantis],
      ['tool', `tool-result-${call(8)}`],
      ['assistant', `${atlantis}-1`],
      ['user', stored[9].id],
      ['assistant', approved],
      ['tool', `tool-result-${call(10)}`],
      ['assistant', approvedAnswer],
      ['user', stored[12].id],
      ['assistant', pending], // approval still pending: a tool call with no result
    ]);
    expect(out[1]).toEqual({
      id: rome,
      role: 'assistant',
      toolCalls: [{ id: call(1), type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }],
    });
    expect(out[2]).toMatchObject({ role: 'tool', toolCallId: call(1), content: expect.stringMatching(/^\{"city":"Rome","tempC":\d+,/) });
    expect(out[3]).toMatchObject({ role: 'assistant', content: expect.stringContaining('The tool get_weather returned') });
    expect(out[5]).toEqual({ id: `${think}-reasoning`, role: 'reasoning', content: 'Let me think about that step by step.' });
    expect(out[6]).toEqual({ id: think, role: 'assistant', content: 'Here is my answer to: think hard' });
    // Errors and declines read as on the live stream (event-mapping.md, tool results).
    expect(out[9]).toEqual({
      id: `tool-result-${call(5)}`,
      role: 'tool',
      toolCallId: call(5),
      content: '{"declined":true,"message":"The call to delete_file was declined: not today","reason":"not today"}',
      metadata: { approval: 'declined' },
    });
    expect(out[13]).toEqual({
      id: `tool-result-${call(8)}`,
      role: 'tool',
      toolCallId: call(8),
      content: '{"error":"no weather station in Atlantis"}',
    });
    expect(out[17]).toMatchObject({ role: 'tool', content: '{"deleted":"y.txt"}' });
    expect(out[20]).toEqual({
      id: pending,
      role: 'assistant',
      toolCalls: [{ id: call(13), type: 'function', function: { name: 'delete_file', arguments: '{"path":"z.txt"}' } }],
    });
  });

  it('turns signal rows into user and activity messages', () => {
    const stored = fixture('signals');
    expect(toAguiMessages(stored)).toEqual([
      { id: stored[0].id, role: 'user', content: 'hello' },
      { id: stored[1].id, role: 'assistant', content: 'Echo: hello' },
      {
        id: stored[2].id,
        role: 'activity',
        activityType: 'signal.notification',
        content: { tagName: 'notification', contents: 'Build done', attributes: { source: 'ci' } },
      },
      { id: stored[3].id, role: 'assistant', content: 'Echo: <notification source="ci">Build done</notification>' },
    ]);
  });

  it('turns stored files back into content parts', () => {
    const [user] = toAguiMessages(fixture('media'));
    expect(user).toEqual({
      id: 'media-u1',
      role: 'user',
      content: [
        { type: 'text', text: 'look at this' },
        { type: 'image', source: { type: 'data', value: 'iVBORw0KGgo=', mimeType: 'image/png' } },
        { type: 'document', source: { type: 'data', value: 'aGVsbG8=', mimeType: 'text/plain' } },
      ],
    });
  });

  it('outputs valid AG-UI messages with unique ids for every fixture', () => {
    for (const name of ['tools', 'signals', 'media'] as const) {
      const out = toAguiMessages(fixture(name));
      for (const message of out) expect(() => MessageSchema.parse(message)).not.toThrow();
      expect(new Set(out.map((m) => m.id)).size).toBe(out.length);
    }
  });

  it('round-trips through toMastraMessages with tool names resolved', () => {
    const back = toMastraMessages(toAguiMessages(fixture('tools')));
    const results = back.flatMap((m) => (m.role === 'tool' ? m.content : []));
    expect(results.map((r) => r.toolName)).toEqual(['get_weather', 'delete_file', 'get_weather', 'delete_file']);
    expect(results[0].output.type).toBe('json');
  });

  it('drops rows with nothing to show and de-duplicates ids', () => {
    const out = toAguiMessages([
      row({ id: 'e1', role: 'assistant', parts: [{ type: 'step-start' }, { type: 'error', error: { name: 'Error', message: 'x' } }] }),
      row({ id: 'u0', role: 'user', parts: [] }),
      row({ id: 's1', role: 'system', parts: [{ type: 'text', text: 'be brief' }] }),
      row({ id: 'dup', role: 'user', parts: [{ type: 'text', text: 'one' }] }),
      row({ id: 'dup', role: 'user', parts: [{ type: 'text', text: 'two' }] }),
    ]);
    expect(out).toEqual([
      { id: 's1', role: 'system', content: 'be brief' },
      { id: 'dup', role: 'user', content: 'one' },
      { id: 'dup-2', role: 'user', content: 'two' },
    ]);
  });

  it('covers isError results, denials without a reason and signals without metadata', () => {
    const invocation = (state: 'result' | 'output-denied', extra: object) => ({
      type: 'tool-invocation' as const,
      toolInvocation: { state, toolCallId: `c-${state}`, toolName: 'tool', args: undefined, ...extra } as never,
    });
    const out = toAguiMessages([
      row({ id: 'a1', role: 'assistant', parts: [invocation('result', { result: { code: 1 }, isError: true }), invocation('output-denied', {})] }),
      row({ id: 'g1', role: 'signal', type: 'reminder', parts: [{ type: 'text', text: 'tick' }] }),
    ]);
    expect(out).toEqual([
      {
        id: 'a1',
        role: 'assistant',
        toolCalls: [
          { id: 'c-result', type: 'function', function: { name: 'tool', arguments: '{}' } },
          { id: 'c-output-denied', type: 'function', function: { name: 'tool', arguments: '{}' } },
        ],
      },
      { id: 'tool-result-c-result', role: 'tool', toolCallId: 'c-result', content: '{"error":"{\\"code\\":1}"}' },
      {
        id: 'tool-result-c-output-denied',
        role: 'tool',
        toolCallId: 'c-output-denied',
        content: '{"declined":true,"message":"The call to tool was declined."}',
        metadata: { approval: 'declined' },
      },
      { id: 'g1', role: 'activity', activityType: 'signal.reminder', content: { tagName: 'reminder', contents: 'tick', attributes: {} } },
    ]);
  });
});

describe('toThreadMessage', () => {
  it('gives plain text for text-only rows and the content object otherwise', () => {
    const stored = fixture('tools');
    expect(toThreadMessage(stored[0])).toEqual({
      id: stored[0].id,
      role: 'user',
      content: 'weather in Rome',
      createdAt: stored[0].createdAt.toISOString(),
      threadId: 'thread-tools',
    });
    const withTool = toThreadMessage(stored[1]);
    expect(withTool.content).toBe(stored[1].content);
    expect(withTool.role).toBe('assistant');
  });

  it('accepts an ISO string createdAt and a missing threadId', () => {
    const raw = { ...row({ id: 'm', role: 'signal', parts: [{ type: 'text', text: 'hello' }] }), threadId: undefined };
    const message = toThreadMessage({ ...raw, createdAt: '2026-01-01T00:00:00.000Z' as unknown as Date });
    expect(message).toEqual({ id: 'm', role: 'signal', content: 'hello', createdAt: '2026-01-01T00:00:00.000Z', threadId: '' });
  });
});

describe('history as a /run input', () => {
  it('finds only the new message in a hydrated snapshot when storedIds come from toAguiMessages', () => {
    const stored = fixture('tools');
    const snapshot = toAguiMessages(stored);
    const storedIds = new Set([...stored.map((m) => m.id), ...snapshot.map((m) => m.id)]);
    const fresh: Message = { id: 'new-user', role: 'user', content: 'what next?' };
    expect(selectNewMessages([...snapshot, fresh], storedIds, true)).toEqual([fresh]);
  });
});

describe('MessageNumbering (the id rule live and history share)', () => {
  it('numbers parts by segment: a new segment where text or reasoning follows a tool call', () => {
    const n = MessageNumbering.start('m');
    expect([n.next('reasoning'), n.next('text'), n.next('text'), n.toolCallParent(), n.toolCallParent()]).toEqual(['m-reasoning', 'm', 'm-text-2', 'm', 'm']);
    expect([n.next('text'), n.next('reasoning'), n.next('reasoning')]).toEqual(['m-1', 'm-1-reasoning', 'm-1-reasoning-2']);
    expect(n.position()).toEqual({ messageId: 'm', segment: 1, hasToolCalls: false, texts: 1, reasonings: 2 });
  });

  it('goes on from a position without changing the one it was given', () => {
    const position = { messageId: 'm', segment: 0, hasToolCalls: true, texts: 0, reasonings: 0 };
    const n = MessageNumbering.resume(position);
    expect(n.next('text')).toBe('m-1');
    expect(position.segment).toBe(0);
  });
});

describe('toAguiMessages: as the reducer folds the live stream', () => {
  const call = (id: string, state: 'result' | 'call', result?: unknown) =>
    ({ type: 'tool-invocation', toolInvocation: { state, toolCallId: id, toolName: 'pick_color', args: {}, ...(state === 'result' && { result }) } }) as const;

  it('gives each text part its own message, the tool message right after the message that carries the call', () => {
    const out = toAguiMessages([
      row({
        id: 'a',
        role: 'assistant',
        parts: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
          call('c1', 'result', 'teal'),
          { type: 'step-start' },
          { type: 'text', text: 'three' },
          { type: 'text', text: 'four' },
        ],
      }),
    ]);
    expect(out.map((m) => [m.id, m.role, m.content ?? null])).toEqual([
      ['a', 'assistant', 'one'],
      ['tool-result-c1', 'tool', 'teal'],
      ['a-text-2', 'assistant', 'two'],
      ['a-1', 'assistant', 'three'],
      ['a-1-text-2', 'assistant', 'four'],
    ]);
    expect(out[0]).toMatchObject({ toolCalls: [{ id: 'c1' }] });
  });

  it('uses the id the client gave its tool message, where it gave one', () => {
    const out = toAguiMessages([row({ id: 'a', role: 'assistant', parts: [call('c1', 'result', 'teal'), call('c2', 'result', 'navy')] })], {
      toolMessageIds: { c1: 'client-tool-1' },
    });
    expect(out.map((m) => m.id)).toEqual(['a', 'client-tool-1', 'tool-result-c2']);
  });

  it("shows a background task's outcome as the call's result, then its activity in its last state", () => {
    const stored = [row({ id: 'a', role: 'assistant', parts: [call('c1', 'result', 'Background task started.'), { type: 'text', text: 'It runs.' }] })];
    const done = toAguiMessages(stored, {
      backgroundTasks: [{ id: 'k', toolCallId: 'c1', toolName: 'slow_task', status: 'completed', result: { done: true } }],
    });
    expect(done).toEqual([
      { id: 'a', role: 'assistant', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'pick_color', arguments: '{}' } }] },
      { id: 'tool-result-c1', role: 'tool', toolCallId: 'c1', content: '{"done":true}' },
      {
        id: 'background-task-k',
        role: 'activity',
        activityType: 'background-task',
        content: { taskId: 'k', toolName: 'slow_task', toolCallId: 'c1', status: 'completed', result: { done: true } },
      },
      { id: 'a-1', role: 'assistant', content: 'It runs.' },
    ]);
    const failed = toAguiMessages(stored, {
      backgroundTasks: [{ id: 'k', toolCallId: 'c1', toolName: 'slow_task', status: 'failed', error: { message: 'boom' } }],
    });
    expect(failed[1]).toMatchObject({ content: '{"error":"boom"}' });
    expect(failed[2]).toMatchObject({ content: { status: 'failed', error: 'boom' } });
    // Still running: the call has no result yet.
    const running = toAguiMessages(stored, { backgroundTasks: [{ id: 'k', toolCallId: 'c1', toolName: 'slow_task', status: 'running' }] });
    expect(running.map((m) => m.role)).toEqual(['assistant', 'activity', 'assistant']);
  });
});

describe('appendPosition', () => {
  it('is where the numbering of a stored message stands after its parts', () => {
    expect(
      appendPosition(
        row({
          id: 'a',
          role: 'assistant',
          parts: [
            { type: 'text', text: 'x' },
            { type: 'tool-invocation', toolInvocation: { state: 'call', toolCallId: 'c', toolName: 't', args: {} } },
          ],
        }),
      ),
    ).toEqual({
      messageId: 'a',
      segment: 0,
      hasToolCalls: true,
      texts: 1,
      reasonings: 0,
    });
  });
});

describe('a delegation to a sub-agent', () => {
  const delegation = (result: unknown) =>
    row({
      id: 'a1',
      role: 'assistant',
      parts: [
        {
          type: 'tool-invocation',
          toolInvocation: { state: 'result', toolCallId: 'd1', toolName: 'agent-researcher', args: { prompt: 'research rain' }, result },
        },
      ],
    });
  const result = {
    text: 'It rains.',
    subAgentThreadId: 'sub-t',
    subAgentResourceId: 'u-researcher',
    subAgentToolResults: [{ toolCallId: 'c1', toolName: 'get_weather', args: { city: 'Oslo' }, result: { rain: true } }],
  };
  const sub = 'subagent-d1';

  it('names the sub-agent threads its delegations stored', () => {
    expect([...subagentThreads([delegation(result)])]).toEqual([['d1', { threadId: 'sub-t', resourceId: 'u-researcher' }]]);
  });

  it('from the sub-agent’s own thread: its reasoning, the message carrying its calls with their results after it, its answer, after the delegation’s result', () => {
    const subRows = [
      row({ id: 's0', role: 'user', parts: [{ type: 'text', text: 'research rain' }] }),
      row({
        id: 's1',
        role: 'assistant',
        parts: [
          { type: 'reasoning', reasoning: 'Hmm.', details: [] },
          {
            type: 'tool-invocation',
            toolInvocation: { state: 'result', toolCallId: 'c1', toolName: 'get_weather', args: { city: 'Oslo' }, result: { rain: true } },
          },
          { type: 'step-start' },
          { type: 'text', text: 'It rains.' },
        ],
      }),
    ];
    const out = toAguiMessages([delegation(result)], { subagents: new Map([['d1', subRows]]) });
    expect(out.slice(1)).toEqual([
      { id: 'tool-result-d1', role: 'tool', toolCallId: 'd1', content: JSON.stringify(result) },
      { id: `${sub}-reasoning`, role: 'reasoning', content: 'Hmm.', subagentRunId: sub },
      {
        id: `${sub}-calls`,
        role: 'assistant',
        toolCalls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
        subagentRunId: sub,
      },
      { id: 'tool-result-c1', role: 'tool', toolCallId: 'c1', content: '{"rain":true}', subagentRunId: sub },
      { id: `${sub}-text`, role: 'assistant', content: 'It rains.', subagentRunId: sub },
    ]);
  });

  it('without the sub-agent’s thread: its calls and answer from what the delegation’s result keeps', () => {
    const out = toAguiMessages([delegation(result)]);
    expect(out.slice(2).map((m) => [m.id, m.role])).toEqual([
      [`${sub}-calls`, 'assistant'],
      ['tool-result-c1', 'tool'],
      [`${sub}-text`, 'assistant'],
    ]);
  });
});
