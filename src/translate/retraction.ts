import { EventType, type Event, type Message } from '@ag-ui/core';
import type { MastraDBMessage } from '@mastra/core/memory';
import type { MastraChunk } from './chunks.js';
import { isRunEnd } from './close-run.js';
import { runEndIn } from './run-end.js';
import type { ThreadTarget } from '../mastra/index.js';

/**
 * The step a guardrail blocked after it streamed: Mastra's stored message `messageId` ends with it
 * (Mastra keeps a blocked answer), and `text` is what the step wrote.
 */
export interface BlockedStep {
  messageId: string;
  text: string;
}

type StepContent = ReadonlyArray<{ type?: unknown; text?: unknown }>;
type Steps = ReadonlyArray<{ content?: StepContent }>;
type TrippedFinish = { messageId?: unknown; stepResult?: { reason?: unknown }; output?: { steps?: Steps } };

/** The step a `finish` says an output step processor blocked (`stepResult.reason: 'tripwire'`), if any. */
export function blockedStep(chunk: MastraChunk): BlockedStep | undefined {
  if (chunk.type !== 'finish') return undefined;
  const payload = chunk.payload as TrippedFinish;
  return payload.stepResult?.reason === 'tripwire' ? lastStep(payload.messageId, payload.output?.steps) : undefined;
}

/**
 * The last step of a run a processor stopped, as its `finish` or its output names it: the stored
 * message it wrote into and its text (`ThreadStore.dropBlockedStep` cuts that step if it is stored).
 */
export function lastStep(messageId: unknown, steps: Steps | undefined): BlockedStep | undefined {
  if (typeof messageId !== 'string') return undefined;
  return { messageId, text: textOf(steps?.at(-1)?.content ?? []) };
}

/** The text parts of a step's content (or of a stored message's parts), joined. */
export function textOf(parts: StepContent): string {
  return parts.flatMap((p) => (p.type === 'text' && typeof p.text === 'string' ? [p.text] : [])).join('');
}

/**
 * Retracts what a run showed and Mastra did not keep (a step a processor turned down or blocked):
 * `MESSAGES_SNAPSHOT` with the thread as stored, just before the run's end (its run-end message,
 * `runEndActivity`, and its terminal event). AG-UI's reducer drops the messages a snapshot leaves
 * out, so every client ends holding the history.
 */
export function beforeTerminal(events: Event[], messages: Message[]): Event[] {
  const terminal = events.findLastIndex(isRunEnd);
  // Before the run's end as a whole: its run-end message stays on the client's list, stored or not yet.
  const at = terminal > 0 && runEndIn([events[terminal - 1]]) ? terminal - 1 : terminal;
  const snapshot: Event = { type: EventType.MESSAGES_SNAPSHOT, messages };
  return at < 0 ? [...events, snapshot] : [...events.slice(0, at), snapshot, ...events.slice(at)];
}

/**
 * The step a run was cut in, as the client saw it: the stored message it wrote into
 * (`messageId`, the id the live stream numbered it by) and the reasoning it showed.
 */
export interface CutStep {
  messageId: string;
  reasoning: string[];
}

/**
 * The cut step as history must hold it (live == history): Mastra saves a cut step's text alone,
 * under a new id, so the message it left (`left`, if any) takes the step's id with the step's
 * reasoning before its parts; with none, the reasoning is a message of its own.
 */
export function cutStepMessage(step: CutStep, left: MastraDBMessage | undefined, thread: ThreadTarget): MastraDBMessage {
  const reasoning = step.reasoning.map((text) => ({ type: 'reasoning' as const, reasoning: text, details: [{ type: 'text' as const, text }] }));
  if (left) return { ...left, id: step.messageId, content: { ...left.content, parts: [...reasoning, ...left.content.parts] } };
  return { id: step.messageId, role: 'assistant', createdAt: new Date(), ...thread, content: { format: 2, parts: reasoning } };
}
