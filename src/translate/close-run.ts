import { EventType, type Event } from '@ag-ui/core';

/** The events that give an open run its shape (what `closeRun` reads), not the content streamed inside it. */
const SHAPING = new Set<EventType>([
  EventType.RUN_STARTED,
  EventType.TEXT_MESSAGE_START,
  EventType.TEXT_MESSAGE_END,
  EventType.REASONING_MESSAGE_START,
  EventType.REASONING_END,
  EventType.TOOL_CALL_START,
  EventType.TOOL_CALL_END,
  EventType.STEP_STARTED,
  EventType.STEP_FINISHED,
]);

/**
 * Whether `closeRun` needs the event to close its run: a reader that keeps only these of an open
 * run (a few per message, not one per token) can close it whatever happened to the rest.
 *
 * @example
 * const shape = runEvents.filter(shapesRun);
 * closeRun(shape, { finished: true }); // the same as closeRun(runEvents, …)
 */
export const shapesRun = (event: Event): boolean => SHAPING.has(event.type);

export const isRunEnd = (event: Event): boolean => event.type === EventType.RUN_FINISHED || event.type === EventType.RUN_ERROR;

/** How a run cut short is ended: as finished (its answer is stored) or with an error. */
export type RunEnding = { finished: true } | { error: { code: string; message: string } };

/**
 * The events that close an open run as its translator would have, worked out from the run's own
 * events (its `RUN_STARTED` onwards): the messages, reasoning, tool calls and steps it left open,
 * closed in that order, then its terminal event. For a run whose process was lost, by one that
 * only read its events.
 *
 * @example
 * closeRun([runStarted, textStart, textContent], { error: { code: 'UNAVAILABLE', message: 'lost' } });
 * // [TEXT_MESSAGE_END, RUN_ERROR]
 */
export function closeRun(runEvents: readonly Event[], ending: RunEnding): Event[] {
  const started = runEvents[0];
  if (started?.type !== EventType.RUN_STARTED) return [];
  const texts = new Set<string>();
  const reasonings = new Set<string>();
  const calls = new Set<string>();
  const steps: string[] = [];
  for (const event of runEvents) {
    switch (event.type) {
      case EventType.TEXT_MESSAGE_START:
        texts.add(event.messageId);
        break;
      case EventType.TEXT_MESSAGE_END:
        texts.delete(event.messageId);
        break;
      case EventType.REASONING_MESSAGE_START:
        reasonings.add(event.messageId);
        break;
      case EventType.REASONING_END:
        reasonings.delete(event.messageId);
        break;
      case EventType.TOOL_CALL_START:
        calls.add(event.toolCallId);
        break;
      case EventType.TOOL_CALL_END:
        calls.delete(event.toolCallId);
        break;
      case EventType.STEP_STARTED:
        steps.push(event.stepName);
        break;
      case EventType.STEP_FINISHED: {
        const at = steps.lastIndexOf(event.stepName);
        if (at >= 0) steps.splice(at, 1);
        break;
      }
    }
  }
  const out: Event[] = [];
  for (const messageId of texts) out.push({ type: EventType.TEXT_MESSAGE_END, messageId });
  for (const messageId of reasonings) out.push({ type: EventType.REASONING_MESSAGE_END, messageId }, { type: EventType.REASONING_END, messageId });
  for (const toolCallId of calls) out.push({ type: EventType.TOOL_CALL_END, toolCallId });
  for (let stepName = steps.pop(); stepName !== undefined; stepName = steps.pop()) out.push({ type: EventType.STEP_FINISHED, stepName });
  const { threadId, runId } = started;
  out.push('finished' in ending ? { type: EventType.RUN_FINISHED, threadId, runId } : { type: EventType.RUN_ERROR, ...ending.error });
  return out;
}
