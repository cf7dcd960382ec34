/**
 * A run that did not finish as asked (cancelled, or failed) says so in an `activity` message of
 * its own, just before its terminal event: the terminal event is not a message, so without it a
 * client that loads the thread later (a new tab, a reload) would show an unanswered question where
 * the live one showed "Run failed". The thread keeps it (`ThreadStore.rememberRunEnd`) and history
 * gives it back where the run ended (`placeRunEnds`).
 *
 * @example
 * runEndActivity('run-1', { outcome: 'failed', code: 'RUN_FAILED', message: 'model error' });
 * // { type: 'ACTIVITY_SNAPSHOT', messageId: 'run-end-run-1', activityType: 'run-end', content: { outcome: 'failed', … } }
 */
import { EventType, type ActivityMessage, type ActivitySnapshotEvent, type Event, type Message } from '@ag-ui/core';

export const RUN_END_ACTIVITY = 'run-end';

/** What a run-end activity says: how the run ended, and for a failure its `RUN_ERROR`'s code and message. */
export interface RunEndContent {
  outcome: 'cancelled' | 'failed';
  code?: string;
  message?: string;
}

/** A run end as the thread keeps it: what it said, when (ms since the epoch), and the stored input its run answered: what places it in history. */
export interface StoredRunEnd {
  content: RunEndContent;
  at: number;
  after?: string;
}

/** The run-end message of the run clients know as `runId` (`clientRunIdOf`): one id for its `/run`, its thread stream and history (a resumed run keeps its first id). */
function runEndId(runId: string): string {
  return `run-end-${runId}`;
}

export function runEndActivity(runId: string, content: RunEndContent): ActivitySnapshotEvent {
  return { type: EventType.ACTIVITY_SNAPSHOT, messageId: runEndId(runId), activityType: RUN_END_ACTIVITY, content: { ...content } };
}

/** The run-end activity in a batch of events, if it holds one: what must be kept before the batch goes out. */
export function runEndIn(events: readonly Event[]): ActivitySnapshotEvent | undefined {
  return events.find((e): e is ActivitySnapshotEvent => e.type === EventType.ACTIVITY_SNAPSHOT && e.activityType === RUN_END_ACTIVITY);
}

/**
 * `events` with their run-end message saying what the thread kept for it, when `history` holds
 * it: a thread's stream cannot read all a `/run` reads (the reason of a guardrail that blocked a
 * step), and history is what every tab ends up showing.
 */
export function withStoredRunEnd(events: Event[], history: readonly Message[]): Event[] {
  const end = runEndIn(events);
  const stored = end && history.find((m): m is ActivityMessage => m.id === end.messageId && m.role === 'activity');
  return stored ? events.map((e) => (e === end ? { ...end, content: { ...stored.content } } : e)) : events;
}

/** A stored row of the thread, as history turned it into AG-UI messages. */
export interface PlacedRow {
  id: string;
  role: string;
  createdAt: Date;
  messages: Message[];
}

/**
 * Puts each kept run end into the thread's messages where its run ended: after the input it
 * answered (`after`) and the answer stored after that input; without one (or with its input not
 * among `rows`), after the last row created before the end. `rows` are the stored rows in order.
 *
 * @example
 * placeRunEnds([{ id: 'u1', role: 'user', … }, { id: 'u2', role: 'user', … }], { 'run-end-r1': { content, at, after: 'u1' } });
 * // [u1's messages, { id: 'run-end-r1', role: 'activity', activityType: 'run-end', content }, u2's messages]
 */
export function placeRunEnds(rows: readonly PlacedRow[], ends: Readonly<Record<string, StoredRunEnd>>): Message[] {
  const index = new Map(rows.map((row, i) => [row.id, i]));
  // The row each end follows (-1: before every row), in the order the ends were kept.
  const following = new Map<number, Message[]>();
  for (const [id, end] of Object.entries(ends).sort(([, a], [, b]) => a.at - b.at)) {
    const anchor = end.after === undefined ? undefined : index.get(end.after);
    const row = anchor === undefined ? lastBefore(rows, end.at) : answerEnd(rows, anchor);
    following.set(row, [...(following.get(row) ?? []), runEndMessage(id, end)]);
  }
  return [...(following.get(-1) ?? []), ...rows.flatMap((row, i) => [...row.messages, ...(following.get(i) ?? [])])];
}

/** The last row created at or before `at` (ms), -1 for none. */
function lastBefore(rows: readonly PlacedRow[], at: number): number {
  return rows.findLastIndex((row) => new Date(row.createdAt).getTime() <= at);
}

/** The last row of the answer to input row `input`: the assistant rows right after it. */
function answerEnd(rows: readonly PlacedRow[], input: number): number {
  let last = input;
  while (rows[last + 1]?.role === 'assistant') last++;
  return last;
}

function runEndMessage(id: string, { content }: StoredRunEnd): ActivityMessage {
  return { id, role: 'activity', activityType: RUN_END_ACTIVITY, content: { ...content } };
}
