import type { Event } from '@ag-ui/core';

/** An event with the id it carries on the thread's events stream. */
export interface NumberedEvent {
  id: number;
  event: Event;
}

/**
 * One thread's numbered events, as a feed hands them to its clients: ids that name one event
 * forever (decimal integers that only grow per thread), and the recent events kept for replay.
 * The feed that opened it is its only writer.
 *
 * @example
 * const log = logs.open(threadKey);
 * const firstId = log.append([runStarted, textStart]); // ids firstId, firstId + 1
 * log.since(firstId); // [{ id: firstId + 1, event: textStart }]
 * log.close();
 */
export interface ThreadEventLog {
  /**
   * The position just before the first event this log numbers: no event's id (ids start right
   * after it), above every id an earlier log of the thread handed out. A client holding it saw
   * nothing of this log yet; an id below it names nothing this log saw.
   */
  readonly baseId: number;
  /** The last id handed out (`baseId` while nothing was). */
  readonly lastId: number;
  /** Numbers `events` in order; answers the first one's id. */
  append(events: readonly Event[]): number;
  /** Exactly the events after `id` (`baseId` or later), or `undefined` when the log cannot vouch for them (gone, or never handed out). */
  since(id: number): NumberedEvent[] | undefined;
  /** The feed is done with it: the next log of the thread starts above everything this one handed out. */
  close(): void;
}

/**
 * Where the feeds get their logs: one binding in the container. The in-process one
 * (`InProcessEventLogs`) keeps a bounded ring per followed thread.
 */
export interface ThreadEventLogs {
  /** Opens the log for a new feed of the thread `key` (agent, resource and thread). */
  open(key: string): ThreadEventLog;
}
