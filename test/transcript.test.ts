import { describe, expect, it } from 'vitest';

// The demo page's transcript model (web/transcript-items.js), without a browser: which items a thread's
// messages show, and in which state.
interface Item {
  id: string;
  kind: string;
  name?: string;
  status?: string;
  tone?: string;
  text?: string;
}
interface View {
  messages: object[];
  notices: object[];
  streaming: Set<string>;
  approvals: Map<string, string>;
  running: boolean;
}
// A computed path: the page's plain JavaScript is not part of the TypeScript project.
const transcript = '../web/transcript-items.js';
const { itemsOfView } = (await import(transcript)) as { itemsOfView: (view: View) => Item[] };

const call = (id: string, name = 'get_weather') => ({ id, type: 'function', function: { name, arguments: '{"city":"Oslo"}' } });
const view = (messages: object[], running: boolean, approvals = new Map<string, string>()): View => ({
  messages,
  notices: [],
  streaming: new Set(),
  approvals,
  running,
});
const tools = (items: Item[]) => items.filter((i) => i.kind === 'tool').map((i) => [i.name, i.status]);

describe('the demo page’s transcript', () => {
  const asked = [
    { id: 'u1', role: 'user', content: 'weather in Oslo, and research tides' },
    { id: 'a1', role: 'assistant', content: '', toolCalls: [call('c1'), call('c2', 'agent-researcher'), call('c3', 'delete_file')] },
    { id: 't1', role: 'tool', toolCallId: 'c1', content: '{"city":"Oslo","tempC":12}' },
  ];

  it('a call with no result is running while a run is going on', () => {
    expect(tools(itemsOfView(view(asked, true)))).toEqual([
      ['get_weather', 'done'],
      ['agent-researcher', 'calling'],
      ['delete_file', 'calling'],
    ]);
  });

  it('with no run going on (it was stopped or failed, live or read back in a new tab), it is stopped; one waiting for approval still waits', () => {
    expect(tools(itemsOfView(view(asked, false, new Map([['c3', 'waiting']]))))).toEqual([
      ['get_weather', 'done'],
      ['agent-researcher', 'stopped'],
      ['delete_file', 'waiting'],
    ]);
  });

  it('an answered approval shows as the result’s metadata says, in a tab that did not answer it (another tab, a reload)', () => {
    const approved = [...asked, { id: 't3', role: 'tool', toolCallId: 'c3', content: '{"deleted":"notes.txt"}', metadata: { approval: 'approved' } }];
    expect(tools(itemsOfView(view(approved, false)))[2]).toEqual(['delete_file', 'approved']);
    // Without the mark, a result is only done: the tab cannot tell an approval from any other call.
    const unmarked = [...asked, { id: 't3', role: 'tool', toolCallId: 'c3', content: '{"deleted":"notes.txt"}' }];
    expect(tools(itemsOfView(view(unmarked, false)))[2]).toEqual(['delete_file', 'done']);
  });

  it('a run-end message is a notice where the run ended: cancelled, or failed with its message and code', () => {
    const ends = [
      { id: 'u1', role: 'user', content: 'hello' },
      { id: 'run-end-r1', role: 'activity', activityType: 'run-end', content: { outcome: 'failed', code: 'MODEL_ERROR', message: 'demo model failure' } },
      { id: 'u2', role: 'user', content: 'again' },
      { id: 'run-end-r2', role: 'activity', activityType: 'run-end', content: { outcome: 'cancelled' } },
    ];
    expect(itemsOfView(view(ends, false)).map(({ id, kind, tone, text }) => ({ id, kind, tone, text }))).toEqual([
      { id: 'u1', kind: 'user', tone: undefined, text: 'hello' },
      { id: 'run-end-r1', kind: 'notice', tone: 'error', text: 'Run failed: demo model failure (MODEL_ERROR)' },
      { id: 'u2', kind: 'user', tone: undefined, text: 'again' },
      { id: 'run-end-r2', kind: 'notice', tone: 'info', text: 'Run cancelled.' },
    ]);
  });
});
