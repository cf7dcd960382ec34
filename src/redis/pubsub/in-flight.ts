/**
 * The work still under way (writes sent, redeliveries scheduled), so that `flush()` can wait for
 * it. Failures are the tracked promise's to log; here they only end the wait.
 *
 * @example
 * const inFlight = new InFlight();
 * inFlight.track(client.xAdd(key, '*', fields).catch(logFailure));
 * await inFlight.drain();
 */
export class InFlight {
  #pending = new Set<Promise<unknown>>();

  track(work: Promise<unknown>): void {
    const tracked: Promise<unknown> = work.then(
      () => this.#pending.delete(tracked),
      () => this.#pending.delete(tracked),
    );
    this.#pending.add(tracked);
  }

  /** Resolves once nothing is pending, including what was added while waiting. */
  async drain(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }
}
