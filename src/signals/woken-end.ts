import { outputFinished, type OnWake } from '../mastra/index.js';
import type { RunEnd, RunIdentity, RunTracker } from '../observability/run-tracker.js';
import { statusOutcome } from '../observability/metrics.js';
import { wokenRunFailure } from '../translate/failure.js';

type Woken = Parameters<OnWake>[0];
type WokenEnd = Pick<RunEnd, 'outcome' | 'error'>;

/**
 * Tracks a run Mastra streams itself (one a signal woke, a recovery's): its span, metrics and
 * webhook end once its output settles. Answers that end: a guardrail's stop is a failure (its
 * followers saw `RUN_ERROR TRIPWIRE`) whatever status Mastra gives it, and a failure says why.
 */
export function trackWoken(tracker: RunTracker, identity: Omit<RunIdentity, 'runId' | 'inputId'>, { runId, output, signalId }: Woken): Promise<WokenEnd> {
  const tracked = tracker.start({ ...identity, runId, inputId: signalId });
  const end = outputFinished(output).then(
    () => wokenEnd(output),
    (error: unknown) => ({ outcome: 'error' as const, error: wokenRunFailure({ error }) }),
  );
  void end.then((ended) => tracked.endWith(ended));
  return end;
}

/** How a run Mastra streamed itself ended, from its output once it settled. */
export function wokenEnd(output: { status: string; tripwire?: unknown; error?: unknown }): WokenEnd {
  const outcome = output.tripwire ? 'error' : statusOutcome(output.status);
  return { outcome, ...(outcome === 'error' && { error: wokenRunFailure(output) }) };
}
