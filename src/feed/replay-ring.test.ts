import { EventType, type Event } from '@ag-ui/core';
import { describe, expect, it } from 'vitest';
import { ReplayRing } from './replay-ring.js';

const event = (n: number): Event => ({ type: EventType.CUSTOM, name: 'n', value: n });
const ids = (entries: Array<{ id: number }> | undefined) => entries?.map((e) => e.id);

/** A ring holding ids `from..to`, pushed in order (it starts right before `from`). */
function filled(capacity: number, from: number, to: number): ReplayRing {
  const ring = new ReplayRing(capacity, from - 1);
  for (let id = from; id <= to; id++) ring.push(id, event(id));
  return ring;
}

describe('ReplayRing', () => {
  it('empty: nothing missed after its start id; any other id is not replayable', () => {
    const ring = new ReplayRing(3, 41);
    expect(ring.since(41)).toEqual([]);
    expect(ring.since(42)).toBeUndefined(); // never handed out
    expect(ring.since(40)).toBeUndefined(); // from before the ring started
    expect(ring.since(0)).toBeUndefined();
  });

  it('below capacity: everything after the id, in order, with the events pushed', () => {
    const ring = filled(5, 1, 3);
    expect(ring.since(0)).toEqual([
      { id: 1, event: event(1) },
      { id: 2, event: event(2) },
      { id: 3, event: event(3) },
    ]);
    expect(ids(ring.since(1))).toEqual([2, 3]);
    expect(ids(ring.since(2))).toEqual([3]);
  });

  it('an id before the start id is not replayable, even with room left in the ring', () => {
    expect(filled(5, 11, 13).since(9)).toBeUndefined();
    expect(ids(filled(5, 11, 13).since(10))).toEqual([11, 12, 13]);
  });

  it('the newest id: nothing missed', () => {
    expect(filled(5, 1, 3).since(3)).toEqual([]);
    expect(filled(3, 1, 10).since(10)).toEqual([]);
  });

  it('an id ahead of the newest is not replayable', () => {
    expect(filled(5, 1, 3).since(4)).toBeUndefined();
    expect(filled(5, 1, 3).since(Number.MAX_SAFE_INTEGER)).toBeUndefined();
  });

  it('after overwriting: replayable from the id just before the oldest kept, not from older ones', () => {
    const ring = filled(3, 1, 5); // keeps 3, 4, 5
    expect(ids(ring.since(2))).toEqual([3, 4, 5]);
    expect(ids(ring.since(4))).toEqual([5]);
    expect(ring.since(1)).toBeUndefined();
    expect(ring.since(0)).toBeUndefined();
  });

  it('wraps around many times and stays ordered', () => {
    const ring = filled(4, 1, 1003);
    expect(ids(ring.since(999))).toEqual([1000, 1001, 1002, 1003]);
    expect(ring.since(998)).toBeUndefined();
    expect(ring.since(1001)?.map((e) => e.event)).toEqual([event(1002), event(1003)]);
  });

  it('capacity 1 keeps the newest event only', () => {
    const ring = filled(1, 1, 2);
    expect(ids(ring.since(1))).toEqual([2]);
    expect(ring.since(0)).toBeUndefined();
    expect(ring.since(2)).toEqual([]);
  });

  it('ids as large as a feed base (16 digits) are exact', () => {
    const base = 1_767_225_600_000_000;
    const ring = filled(3, base, base + 4);
    expect(ids(ring.since(base + 1))).toEqual([base + 2, base + 3, base + 4]);
    expect(ring.since(base)).toBeUndefined();
  });
});
