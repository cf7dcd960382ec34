import type { Agent } from '@mastra/core/agent';

/** A chunk of a Mastra thread subscription (the fields the tests read). */
export type ThreadChunk = { type: string; runId?: string; payload?: any };

export interface ThreadWatch {
  chunks: ThreadChunk[];
  /** Resolves with the first chunk (seen or still to come) that matches; rejects if the subscription ends first. */
  until(predicate: (chunk: ThreadChunk) => boolean): Promise<ThreadChunk>;
  /** The chunk types of one run, in order. */
  of(runId: string): string[];
  /** The text one run streamed. */
  textOf(runId: string): string;
  /** Whether the run's `finish` chunk came. */
  finished(runId: string): boolean;
  close(): void;
}

/**
 * Watches a thread from Mastra's side with `agent.subscribeToThread()`: every chunk of every run on
 * the thread, as Mastra itself produced it. Tests use it to wait, event by event, for what the
 * server did (a run aborted, a run finished) without sleeping.
 *
 * @example
 * const watch = await watchThread(agent, { threadId, resourceId });
 * await watch.until((c) => c.type === 'finish');
 */
export async function watchThread(agent: Agent, { threadId, resourceId = 'default' }: { threadId: string; resourceId?: string }): Promise<ThreadWatch> {
  const subscription = await agent.subscribeToThread({ threadId, resourceId });
  const chunks: ThreadChunk[] = [];
  let waiters: Array<{ predicate: (c: ThreadChunk) => boolean; resolve: (c: ThreadChunk) => void; reject: (e: Error) => void }> = [];
  let ended = false;
  void (async () => {
    try {
      for await (const chunk of subscription.stream as AsyncIterable<ThreadChunk>) {
        chunks.push(chunk);
        waiters = waiters.filter((w) => (w.predicate(chunk) ? (w.resolve(chunk), false) : true));
      }
    } catch {
      // the subscription ends with an error when it is closed
    } finally {
      ended = true;
      for (const w of waiters) w.reject(new Error('the thread subscription ended before the chunk came'));
      waiters = [];
    }
  })();
  const ofRun = (runId: string) => chunks.filter((c) => c.runId === runId);
  return {
    chunks,
    until: (predicate) => {
      const seen = chunks.find(predicate);
      if (seen) return Promise.resolve(seen);
      if (ended) return Promise.reject(new Error('the thread subscription has ended'));
      return new Promise((resolve, reject) => waiters.push({ predicate, resolve, reject }));
    },
    of: (runId) => ofRun(runId).map((c) => c.type),
    textOf: (runId) =>
      ofRun(runId)
        .filter((c) => c.type === 'text-delta')
        .map((c) => c.payload?.text ?? '')
        .join(''),
    finished: (runId) => ofRun(runId).some((c) => c.type === 'finish'),
    close: () => subscription.unsubscribe(),
  };
}
