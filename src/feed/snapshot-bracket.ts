import { EventType, type Event, type Interrupt, type Message } from '@ag-ui/core';
import type { AgentState } from '../state/working-memory.js';

/**
 * A run that holds what is stored: the history, and the agent state when the thread has one.
 *
 * @example
 * snapshotBracket(threadId, `snapshot-${randomUUID()}`, history, state) // RUN_STARTED, MESSAGES_SNAPSHOT, STATE_SNAPSHOT, RUN_FINISHED
 */
export function snapshotBracket(threadId: string, runId: string, messages: Message[], state: AgentState | undefined, interrupts: Interrupt[] = []): Event[] {
  const [first, ...rest] = interrupts;
  return [
    { type: EventType.RUN_STARTED, threadId, runId },
    { type: EventType.MESSAGES_SNAPSHOT, messages },
    ...(state === undefined ? [] : [{ type: EventType.STATE_SNAPSHOT, snapshot: state } satisfies Event]),
    { type: EventType.RUN_FINISHED, threadId, runId, ...(first && { outcome: { type: 'interrupt' as const, interrupts: [first, ...rest] } }) },
  ];
}
