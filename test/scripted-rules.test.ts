import { EventType } from '@ag-ui/client';
import { Agent } from '@mastra/core/agent';
import { createStep, createWorkflow } from '@mastra/core/workflows';
import { Memory } from '@mastra/memory';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createScriptedModel } from '../src/demo/index.js';
import { assistantText, ofType, runInput, runStrict, uid, userMessage } from './support/agui.js';
import { useTestBridge } from './support/server.js';

// `createScriptedModel({ rules })` as docs/demo-agent.md "A script of your own" shows it: an agent
// of the user's, its own workflow offered as a tool, driven with no API key over real HTTP through
// @ag-ui/client. Input no rule matches falls through to the demo's script.

/** The user's workflow: two steps, the second's text the result. */
function summarizeWorkflow() {
  const doc = z.object({ doc: z.string() });
  const outline = createStep({
    id: 'outline',
    inputSchema: doc,
    outputSchema: z.object({ points: z.array(z.string()) }),
    execute: async ({ inputData }) => ({ points: inputData.doc.split(' ') }),
  });
  const write = createStep({
    id: 'write',
    inputSchema: z.object({ points: z.array(z.string()) }),
    outputSchema: z.object({ text: z.string() }),
    execute: async ({ inputData }) => ({ text: `${inputData.points.length} points: ${inputData.points.join(', ')}` }),
  });
  return createWorkflow({ id: 'summarize', inputSchema: doc, outputSchema: z.object({ text: z.string() }) })
    .then(outline)
    .then(write)
    .commit();
}

const tb = useTestBridge({
  withDemo: false,
  agents: (storage) => ({
    clerk: new Agent({
      id: 'clerk',
      name: 'Clerk',
      instructions: 'Summarize what the user asks for.',
      memory: new Memory({ storage }),
      workflows: { summarize: summarizeWorkflow() },
      model: createScriptedModel({
        delayMs: 0,
        rules: [
          { when: /^hello/i, say: 'Hello! Ask me to summarize something.' },
          {
            when: /^summarize (.+)$/i,
            call: { tool: 'workflow-summarize', args: (match) => ({ inputData: { doc: match[1] } }) },
            reply: ({ value, failed }, match) => (failed ? `No summary of ${match[1]}.` : `Summary: ${(value as { result: { text: string } }).result.text}`),
          },
        ],
      }),
    }),
  }),
});

const ask = (text: string) =>
  runStrict(`${tb.base}/run`, runInput({ threadId: uid('clerk'), messages: [userMessage(text)], forwardedProps: { agentId: 'clerk' } }));

describe('a scripted model with rules of your own', () => {
  it('calls your workflow as a tool: its progress as an activity, its result the call’s, then the rule’s reply', async () => {
    const run = await ask('summarize tea before noon');
    expect(ofType(run.events, EventType.TOOL_CALL_START).map((e) => e.toolCallName)).toEqual(['workflow-summarize']);
    const args = ofType(run.events, EventType.TOOL_CALL_ARGS)
      .map((e) => e.delta)
      .join('');
    expect(JSON.parse(args)).toEqual({ inputData: { doc: 'tea before noon' } });
    const activity = ofType(run.events, EventType.ACTIVITY_SNAPSHOT).at(-1);
    expect(activity).toMatchObject({ activityType: 'workflow', content: { workflowId: 'summarize' } });
    const [result] = ofType(run.events, EventType.TOOL_CALL_RESULT);
    expect(JSON.parse(result.content)).toMatchObject({ result: { text: '3 points: tea, before, noon' } });
    expect(assistantText(run.events)).toBe('Summary: 3 points: tea, before, noon');
    expect(run.terminal.type).toBe(EventType.RUN_FINISHED);
  });

  it('says a rule’s text; input no rule matches gets the demo’s script', async () => {
    expect(assistantText((await ask('hello there')).events)).toBe('Hello! Ask me to summarize something.');
    expect(assistantText((await ask('what now?')).events)).toBe('Echo: what now?');
  });
});
