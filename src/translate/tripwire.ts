/** What a processor's `abort` says: Mastra's `tripwire` chunk payload, also kept on a tripped step. */
export interface Tripwire {
  reason?: string;
  processorId?: string;
  metadata?: unknown;
}

/** A `finish` chunk's payload, as far as a tripped step shows in it. */
interface FinishPayload {
  stepResult?: { reason?: unknown };
  output?: { steps?: ReadonlyArray<{ tripwire?: Tripwire }> };
}

/**
 * The tripwire of a `finish` whose step a processor tripped (`stepResult.reason: 'tripwire'`), if
 * any: a step processor that blocks the answer ends the run with a plain `finish`.
 *
 * @example
 * trippedStep({ stepResult: { reason: 'stop' } }); // undefined
 */
export function trippedStep(payload: FinishPayload): Tripwire | undefined {
  if (payload.stepResult?.reason !== 'tripwire') return undefined;
  return payload.output?.steps?.findLast((step) => step.tripwire !== undefined)?.tripwire ?? {};
}

/** What `RUN_ERROR TRIPWIRE` carries in `metadata`: the processor and what it said. */
export function tripwireMetadata({ processorId, metadata }: Tripwire): Record<string, unknown> | undefined {
  return processorId === undefined ? undefined : { processorId, ...(metadata !== undefined && { processorMetadata: metadata }) };
}
