import { setTimeout as delay } from 'node:timers/promises';
import { inject, injectable } from 'inversify';
import type { ThreadTarget } from '../mastra/index.js';
import { RecoveryGate } from '../threads/recovery-gate.js';
import { threadLeaseKey } from '../threads/thread-lease.js';
import { TOKENS } from '../tokens.js';
import { ALIVE_TTL_MS } from './pubsub/index.js';

/** Whether this process runs the run that holds a thread's lease (the Redis pub/sub knows its own leases), and who holds one. */
export interface LocalLeases {
  holdsLease(key: string): boolean;
  getLeaseOwner(key: string): Promise<string | undefined>;
}

/**
 * How long input waits, at most, for the lease of a holder that did not answer to be let go: its
 * process is found gone once its heartbeat lapses (`GoneProcessRuns`), a few hundred ms after that.
 */
const SILENT_HOLDER_MS = ALIVE_TTL_MS + 2000;
const POLL_MS = 50;

/**
 * Who holds a thread, as the thread control asks it: a run of this process, of another, or none;
 * and what new input does when the holder in another process does not answer. Such a holder has
 * died (or is dying): the input waits until its lease is let go and recovery has adopted what it
 * held (the thread's acknowledged messages a dead run took or never read), so that it goes in
 * after them, in the order they were acknowledged.
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

  /** After a holder elsewhere did not answer: its lease let go (bounded), then the thread's recovery (`RecoveryGate.pass`). */
  async afterSilence(thread: ThreadTarget): Promise<void> {
    const deadline = Date.now() + SILENT_HOLDER_MS;
    while (Date.now() < deadline && (await this.owner(thread)) !== undefined) await delay(POLL_MS);
    await this.gate.pass(thread.threadId);
  }
}
