import { describe, expect, it } from 'vitest';
import { deserialize, serialize } from './codec.js';

const roundTrip = <T>(value: T): T => deserialize(serialize(value)) as T;

describe('codec: what JSON loses comes back', () => {
  it('Dates, nested and inside arrays, at their exact time; an invalid Date stays invalid', () => {
    const at = new Date('2024-05-06T07:08:09.123Z');
    const back = roundTrip({ createdAt: at, nested: { list: [at, { deeper: [new Date(0)] }] }, broken: new Date(Number.NaN) });
    expect(back.createdAt).toBeInstanceOf(Date);
    expect(back.createdAt.getTime()).toBe(at.getTime());
    expect(back.nested.list[0]).toEqual(at);
    expect((back.nested.list[1] as { deeper: Date[] }).deeper[0]).toEqual(new Date(0));
    expect(Number.isNaN(back.broken.getTime())).toBe(true);
    expect(roundTrip(at)).toEqual(at); // at the top level too
  });

  it('an Error keeps its class (built-in ones), name, message, stack, cause chain and own enumerable properties', () => {
    const root = new RangeError('too far');
    const error = Object.assign(new TypeError('bad input', { cause: root }), { code: 'E_BAD', details: { at: new Date(5), tries: [1, 2] } });
    const back = roundTrip({ error }).error;

    expect(back).toBeInstanceOf(TypeError);
    expect(back.name).toBe('TypeError');
    expect(back.message).toBe('bad input');
    expect(back.stack).toBe(error.stack);
    expect(back.cause).toBeInstanceOf(RangeError);
    expect((back.cause as Error).message).toBe('too far');
    expect((back.cause as Error).stack).toBe(root.stack);
    expect(back.code).toBe('E_BAD');
    expect(back.details).toEqual({ at: new Date(5), tries: [1, 2] });
    // As on the original: message, stack and cause are not enumerable, the added properties are.
    expect(Object.keys(back).sort()).toEqual(['code', 'details']);
  });

  it('an Error of a class of its own comes back as an Error with that name; an unserialisable cause is cut, not thrown', () => {
    class QuotaError extends Error {
      override name = 'QuotaError';
      limit = 3;
    }
    const back = roundTrip([new QuotaError('over quota')])[0];
    expect(back).toBeInstanceOf(Error);
    expect(back.name).toBe('QuotaError');
    expect(back.message).toBe('over quota');
    expect(back.limit).toBe(3);

    const loop = new Error('loop');
    loop.cause = loop;
    const cut = roundTrip(loop);
    expect(cut.message).toBe('loop');
    expect(cut.cause).toBeNull();
  });

  it('undefined is dropped from objects and null in arrays, as JSON does; functions too; bigint survives', () => {
    const back = roundTrip({ a: undefined, b: 1, f: () => 1, list: [undefined, 2], big: 12345678901234567890n });
    expect(back).toStrictEqual({ b: 1, list: [null, 2], big: 12345678901234567890n });
  });

  it("a caller's object that owns the tag key is data, not a tag; toJSON is honoured; __proto__ stays a plain key", () => {
    const tricky = { __codec: 'Date', v: 0 };
    expect(roundTrip({ tricky })).toStrictEqual({ tricky });
    expect(roundTrip({ url: new URL('https://example.com/a') })).toStrictEqual({ url: 'https://example.com/a' });

    const hostile = JSON.parse('{"__proto__": {"polluted": true}, "__codec": "x"}') as object;
    const back = roundTrip(Object.assign(new Error('e'), { nested: hostile }));
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(back.nested)).toBe(Object.prototype);
    expect(Object.hasOwn(back.nested, '__proto__')).toBe(true);
  });

  it('a whole event: id, createdAt, data with everything above', () => {
    const event = {
      type: 'stream-part',
      id: 'e-1',
      runId: 'run-1',
      createdAt: new Date(),
      index: 4,
      data: { part: { type: 'error', payload: { error: new Error('model failed') } } },
    };
    const back = roundTrip(event);
    expect(back.createdAt).toEqual(event.createdAt);
    expect(back.data.part.payload.error).toBeInstanceOf(Error);
    expect(back.data.part.payload.error.message).toBe('model failed');
    expect({ ...back, createdAt: 0, data: 0 }).toEqual({ ...event, createdAt: 0, data: 0 });
  });
});

describe('codec: the one-pass encoder writes what the copying one would', () => {
  it('a cycle is cut where it closes, through objects and through an error’s cause', () => {
    const loop: Record<string, unknown> = { name: 'loop' };
    loop.self = loop;
    expect(roundTrip(loop)).toEqual({ name: 'loop', self: null });
    const error = new Error('outer') as Error & { cause?: unknown };
    error.cause = error;
    const back: { error: Error } = roundTrip({ error });
    expect(back.error).toBeInstanceOf(Error);
    expect(back.error.message).toBe('outer');
  });

  it('an object owning the tag key, with undefined and function values, keeps only what JSON keeps', () => {
    const value = { __codec: 'Date', v: 1, gone: undefined, fn: () => 1, at: new Date(5) };
    expect(roundTrip(value)).toEqual({ __codec: 'Date', v: 1, at: new Date(5) });
  });
});
