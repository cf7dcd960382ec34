import { EventType, HttpAgent, enforceEvents, transformChunks, verifyEvents, type BaseEvent, type Message, type RunAgentInput } from '@ag-ui/client';
import { lastValueFrom, tap, toArray } from 'rxjs';

let counter = 0;
export const uid = (prefix: string) => `${prefix}-${process.pid}-${Date.now().toString(36)}-${++counter}`;

export interface StrictRun {
  events: BaseEvent[];
  types: string[];
  terminal: BaseEvent;
  /** Warnings the client printed (any is a failure for a well-formed stream). */
  warnings: string[];
}

/** A `RunAgentInput` with defaults, for tests. */
export function runInput(partial: Partial<RunAgentInput> & { messages?: Message[] }): RunAgentInput {
  return {
    threadId: partial.threadId ?? uid('thread'),
    runId: partial.runId ?? uid('run'),
    messages: partial.messages ?? [],
    tools: partial.tools ?? [],
    context: partial.context ?? [],
    state: partial.state ?? {},
    forwardedProps: partial.forwardedProps ?? {},
    ...(partial.resume && { resume: partial.resume }),
  };
}

export const userMessage = (content: string, id = uid('msg')): Message => ({ id, role: 'user', content });

/**
 * Runs `/run` through `@ag-ui/client`'s strict pipeline (enforce → transform → verify), then adds
 * the checks the client lacks: a terminal event comes last and only once, the ids match the
 * request, every result names a started call, and the client printed no warning.
 */
export async function runStrict(url: string, input: RunAgentInput, onEvent?: (e: BaseEvent) => void, agent?: HttpAgent): Promise<StrictRun> {
  const warnings: string[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => warnings.push(args.map(String).join(' '));
  const events: BaseEvent[] = [];
  try {
    await lastValueFrom(
      (agent ?? new HttpAgent({ url })).run(input).pipe(
        enforceEvents(),
        transformChunks(),
        verifyEvents(),
        tap((e) => {
          events.push(e);
          onEvent?.(e);
        }),
        toArray(),
      ),
    );
  } finally {
    console.warn = warn;
  }
  checkRun(events, input);
  if (warnings.length > 0) throw new Error(`client warnings: ${warnings.join(' | ')}`);
  return { events, types: events.map((e) => e.type), terminal: events[events.length - 1], warnings };
}

/**
 * The checks `verifyEvents` does not make, for one run. A result names a call this run started,
 * or one the client holds: in its input's messages, or the call of an interrupt it resumes (a
 * resumed call's result comes alone).
 */
export function checkRun(events: BaseEvent[], input: Pick<RunAgentInput, 'threadId' | 'runId'> & Partial<Pick<RunAgentInput, 'messages' | 'resume'>>): void {
  if (events.length === 0) throw new Error('no events');
  const first = events[0] as BaseEvent & { threadId?: string; runId?: string };
  if (first.type !== EventType.RUN_STARTED) throw new Error(`first event is ${first.type}`);
  if (first.threadId !== input.threadId || first.runId !== input.runId) throw new Error('RUN_STARTED ids do not match the request');
  const terminals = events.filter((e) => e.type === EventType.RUN_FINISHED || e.type === EventType.RUN_ERROR);
  if (terminals.length !== 1 || terminals[0] !== events[events.length - 1]) throw new Error('the terminal event is not last, or not unique');
  const last = events[events.length - 1] as BaseEvent & { threadId?: string; runId?: string };
  if (last.type === EventType.RUN_FINISHED && (last.threadId !== input.threadId || last.runId !== input.runId)) {
    throw new Error('RUN_FINISHED ids do not match the request');
  }
  const held = [
    ...(input.messages ?? []).flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : [])),
    ...(input.resume ?? []).map((r) => r.interruptId.slice(r.interruptId.indexOf('::') + 2)),
  ];
  const started = new Set<string>(held);
  for (const e of events as Array<BaseEvent & { toolCallId?: string }>) {
    if (e.type === EventType.TOOL_CALL_START) started.add(e.toolCallId as string);
    if (e.type === EventType.TOOL_CALL_RESULT && !started.has(e.toolCallId as string)) throw new Error(`result for unknown call ${e.toolCallId}`);
  }
}

/** Concatenated assistant text of a run. */
export function assistantText(events: BaseEvent[]): string {
  return (events as Array<BaseEvent & { delta?: string; messageId?: string; role?: string }>)
    .filter((e) => e.type === EventType.TEXT_MESSAGE_CONTENT)
    .map((e) => e.delta)
    .join('');
}

export function ofType<T extends BaseEvent = BaseEvent & Record<string, any>>(events: BaseEvent[], type: EventType): T[] {
  return events.filter((e) => e.type === type) as T[];
}
