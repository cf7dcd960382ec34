/**
 * `mastra-agui-bridge/demo`: the demo agent the standalone server runs (docs/demo-agent.md). Its
 * scripted model needs no API key and walks every path of the bridge (streamed text, reasoning,
 * server tools, approvals, background tasks), which makes it a fixture for tests, docs and trying
 * the bridge out. It is not part of the bridge's API, hence its own entry.
 *
 * @example
 * import { createDemoAgent } from 'mastra-agui-bridge/demo';
 *
 * const demo = createDemoAgent({ storage, delayMs: 0 });
 * const mastra = new Mastra({ agents: { demo }, workflows: { [DEMO_WORKFLOW_ID]: createDemoWorkflow() }, storage });
 *
 * // Or the scripted model alone, behind an agent of your own (tests with no API key):
 * const mine = new Agent({ id: 'support', name: 'Support', instructions: '…', model: createScriptedModel({ delayMs: 0 }) });
 *
 * @module
 */
import type { MastraModelConfig } from '@mastra/core/llm';
import { createScriptedModel as scriptedModel, type ScriptedModelOptions, type ScriptRule, type ToolArgs, type ToolOutcome } from './scripted-model.js';

export { createDemoAgent, type DemoAgentOptions } from './agent.js';
export type { ScriptedModelOptions, ScriptRule, ToolArgs, ToolOutcome };

/**
 * The demo's scripted model: a real `LanguageModelV2` that answers from the script in
 * docs/demo-agent.md, streamed or whole (`generate()`), with no API key. Typed as the model an
 * `Agent` takes, so that it compiles under any of your compiler options.
 *
 * @example
 * const support = new Agent({ id: 'support', name: 'Support', instructions: 'Help the user.', model: createScriptedModel({ delayMs: 0 }) });
 * const { text } = await support.generate('hello there'); // 'Echo: hello there'
 *
 * // Your own script, tried first: call your workflow (offered to the model as `workflow-<key>`), then report its result.
 * const model = createScriptedModel({
 *   rules: [{ when: /^summarize (.+)/i, call: { tool: 'workflow-summarize', args: (m) => ({ inputData: { doc: m[1] } }) }, reply: ({ value }) => `Done: ${JSON.stringify(value)}` }],
 * });
 */
export const createScriptedModel: (options?: ScriptedModelOptions) => MastraModelConfig = scriptedModel;
export { createDemoWorkflow, DEMO_WORKFLOW_ID, type DemoWorkflowOptions } from './workflow.js';
