import type { RunEnd } from '../observability/run-tracker.js';
import { statusOutcome } from '../observability/metrics.js';
import { wokenRunFailure } from '../translate/failure.js';

/**
 * How a run Mastra streamed itself (one a signal woke, a recovery's) ended, from its output once it
 * settled: a guardrail's stop is a failure (its followers saw `RUN_ERROR TRIPWIRE`) whatever status
 * Mastra gives it, and a failure says why.
 *
 * @example
 * tracked.endWith(wokenEnd(output));
 */
export function wokenEnd(output: { status: string; tripwire?: unknown; error?: unknown }): Pick<RunEnd, 'outcome' | 'error'> {
  const outcome = output.tripwire ? 'error' : statusOutcome(output.status);
  return { outcome, ...(outcome === 'error' && { error: wokenRunFailure(output) }) };
}
