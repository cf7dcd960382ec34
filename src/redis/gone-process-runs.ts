import type { Event } from '@mastra/core/events';
import type { LeasedRun } from './pubsub/index.js';
import type { BridgeLogger } from '../logger.js';
import type { HolderWatch } from '../threads/thread-lease.js';
import { errorMessage } from '../text.js';
import type { PublishedEvent } from './pubsub/index.js';
import { threadKeyOfTopic } from './thread-runs.js';

export interface InstanceLeases {
  readonly instanceId: string;
  leaseHolders(runs: readonly LeasedRun[]): Promise<Array<string | null | undefined>>;
  goneInstances(instanceIds: readonly string[]): Promise<string[]>;
  reclaimFromGone(instanceId: string, runs: readonly LeasedRun[]): Promise<string[]>;
  publish(topic: string, event: PublishedEvent): Promise<void>;
}

/** How often the heartbeats of the processes running the watched runs are read. */
const CHECK_EVERY_MS = 500;
/** Every this many checks, the holder of each watched run is read again (a run whose end was never read is dropped). */
const RECHECK_HOLDERS_EVERY = 20;
/** Looks a run gets to be found holding its thread's lease before it is left to Mastra's own watch. */
const HOLDER_LOOKS = 10;
/** Mastra's events on a thread's topic after which a run no longer streams. */
const RUN_ENDED = new Set(['run-completed', 'run-failed', 'run-aborted', 'run-discarded', 'run-suspended']);

interface WatchedRun extends LeasedRun {
  /** A Mastra run's thread topic, where its end is published (`received`). */
  topic?: string;
  streamId?: string;
  /** A run without a Mastra run of its own (a workflow's, `whenHolderGone`): what to do when its process is gone. */
  gone?: () => void;
  /** The instance holding its lease, once read. */
  holder?: string;
  looks: number;
}

/**
 * Ends, in every process, the runs of a process that died, within seconds. Mastra finds such a run
 * only when its thread lease lapses (`MASTRA_AGENT_THREAD_LEASE_TTL_MS`, 15 s) and it looks again
 * (up to another lease later); until then followers elsewhere wait on a run that will never go on,
 * and the thread refuses new input. Here each process watches the runs of others on the threads it
 * follows (their registrations, `onReceive`), reads once which process holds each run's lease, and
 * reads those processes' heartbeats every half second, in one command. A process whose heartbeat is
 * gone has its runs' leases let go, and the first process to find each run gone publishes Mastra's
 * own `run-failed` for it on the thread's topic: every process's Mastra ends the run (the thread
 * takes input again), and every feed settles it from storage (`isLostRemoteRun`).
 *
 * @example
 * const gone = new GoneProcessRuns(() => pubsub, logger);
 * new RedisPubSub({ url, onReceive: (topic, event) => gone.received(topic, event) });
 * // at close
 * gone.stop();
 */
export class GoneProcessRuns implements HolderWatch {
  /** Run id → the run, while its end was not read. */
  private readonly runs = new Map<string, WatchedRun>();
  private timer?: NodeJS.Timeout;
  private checks = 0;
  private checking = false;

  constructor(
    private readonly leases: () => InstanceLeases,
    private readonly logger: BridgeLogger,
  ) {}

  /** An event another process published on a topic this one reads: a run registered or ended on a thread. */
  received(topic: string, event: Event): void {
    if (event.type === 'run-registered') this.watch(topic, event);
    else if (RUN_ENDED.has(event.type)) this.runs.delete(event.runId);
  }

  /**
   * A run of another process that Mastra does not run (a workflow's, which holds its thread's lease
   * itself): `gone` is called in this process once its process is found dead; nothing is published
   * for it, as no Mastra run waits on its end. Dropped once the run no longer holds the lease.
   */
  whenHolderGone(key: string, runId: string, gone: () => void): void {
    this.runs.set(runId, { key, owner: runId, gone, looks: 0 });
    this.checkSoon();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.runs.clear();
  }

  private watch(topic: string, event: Event): void {
    const key = threadKeyOfTopic(topic);
    if (key === undefined) return;
    const streamId = (event.data as { streamId?: unknown } | undefined)?.streamId;
    this.runs.set(event.runId, { key, owner: event.runId, topic, ...(typeof streamId === 'string' && { streamId }), looks: 0 });
    this.checkSoon();
  }

  private checkSoon(): void {
    this.timer ??= setInterval(() => void this.check(), CHECK_EVERY_MS);
    this.timer.unref();
  }

  private async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      await this.placeRuns(++this.checks % RECHECK_HOLDERS_EVERY === 0);
      const byHolder = new Map<string, WatchedRun[]>();
      for (const run of this.runs.values()) if (run.holder) byHolder.set(run.holder, [...(byHolder.get(run.holder) ?? []), run]);
      for (const instance of await this.leases().goneInstances([...byHolder.keys()])) await this.endRunsOf(instance, byHolder.get(instance) ?? []);
    } catch (error) {
      // Redis away: the next look tries again (and Mastra's own watch still ends the runs).
      this.logger.debug?.(`Runs of other processes not looked at: ${errorMessage(error)}`);
    } finally {
      this.checking = false;
      if (this.runs.size === 0) this.stop();
    }
  }

  /** Reads who holds the lease of each run not placed yet (or of every run, with `all`); a run that no longer holds it is dropped. */
  private async placeRuns(all: boolean): Promise<void> {
    const leases = this.leases();
    const runs = [...this.runs.values()].filter((run) => all || run.holder === undefined);
    const holders = await leases.leaseHolders(runs);
    runs.forEach((run, i) => {
      const holder = holders[i];
      // Its own, one with no heartbeat, or one that never (or no longer) holds the lease: not watched.
      const drop = holder === leases.instanceId || holder === null || (holder === undefined && (run.holder !== undefined || ++run.looks >= HOLDER_LOOKS));
      if (drop) this.runs.delete(run.owner);
      else if (holder) run.holder = holder;
    });
  }

  private async endRunsOf(instance: string, runs: WatchedRun[]): Promise<void> {
    const first = new Set(await this.leases().reclaimFromGone(instance, runs));
    for (const run of runs) this.runs.delete(run.owner);
    // A workflow's run is settled by each process that watches it; a Mastra run, by the one that found it first.
    for (const run of runs) run.gone?.();
    const ended = runs.filter((run): run is WatchedRun & { topic: string } => run.topic !== undefined && first.has(run.owner));
    if (first.size > 0) this.logger.warn(`Process ${instance} is gone: its runs ${[...first].join(', ')} are ended as lost`);
    await Promise.all(ended.map((run) => this.leases().publish(run.topic, runFailed(run, instance))));
  }
}

/**
 * Mastra's event for a run that failed, as its thread runtime publishes it on the thread's topic
 * (1.71). With the run's stream id, every process's Mastra ends its copy of the run; the error says
 * what Mastra's own lease watch says of such a run, so feeds treat it alike (`isLostRemoteRun`).
 */
function runFailed({ owner: runId, streamId }: WatchedRun, instance: string): PublishedEvent {
  const error = `Thread run ${runId} lost its lease before publishing a terminal event: its process (${instance}) is gone`;
  return { type: 'run-failed', runId, data: { type: 'run-failed', runId, ...(streamId && { streamId }), error } };
}
