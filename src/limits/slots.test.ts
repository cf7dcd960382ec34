import { describe, expect, it } from 'vitest';
import { Slots } from './slots.js';

describe('Slots', () => {
  it('caps holders per key and in total; a release frees one, once', () => {
    const slots = new Slots({ perKey: 2, total: 3 });
    const a1 = slots.acquire('a');
    const a2 = slots.acquire('a');
    expect(slots.acquire('a')).toBe('perKey');
    const b1 = slots.acquire('b');
    expect(slots.acquire('c')).toBe('total');
    expect(slots.held()).toBe(3);
    if (typeof a1 !== 'function' || typeof a2 !== 'function' || typeof b1 !== 'function') throw new Error('expected slots');
    a1();
    a1();
    expect(slots.held('a')).toBe(1);
    expect(slots.held()).toBe(2);
    expect(typeof slots.acquire('c')).toBe('function');
  });

  it('without caps, anything goes', () => {
    const slots = new Slots({});
    for (let i = 0; i < 1000; i++) expect(typeof slots.acquire('a')).toBe('function');
  });
});
