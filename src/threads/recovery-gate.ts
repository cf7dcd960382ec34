import { injectable } from 'inversify';
import { unavailable } from '../errors.js';

/** How long new input waits for a thread's recovery before it is told to come back (`503`). */
const WAIT_MS = 20_000;
/** The key that holds every thread. */
const ALL = '\0all';

/** What runs before a thread takes new input, with several processes: told whether the thread's holder elsewhere went silent. */
type Adopt = (threadId: string, holderSilent: boolean) => Promise<unknown>;

/**
 * Keeps new input on a thread behind what recovery is answering there, so that a thread's
 * acknowledged messages are answered in the order they were acknowledged, across a crash: a
 * `/run` or a message sent while recovery answers the thread's older ones waits its turn, and past
 * 20 s is answered `503` with `Retry-After`. Threads with nothing to recover pass at once.
 *
 * @example
 * await gate.hold(threadId, recoverThread(entries)); // recovery
 * await gate.pass(threadId);                          // a route, before it sends
 */
@injectable()
export class RecoveryGate {
  private readonly closed = new Map<string, Promise<unknown>>();
  /** With several processes, what runs before a thread takes new input (`adoptFirst`). */
  private adopt?: Adopt;

  /** Holds every thread's new input until `work` (reading what there is to recover) has settled. */
  holdAll<T>(work: Promise<T>): Promise<T> {
    return this.hold(ALL, work);
  }

  /** Holds the thread's new input until `work` has settled. */
  hold<T>(threadId: string, work: Promise<T>): Promise<T> {
    const settled = work.finally(() => {
      if (this.closed.get(threadId) === settled) this.closed.delete(threadId);
    });
    this.closed.set(threadId, settled);
    return settled;
  }

  /**
   * Resolves once the thread may take new input; `503` if its recovery takes longer than 20 s.
   * `holderSilent`: the run holding the thread, in another process, did not answer (it is gone).
   */
  async pass(threadId: string, { holderSilent = false }: { holderSilent?: boolean } = {}): Promise<void> {
    // Every thread waits for the inbox to be read; then only the threads it had entries for.
    if (this.closed.has(ALL)) await this.wait(this.closed.get(ALL));
    if (this.adopt && !this.closed.has(threadId)) {
      this.hold(threadId, this.adopt(threadId, holderSilent)).catch(() => {
        // Storage failed it: the request goes on to storage itself, and meets the same answer.
      });
    }
    await this.wait(this.closed.get(threadId));
  }

  /**
   * With several processes: what to do before a thread takes new input, so that what a dead
   * process acknowledged on it is answered first (`InboxRecovery` adopts the thread's orphans).
   */
  adoptFirst(adopt: Adopt): void {
    this.adopt = adopt;
  }

  private async wait(work: Promise<unknown> | undefined): Promise<void> {
    if (!work) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), WAIT_MS)));
    const outcome = await Promise.race([
      work.then(
        () => 'done',
        () => 'done',
      ),
      late,
    ]).finally(() => clearTimeout(timer));
    if (outcome === 'late') throw unavailable('This thread is still answering messages acknowledged before a restart; try again shortly', 2);
  }
}
