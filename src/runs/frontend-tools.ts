import type { Tool } from '@ag-ui/core';
import { frontendTool } from '../mastra/index.js';
import type { LevelGauge } from '../observability/metrics.js';
import type { ToolProxy } from './tool-proxy.js';

/** The toolset name under which proxied frontend tools are passed to Mastra. */
const FRONTEND_TOOLSET = 'agui-frontend';

/** The run a proxied call belongs to, and who may answer it. */
export interface ProxiedRun {
  runId: string;
  resourceId: string;
  proxy: ToolProxy;
  signal: AbortSignal;
  /** Counts the calls waiting for their result (a metric), whichever proxy holds them. */
  waiting?: LevelGauge;
}

/**
 * AG-UI tools (`RunAgentInput.tools`) as options for `agent.stream()`. Mastra strips `execute`
 * from `clientTools` (they run in the browser and end the loop), so proxied tools go in as a
 * toolset whose `execute` waits for the client's answer; returned tools go in as client tools.
 */
export function frontendToolOptions(tools: Tool[], run: ProxiedRun, mode: 'proxy' | 'return') {
  const converted = Object.fromEntries(tools.map((tool) => [tool.name, toMastraTool(tool, mode === 'proxy' ? run : undefined)]));
  return mode === 'proxy' ? { toolsets: { [FRONTEND_TOOLSET]: converted } } : { clientTools: converted };
}

function toMastraTool(tool: Tool, proxied: ProxiedRun | undefined) {
  if (!proxied) return frontendTool(tool);
  return frontendTool(tool, async (_input, ctx) => {
    const toolCallId = ctx?.agent?.toolCallId;
    if (!toolCallId) throw new Error(`Frontend tool ${tool.name} was called without a tool call id`);
    proxied.waiting?.inc();
    let answer;
    try {
      answer = await proxied.proxy.wait(proxied.runId, toolCallId, tool.name, proxied.signal, proxied.resourceId);
    } finally {
      proxied.waiting?.dec();
    }
    if (answer.isError) throw new Error(typeof answer.content === 'string' ? answer.content : JSON.stringify(answer.content));
    return answer.content;
  });
}
