import { injectable } from 'inversify';

/**
 * Runs the read-then-write sections of one thread one after the other: creating a thread under a
 * given id, merging its metadata, answering a request with an `Idempotency-Key` (under a lock id
 * of its own, `idempotency:<threadId>:<record key>`). One binding in the container; the in-process one is
 * `InProcessThreadLocks` (several processes on one database need a shared one).
 *
 * @example
 * await locks.exclusive(threadId, async () => { if (!(await exists())) await create(); });
 */
export interface ThreadLocks {
  /** Runs `task` after every earlier task for the same thread id has settled; answers what it answers. */
  exclusive<T>(threadId: string, task: () => Promise<T>): Promise<T>;
}

/** Locks held in this process: a promise chain per thread id, dropped when its last task settles. */
@injectable()
export class InProcessThreadLocks implements ThreadLocks {
  private readonly tails = new Map<string, Promise<unknown>>();

  async exclusive<T>(threadId: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(threadId) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => {
      // the next holder waits for this one to end, not to succeed
    });
    this.tails.set(threadId, tail);
    try {
      return await result;
    } finally {
      if (this.tails.get(threadId) === tail) this.tails.delete(threadId);
    }
  }
}
