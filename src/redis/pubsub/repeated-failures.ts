/** How a failure is to be logged: at `warn` (Redis is away), at `error` (a defect), or not at all (said already). */
export type FailureLevel = 'warn' | 'error' | undefined;

/**
 * What to log of a write that is made again and again (a thread log's appends, a topic's publishes:
 * one per chunk of every run), so that an outage is one line, not one per write:
 *
 * - a failure the caller's `isOutage` recognises (Redis unreachable, closed, offline) is logged at
 *   `warn` when the outage starts, then not again until a write has succeeded since;
 * - any other failure (every one, without `isOutage`) is a defect, logged at `error`: each time, or
 *   with `defects: 'once'` once until a write has succeeded since.
 *
 * @example
 * const failures = new RepeatedFailures(isUnavailable);
 * write().then(() => failures.succeeded(), (error) => {
 *   const level = failures.failed(error);
 *   if (level) logger[level](`append failed: ${String(error)}`);
 * });
 */
export class RepeatedFailures {
  #outage = false;
  #defect = false;

  constructor(
    private readonly isOutage: (error: unknown) => boolean = () => false,
    private readonly defects: 'each' | 'once' = 'each',
  ) {}

  /** A write went through: the next failure starts a new spell, and is logged. */
  succeeded(): void {
    this.#outage = false;
    this.#defect = false;
  }

  /** The level to log this failure at, or `undefined` when this spell was logged already. */
  failed(error: unknown): FailureLevel {
    if (this.isOutage(error)) {
      if (this.#outage) return undefined;
      this.#outage = true;
      return 'warn';
    }
    if (this.defects === 'once' && this.#defect) return undefined;
    this.#defect = true;
    return 'error';
  }
}
