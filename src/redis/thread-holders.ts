import { inject, injectable } from 'inversify';
import type { ThreadTarget } from '../mastra/index.js';
import { RecoveryGate } from '../threads/recovery-gate.js';
import { threadLeaseKey } from '../threads/thread-lease.js';
import { TOKENS } from '../tokens.js';

/** Whether this process runs the run that holds a thread's lease (the Redis pub/sub knows its own leases), and who holds one. */
export interface LocalLeases {
  holdsLease(key: string): boolean;
  getLeaseOwner(key: string): Promise<string | undefined>;
}

/**
 * Who holds a thread (a run of this process, of another, or none), and what new input does when a
 * holder elsewhere does not answer. That holder has died or is dying: if the thread has
 * acknowledged messages no run answered, the input waits until the lease is let go and recovery has
 * adopted them (`RecoveryGate.pass`), so that it goes in after them, in their order.
 *
 * @example
 * const answer = await askHolder(request);
 * if (answer === undefined) await holders.afterSilence(thread); // then send here
 */
@injectable()
export class ThreadHolders {
  constructor(
    @inject(TOKENS.Leases) private readonly leases: LocalLeases,
    @inject(RecoveryGate) private readonly gate: RecoveryGate,
  ) {}

  /** Whether a run of this process holds the thread. */
  here(thread: ThreadTarget): boolean {
    return this.leases.holdsLease(threadLeaseKey(thread));
  }

  /** The run holding the thread, in any process; `undefined` when idle. */
  owner(thread: ThreadTarget): Promise<string | undefined> {
    return this.leases.getLeaseOwner(threadLeaseKey(thread));
  }

  /** After a holder elsewhere did not answer: the thread's recovery, which waits for that holder's lease where it has something to adopt. */
  afterSilence(thread: ThreadTarget): Promise<void> {
    return this.gate.pass(thread.threadId, { holderSilent: true });
  }
}
