import { HttpAgent, type BaseEvent, type RunAgentInput } from '@ag-ui/client';
import { checkRun } from './agui.js';

type RunAgentParams = NonNullable<Parameters<HttpAgent['runAgent']>[0]>;

export interface AgentRun {
  events: BaseEvent[];
  types: string[];
  terminal: BaseEvent & Record<string, any>;
  /** What `onRunFinishedEvent` reported (`outcome`, `pendingToolCallIds`, `interrupts`), if the run finished. */
  finished?: { outcome: string; pendingToolCallIds?: string[]; interrupts?: Array<Record<string, any>> };
}

/**
 * Runs `agent.runAgent()` as a real frontend does (the client's own enforce → transform → verify
 * pipeline, its reducer keeping `agent.messages`, its interrupt bookkeeping), then adds the checks
 * the client lacks (`checkRun`) and fails on any client warning.
 */
export async function runAgentStrict(agent: HttpAgent, params: RunAgentParams & { runId: string }): Promise<AgentRun> {
  const warnings: string[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => warnings.push(args.map(String).join(' '));
  const events: BaseEvent[] = [];
  // The calls the client holds before the run: a resumed call's result comes alone.
  const held = [...agent.messages];
  let finished: AgentRun['finished'];
  try {
    await agent.runAgent(params, {
      onEvent: ({ event }) => {
        events.push(event);
      },
      onRunFinishedEvent: (p) => {
        const { outcome, pendingToolCallIds, interrupts } = p as unknown as NonNullable<AgentRun['finished']>;
        finished = { outcome, pendingToolCallIds, interrupts };
      },
    });
  } finally {
    console.warn = warn;
  }
  checkRun(events, { threadId: agent.threadId, runId: params.runId, messages: held, ...(params.resume && { resume: params.resume }) });
  if (warnings.length > 0) throw new Error(`client warnings: ${warnings.join(' | ')}`);
  return { events, types: events.map((e) => e.type), terminal: events[events.length - 1] as AgentRun['terminal'], finished };
}

/** An `HttpAgent` that asks for protobuf frames (the client decodes them by content type). */
export class ProtoAgent extends HttpAgent {
  protected override requestInit(input: RunAgentInput): RequestInit {
    const init = super.requestInit(input);
    return { ...init, headers: { ...(init.headers as Record<string, string>), Accept: 'application/vnd.ag-ui.event+proto' } };
  }
}

/**
 * Parses an SSE body into AG-UI events, frame by frame, as they arrive. Only LF framing is
 * accepted (a CR anywhere fails), and every frame must be `data:` lines holding one JSON event.
 */
export async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<BaseEvent & Record<string, any>> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      if (buffer.includes('\r')) throw new Error('SSE frame with CR framing');
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).replace(/^ /, ''));
        if (data.length > 0) yield JSON.parse(data.join('\n'));
      }
    }
    if (buffer.trim()) throw new Error(`SSE body ended inside a frame: ${JSON.stringify(buffer)}`);
  } finally {
    reader.releaseLock();
  }
}

/** A raw `POST /run` (no AG-UI client), for tests that read the bytes or leave mid-stream. */
export async function postRun(
  url: string,
  input: RunAgentInput,
  init: { accept?: string; signal?: AbortSignal; headers?: Record<string, string> } = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: init.accept ?? 'text/event-stream', ...init.headers },
    body: JSON.stringify(input),
    signal: init.signal,
  });
}
