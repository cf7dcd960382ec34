/**
 * How a value, an error and a URL read as text, wherever the bridge writes one down (a tool result,
 * a `RUN_ERROR`, a log line): strings as they are, an error by its message, anything else as JSON,
 * a URL without its password. A leaf: it imports nothing, so every folder (and the scripts) may use it.
 *
 * @example
 * jsonText({ a: 1 });                  // '{"a":1}'
 * errorMessage(new Error('refused'));  // 'refused'
 */

/** Text of a value for a tool result or an error: strings as they are, everything else as JSON. */
export function jsonText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return 'null';
  try {
    // `undefined` for functions and symbols: the content of a tool result must still be a string.
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- what JSON cannot write (a function, a symbol): its own text is all there is
    return JSON.stringify(value) ?? String(value);
  } catch {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a BigInt or a circular object: its default text is all there is
    return String(value);
  }
}

/** The JSON object `text` holds; `undefined` for anything else (other JSON, or no JSON). */
export function jsonObjectOf(text: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The human-readable message of whatever a tool, a model or Mastra threw. */
export function errorMessage(error: unknown): string {
  if (typeof error === 'string') return error;
  if (error && typeof error === 'object') {
    const e = error as { message?: unknown; cause?: { message?: unknown } };
    // Mastra wraps tool failures: the cause carries the tool's own message.
    if (typeof e.cause?.message === 'string' && e.cause.message) return e.cause.message;
    if (typeof e.message === 'string' && e.message) return e.message;
  }
  return jsonText(error);
}

/**
 * A connection URL fit for a log line or an error message: its password masked.
 *
 * @example
 * redactedUrl('postgres://app:s3cret@db:5432/app'); // 'postgres://app:***@db:5432/app'
 */
export function redactedUrl(url: string): string {
  if (!URL.canParse(url)) return url.replace(/:[^:@/]*@/, ':***@');
  const parsed = new URL(url);
  if (!parsed.password) return url;
  parsed.password = '***';
  return parsed.href;
}

/**
 * `value` as text when it is a string, a number or a boolean; else `fallback`: a field read from a
 * loosely typed payload never shows as `[object Object]`.
 *
 * @example
 * textOr(payload.stepName, ''); // 'review', or '' when the payload has none
 */
export function textOr(value: unknown, fallback: string): string {
  if (typeof value === 'string') return value;
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : fallback;
}
