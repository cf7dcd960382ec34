import { endsRun } from '../translate/chunks.js';
import type { PublishedEvent } from './pubsub/index.js';

/** Mastra's per-thread topics: `agent.thread-stream.<encodeURIComponent(resource \0 thread)>`. */
export const THREAD_TOPIC = 'agent.thread-stream.';

/** Mastra's thread events after which a run of this process is over for good. */
const RUN_OVER = new Set(['run-completed', 'run-failed', 'run-aborted', 'run-discarded']);
/** Those after which it no longer streams here: over, or stopped on an interrupt (it may be resumed). */
const RUN_CLOSED = new Set([...RUN_OVER, 'run-suspended']);
/** How long a run that is over is remembered (`overSince`). */
const OVER_MEMORY_MS = 10 * 60 * 1000;

/**
 * Whether a publish on Mastra's topics stays in this process: a run's chunks (`stream-part` on its
 * thread's topic), but for its end. The running process translates them into the thread's shared
 * log (`RedisEventLogs`), which the others read: no chunk crosses Redis for a follower. Mastra's
 * control events on the topic (a run registered, a signal, an abort…) still go everywhere.
 */
export function keepsRunChunksLocal(topic: string, event: PublishedEvent): boolean {
  if (event.type !== 'stream-part' || !topic.startsWith(THREAD_TOPIC)) return false;
  const part = (event.data as { part?: { type?: unknown } } | undefined)?.part;
  // A run's end still crosses processes, for callers elsewhere that wait on it.
  return !endsRun(part?.type);
}

/** Mastra's key of the thread a topic belongs to (`resource \0 thread`), if it is a thread's topic. */
export function threadKeyOfTopic(topic: string): string | undefined {
  return topic.startsWith(THREAD_TOPIC) ? decodeURIComponent(topic.slice(THREAD_TOPIC.length)) : undefined;
}

/**
 * The threads with a run in this process, told by what it publishes on their topics
 * (`RedisPubSub`'s `onPublish`): a run registers, then completes, fails, is aborted or parks.
 * Whatever starts a run (a `/run`, a signal, an approval, a queued message) registers it there.
 */
export class LocalThreadRuns {
  /** Mastra thread key → the runs registered here and not closed yet. */
  private readonly runs = new Map<string, Set<string>>();
  /** Run id → when it was over (ms), oldest first. */
  private readonly overAt = new Map<string, number>();
  private readonly listeners: Array<(threadKey: string) => Promise<void>> = [];

  /**
   * Called on every publish of this process (every chunk): two comparisons unless it is a run's
   * registration or end. A registration answers a promise that settles once every listener is
   * done: Mastra starts streaming the run only after its registration is published.
   */
  published(topic: string, event: PublishedEvent): Promise<void> | undefined {
    const registered = event.type === 'run-registered';
    if (!registered && !RUN_CLOSED.has(event.type)) return undefined;
    const threadKey = threadKeyOfTopic(topic);
    if (threadKey === undefined) return undefined;
    const runs = this.runs.get(threadKey) ?? new Set<string>();
    if (registered) {
      runs.add(event.runId);
      this.runs.set(threadKey, runs);
      return Promise.all(this.listeners.map((listener) => listener(threadKey))).then(() => undefined);
    }
    if (runs.delete(event.runId) && runs.size === 0) this.runs.delete(threadKey);
    if (RUN_OVER.has(event.type)) this.over(event.runId);
    return undefined;
  }

  /** When run `runId` of this process was over (completed, failed, aborted, discarded), if it was, within the last 10 minutes. */
  overSince(runId: string): number | undefined {
    return this.overAt.get(runId);
  }

  private over(runId: string): void {
    const now = Date.now();
    this.overAt.set(runId, now);
    // Oldest first (insertion order): forgotten once past the memory.
    for (const [id, at] of this.overAt) {
      if (now - at < OVER_MEMORY_MS) break;
      this.overAt.delete(id);
    }
  }

  running(threadKey: string): boolean {
    return this.runs.has(threadKey);
  }

  threads(): string[] {
    return [...this.runs.keys()];
  }

  /** Called whenever a run of this process registers on a thread; the run streams once the promise it answers settles (it must not reject). */
  onRun(listener: (threadKey: string) => Promise<void>): void {
    this.listeners.push(listener);
  }
}
