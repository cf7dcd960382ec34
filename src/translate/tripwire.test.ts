import { describe, expect, it } from 'vitest';
import { trippedStep, tripwireMetadata } from './tripwire.js';

describe('trippedStep', () => {
  it('is the tripwire of the last step that holds one, when the step was tripped', () => {
    const payload = {
      stepResult: { reason: 'tripwire' },
      output: { steps: [{ tripwire: { reason: 'first' } }, {}, { tripwire: { reason: 'blocked', processorId: 'pii' } }, {}] },
    };
    expect(trippedStep(payload)).toEqual({ reason: 'blocked', processorId: 'pii' });
  });

  it('is an empty tripwire when the step says tripped but no step kept why', () => {
    expect(trippedStep({ stepResult: { reason: 'tripwire' }, output: { steps: [{}] } })).toEqual({});
  });

  it('is undefined for a step that was not tripped', () => {
    expect(trippedStep({ stepResult: { reason: 'stop' }, output: { steps: [{ tripwire: { reason: 'stale' } }] } })).toBeUndefined();
    expect(trippedStep({})).toBeUndefined();
  });
});

describe('tripwireMetadata', () => {
  it('names the processor and what it said; nothing without a processor', () => {
    expect(tripwireMetadata({ reason: 'r', processorId: 'pii', metadata: { field: 'email' } })).toEqual({
      processorId: 'pii',
      processorMetadata: { field: 'email' },
    });
    expect(tripwireMetadata({ processorId: 'pii' })).toEqual({ processorId: 'pii' });
    expect(tripwireMetadata({ reason: 'r', metadata: { field: 'email' } })).toBeUndefined();
  });
});
