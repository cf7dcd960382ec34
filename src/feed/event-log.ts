import type { Event } from '@ag-ui/core';

/** An event with the id it carries on the thread's events stream. */
export interface NumberedEvent {
  id: number;
  event: Event;
}

/**
 * Where a log hands out numbered events, in order: `firstId` is the id of `events[0]`, the rest
 * follow. `afterGap`: events before these were lost and cannot be handed out (a shared store
 * trimmed them, or lost them in a restart); `events` may then be empty.
 */
export type NumberedListener = (events: readonly Event[], firstId: number, afterGap?: boolean) => void;

/**
 * One thread's numbered events, as a feed hands them to its clients: ids that name one event
 * forever (decimal integers that only grow per thread), and the recent events kept for replay.
 * A feed gives the log what it translated (`append`) and sends its clients what the log numbers
 * (`onEvents`): in one process that is the same events at once; shared between processes, each
 * run's events are appended by the process that runs it, and every process's feed gets them.
 *
 * @example
 * const log = await logs.open(threadKey);
 * log.onEvents((events, firstId) => send(events, firstId));
 * log.append([runStarted, textStart]); // numbered firstId, firstId + 1
 * log.since(firstId); // [{ id: firstId + 1, event: textStart }]
 * log.close();
 */
export interface ThreadEventLog {
  /**
   * The position just before the first event this log holds: no event's id (ids start right
   * after it), above every id an earlier log of the thread handed out when nothing is shared. A
   * client holding it saw nothing of this log yet.
   */
  readonly baseId: number;
  /** The last id this log has seen (`baseId` while none). */
  readonly lastId: number;
  /** The feed's translated events, to be numbered. */
  append(events: readonly Event[]): void;
  /**
   * Shared logs: what closes Mastra run `runId`, whose process was lost, as every following process
   * works it out; appended by the first only, while the run is open in the log. Else `append`.
   */
  settle?(runId: string, events: readonly Event[]): void;
  /**
   * Shared logs: whether clients of this process follow the thread (from the first client until
   * `close`, or until the feed is kept for other processes' followers only). Followed, the
   * process running a run on the thread writes the run into the log for them.
   */
  setFollowed?(followed: boolean): void;
  /**
   * Shared logs: whether the store they share was out of reach within the last `ms`. A store that
   * restarted empty lost the thread leases too, until their holders take them back: a run found
   * without its lease just after an outage may be alive.
   */
  outageWithin?(ms: number): boolean;
  /** Sets the one listener for numbered events; events the log already holds for an open run are passed to it at once. */
  onEvents(listener: NumberedListener): void;
  /** Exactly the events after `id` (`baseId` or later), or `undefined` when the log cannot vouch for them (gone, or never handed out). */
  since(id: number): NumberedEvent[] | undefined;
  /**
   * Events after `id` that only a shared store still holds (older than this log's `baseId`), up
   * to some id at or after `baseId`; `undefined` when no store holds them all. In one process there is no such store.
   */
  fetch?(id: number): Promise<NumberedEvent[] | undefined>;
  /** The feed is done with it: the next log of the thread starts above everything this one handed out. */
  close(): void;
}

/**
 * Where the feeds get their logs: one binding in the container. The in-process one keeps a bounded
 * ring per followed thread (`InProcessEventLogs`); the Redis one shares one log per thread.
 */
export interface ThreadEventLogs {
  /** Opens the log for a new feed of the thread `key` (agent, resource and thread). */
  open(key: string): Promise<ThreadEventLog>;
  /**
   * Shared logs: `need(key)` asks this process to keep a feed of thread `key` that none of its
   * clients follows: a run of this process streams there, another follows it, and only this one can
   * translate the run. `need` settles once the feed follows the thread. Called once, by the hub.
   */
  onWriterNeeded?(need: (key: string) => Promise<void>): void;
  /** Shared logs: whether a client of some process follows the thread `key` now (a feed kept for `onWriterNeeded` lives while it does). */
  followedElsewhere?(key: string): Promise<boolean>;
}
