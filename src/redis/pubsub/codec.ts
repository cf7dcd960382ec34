/**
 * JSON text for values that cross Redis, keeping what plain JSON loses: `Date`s come back as
 * `Date`s and `Error`s as `Error`s (name, message, stack, cause and own enumerable properties) at
 * any depth, and a `bigint` survives (JSON would throw). Otherwise JSON's rules hold: `undefined`,
 * functions and symbols are dropped from objects (`null` in arrays), `toJSON()` is honoured, class
 * instances arrive as plain objects, a cycle is cut (`null` where it closes).
 *
 * Special values travel as tagged objects (`{ "__codec": "Date", "v": 1700000000000 }`); a caller's
 * object owning a `__codec` key is sent as a list of its entries, so no data passes for a tag.
 */

const TAG = '__codec';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The tagged shapes on the wire. */
type Tagged =
  | { [TAG]: 'Date'; v: number | null }
  | { [TAG]: 'BigInt'; v: string }
  | { [TAG]: 'Object'; v: Array<[string, Json]> }
  | { [TAG]: 'Error'; name: string; message: string; stack?: string; cause?: Json; props: Json };

/**
 * Encodes a value as JSON text, with its `Date`s and `Error`s tagged.
 *
 * @example
 * const text = serialize({ at: new Date(0), failure: new TypeError('bad', { cause: 'x' }) });
 * const back = deserialize(text) as { at: Date; failure: TypeError };
 * back.at.getTime(); // 0
 * back.failure instanceof TypeError; // true
 */
export function serialize(value: unknown): string {
  try {
    // One pass, no copy (every chunk of a run is encoded here): JSON walks it, `tagSpecial` tags.
    return JSON.stringify(value, tagSpecial) ?? 'null';
  } catch (error) {
    // A cycle (JSON's TypeError; through an error's tag, which is a new object each time, a
    // RangeError): the copying encoder cuts it where it closes.
    if (!(error instanceof TypeError || error instanceof RangeError)) throw error;
    return JSON.stringify(toJson(value, '', new Set())) ?? 'null';
  }
}

/**
 * `JSON.stringify`'s replacer: the same tags as `toJson`. `this[key]` is the value before its
 * `toJSON()`, which is how a `Date` is still seen as one.
 */
function tagSpecial(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const original = this[key];
  if (original instanceof Date) return { [TAG]: 'Date', v: Number.isNaN(original.getTime()) ? null : original.getTime() };
  if (typeof value === 'bigint') return { [TAG]: 'BigInt', v: value.toString() };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  if (value instanceof Error) return errorFields(value);
  if (Object.hasOwn(value, TAG)) return { [TAG]: 'Object', v: Object.entries(value).filter(([, v]) => isJsonValue(v)) };
  return value;
}

/** Whether JSON keeps an object property holding `v` (it drops undefined, functions and symbols). */
const isJsonValue = (v: unknown) => v !== undefined && typeof v !== 'function' && typeof v !== 'symbol';

/** An error as its tag, its fields left for the replacer to encode as it walks on. */
function errorFields(error: Error): Record<string, unknown> {
  const props: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(error)) if (!ERROR_FIELDS.has(k)) props[k] = v;
  const tagged: Record<string, unknown> = { [TAG]: 'Error', name: String(error.name), message: String(error.message), props };
  if (typeof error.stack === 'string') tagged.stack = error.stack;
  if (Object.hasOwn(error, 'cause')) tagged.cause = error.cause;
  return tagged;
}

/**
 * Decodes what {@link serialize} wrote.
 *
 * @example
 * const event = deserialize(text) as { createdAt: Date };
 */
export function deserialize(text: string): unknown {
  return JSON.parse(text, revive);
}

/** `undefined` means "leave it out", as JSON.stringify does with such values in objects. */
function toJson(value: unknown, key: string, ancestors: Set<object>): Json | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'bigint':
      return { [TAG]: 'BigInt', v: value.toString() } satisfies Tagged;
    case 'object':
      return value === null ? null : objectToJson(value, key, ancestors);
    default:
      return undefined; // undefined, function, symbol
  }
}

