import { EventType, HttpAgent, type ResumeEntry } from '@ag-ui/client';
import { describe, expect, it } from 'vitest';
import { assistantText, ofType, runInput, uid, userMessage } from './support/agui.js';
import { runAgentStrict } from './support/run.js';
import { http, useTestBridge } from './support/server.js';

// Tool approval on POST /run: the interrupt outcome, then `resume` in the next run. HttpAgent
// itself refuses a next run that does not answer every pending interrupt.

const tb = useTestBridge();

/** Runs 'delete notes.txt' on a fresh thread up to its interrupt. */
async function interrupted() {
  const agent = new HttpAgent({ url: `${tb.base}/run`, threadId: uid('thread') });
  agent.addMessage(userMessage('delete notes.txt'));
  const run = await runAgentStrict(agent, { runId: uid('run') });
  const [start] = ofType(run.events, EventType.TOOL_CALL_START);
  return { agent, run, toolCallId: start.toolCallId as string };
}

/** The call as the client holds it after the runs: its arguments must have been streamed once. */
function clientCall(agent: HttpAgent, toolCallId: string) {
  const owners = agent.messages.filter((m) => m.role === 'assistant' && m.toolCalls?.some((c) => c.id === toolCallId));
  expect(owners).toHaveLength(1);
  const owner = owners[0] as { toolCalls: Array<{ id: string; function: { name: string; arguments: string } }> };
  return owner.toolCalls.find((c) => c.id === toolCallId)!;
}

describe('tool approval', () => {
  it('ends the run with one interrupt for the call that needs approval', async () => {
    const { agent, run, toolCallId } = await interrupted();

    expect(run.terminal.type).toBe(EventType.RUN_FINISHED);
    expect(run.terminal.outcome.type).toBe('interrupt');
    const interrupts = run.terminal.outcome.interrupts as Array<Record<string, any>>;
    expect(interrupts).toHaveLength(1);
    expect(interrupts[0]).toMatchObject({ id: expect.any(String), toolCallId, reason: expect.any(String) });
    expect(interrupts[0].responseSchema).toMatchObject({ type: 'object', properties: { approved: { type: 'boolean' } } });
    expect(ofType(run.events, EventType.TOOL_CALL_RESULT)).toHaveLength(0);
    expect(run.finished?.outcome).toBe('interrupt');
    expect(agent.pendingInterrupts.map((i) => i.id)).toEqual([interrupts[0].id]);
    // The client refuses to go on without answering it.
    await expect(agent.runAgent({ runId: uid('run') })).rejects.toThrow(/pending interrupt/);
  });

  it('runs the call when the resume approves it', async () => {
    const { agent, toolCallId } = await interrupted();
    const [interrupt] = agent.pendingInterrupts;
    const resume: ResumeEntry[] = [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }];
    const run = await runAgentStrict(agent, { runId: uid('run'), resume });

    const results = ofType(run.events, EventType.TOOL_CALL_RESULT);
    expect(results).toHaveLength(1);
    expect(results[0].toolCallId).toBe(toolCallId);
    expect(JSON.parse(results[0].content)).toEqual({ deleted: 'notes.txt' });
    // Every follower and a reloaded page can tell the call was approved, not only the tab that clicked.
    expect(results[0].metadata).toEqual({ approval: 'approved' });
    expect(agent.messages.find((m) => m.role === 'tool')?.metadata).toEqual({ approval: 'approved' });
    const history = await http(`${tb.base}/threads/${agent.threadId}/messages?resourceId=default&format=agui`);
    expect(history.body.filter((m: { role: string }) => m.role === 'tool')).toEqual([
      { id: `tool-result-${toolCallId}`, role: 'tool', toolCallId, content: results[0].content, metadata: { approval: 'approved' } },
    ]);
    expect(assistantText(run.events)).toMatch(/^Deleted as requested/);
    expect(run.terminal.type).toBe(EventType.RUN_FINISHED);
    expect(run.terminal).not.toHaveProperty('outcome.type', 'interrupt');
    expect(agent.pendingInterrupts).toEqual([]);
    // The resumed run re-announces the call without re-sending its arguments, which the client's
    // reducer would append to the copy it already holds.
    expect(JSON.parse(clientCall(agent, toolCallId).function.arguments)).toEqual({ path: 'notes.txt' });
  });

  const declines: Array<[string, (id: string) => ResumeEntry, RegExp]> = [
    ['cancelled', (id) => ({ interruptId: id, status: 'cancelled' }), /^The call to delete_file was declined\.$/],
    [
      'resolved with approved: false and no reason',
      (id) => ({ interruptId: id, status: 'resolved', payload: { approved: false } }),
      /^The call to delete_file was declined\.$/,
    ],
    ['resolved with approved: false', (id) => ({ interruptId: id, status: 'resolved', payload: { approved: false, reason: 'no' } }), /declined: no$/],
  ];
  it.each(declines)('declines the call when the resume is %s', async (_name, entry, message) => {
    const { agent, toolCallId } = await interrupted();
    const run = await runAgentStrict(agent, { runId: uid('run'), resume: [entry(agent.pendingInterrupts[0].id)] });

    const results = ofType(run.events, EventType.TOOL_CALL_RESULT);
    expect(results).toHaveLength(1);
    expect(results[0].toolCallId).toBe(toolCallId);
    const content = JSON.parse(results[0].content) as { declined: boolean; message: string; reason?: string };
    expect(content.declined).toBe(true);
    expect(results[0].metadata).toEqual({ approval: 'declined' });
    expect(content.message).toMatch(message);
    // A reason is there only when the user gave one (not Mastra's own sentence for the model).
    expect(content.reason).toBe(content.message.endsWith('.') ? undefined : 'no');
    expect(assistantText(run.events)).toMatch(/^I did not delete the file/);
    expect(run.terminal.type).toBe(EventType.RUN_FINISHED);
    expect(agent.pendingInterrupts).toEqual([]);
    expect(JSON.parse(clientCall(agent, toolCallId).function.arguments)).toEqual({ path: 'notes.txt' });
    // A reloaded page reads the decline from history exactly as the live stream gave it.
    const history = await http(`${tb.base}/threads/${agent.threadId}/messages?resourceId=default&format=agui`);
    expect(history.body.filter((m: { role: string }) => m.role === 'tool')).toEqual([
      { id: `tool-result-${toolCallId}`, role: 'tool', toolCallId, content: results[0].content, metadata: { approval: 'declined' } },
    ]);
  });

  it('refuses a resume of an unknown interrupt with 404 before any stream', async () => {
    const { agent } = await interrupted();
    const [interrupt] = agent.pendingInterrupts;
    const [runId] = interrupt.id.split('::');
    for (const interruptId of [`${runId}::no-such-call`, 'no-such-run::no-such-call', 'not-an-interrupt-id']) {
      const input = runInput({
        threadId: agent.threadId,
        messages: agent.messages,
        resume: [{ interruptId, status: 'resolved', payload: { approved: true } }],
      });
      const res = await http(`${tb.base}/run`, { body: input, headers: { accept: 'text/event-stream' } });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body.code).toBe('RUN_NOT_FOUND');
    }
    // The real interrupt is still waiting and can still be answered.
    const run = await runAgentStrict(agent, { runId: uid('run'), resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] });
    expect(assistantText(run.events)).toMatch(/^Deleted as requested/);
  });
});