function objectToJson(value: object, key: string, ancestors: Set<object>): Json {
  if (ancestors.has(value)) return null;
  if (value instanceof Date) return { [TAG]: 'Date', v: Number.isNaN(value.getTime()) ? null : value.getTime() } satisfies Tagged;
  ancestors.add(value);
  try {
    if (value instanceof Error) return errorToJson(value, ancestors);
    if (Array.isArray(value)) return value.map((item, i) => toJson(item, String(i), ancestors) ?? null);
    const withToJson = value as { toJSON?: (key: string) => unknown };
    if (typeof withToJson.toJSON === 'function') return toJson(withToJson.toJSON(key), key, ancestors) ?? null;
    return recordToJson(value, ancestors);
  } finally {
    ancestors.delete(value);
  }
}

/** Own enumerable properties, the keys JSON.stringify would write. */
function recordToJson(value: object, ancestors: Set<object>, skip: ReadonlySet<string> = NO_KEYS): Json {
  const entries: Array<[string, Json]> = [];
  for (const [k, v] of Object.entries(value)) {
    if (skip.has(k)) continue;
    const json = toJson(v, k, ancestors);
    if (json !== undefined) entries.push([k, json]);
  }
  if (entries.some(([k]) => k === TAG)) return { [TAG]: 'Object', v: entries } satisfies Tagged;
  return Object.fromEntries(entries);
}

const NO_KEYS: ReadonlySet<string> = new Set();
/** Carried in fields of their own, whether or not they are enumerable on the error. */
const ERROR_FIELDS: ReadonlySet<string> = new Set(['name', 'message', 'stack', 'cause']);

function errorToJson(error: Error, ancestors: Set<object>): Json {
  const tagged: Tagged = {
    [TAG]: 'Error',
    name: String(error.name),
    message: String(error.message),
    props: recordToJson(error, ancestors, ERROR_FIELDS),
  };
  if (typeof error.stack === 'string') tagged.stack = error.stack;
  if (Object.hasOwn(error, 'cause')) {
    const cause = toJson(error.cause, 'cause', ancestors);
    if (cause !== undefined) tagged.cause = cause;
  }
  return tagged;
}

/** JSON.parse's reviver runs innermost first: a tag's fields are already decoded when it is read. */
function revive(this: unknown, _key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, TAG)) return value;
  const tagged = value as Tagged;
  switch (tagged[TAG]) {
    case 'Date':
      return new Date(tagged.v ?? Number.NaN);
    case 'BigInt':
      return BigInt(tagged.v);
    case 'Object':
      return Object.fromEntries(tagged.v);
    case 'Error':
      return toError(tagged);
    default:
      return value; // not one of ours: left as it came
  }
}

/** The built-in error classes, rebuilt as themselves; any other name is an `Error` carrying that name. */
const ERROR_CLASSES: Record<string, ErrorConstructor> = {
  Error,
  TypeError,
  RangeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
};

function toError(tagged: Extract<Tagged, { [TAG]: 'Error' }>): Error {
  const ErrorClass = Object.hasOwn(ERROR_CLASSES, tagged.name) ? ERROR_CLASSES[tagged.name] : Error;
  const error = 'cause' in tagged ? new ErrorClass(tagged.message, { cause: tagged.cause }) : new ErrorClass(tagged.message);
  if (error.name !== tagged.name) error.name = tagged.name;
  // The sender's stack, not one of this decoder's; not enumerable, as on a thrown error.
  if (tagged.stack === undefined) delete (error as { stack?: string }).stack;
  else Object.defineProperty(error, 'stack', { value: tagged.stack, writable: true, configurable: true, enumerable: false });
  // defineProperty, not assignment: a `__proto__` key must stay data, never reach the prototype.
  for (const [k, v] of Object.entries(tagged.props as Record<string, unknown>)) {
    Object.defineProperty(error, k, { value: v, writable: true, configurable: true, enumerable: true });
  }
  return error;
}
