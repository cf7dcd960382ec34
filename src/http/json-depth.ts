/**
 * How deep a JSON body may nest (arrays and objects). `JSON.parse` itself copes with any depth,
 * but what reads the value afterwards walks it recursively (zod, Mastra's storage and
 * serialisers, `JSON.stringify`), and a few thousand levels overflow the stack there: a
 * `POST /threads` with 5,000-level metadata answered 500 "Maximum call stack size exceeded". No real request
 * needs more than a few dozen levels (a JSON Schema in `structuredOutput`, application state),
 * and 100 keeps every recursive walk far from the stack limit.
 */
export const MAX_JSON_DEPTH = 100;

/**
 * Whether JSON text opens more than `max` arrays/objects at once. One pass over the text, without
 * recursion or parsing: brackets inside strings do not count, and escapes inside strings are
 * skipped. The text need not be valid JSON (a malformed body is refused by `JSON.parse` after).
 *
 * @example
 * nestingExceeds('{"a":[[1]]}', 2); // true (three levels)
 * nestingExceeds('{"a":"[[[["}', 1); // false (brackets in a string)
 */
export function nestingExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === BACKSLASH) i++;
      else if (ch === QUOTE) inString = false;
    } else if (ch === QUOTE) inString = true;
    else if (ch === OPEN_BRACKET || ch === OPEN_BRACE) {
      if (++depth > max) return true;
    } else if (ch === CLOSE_BRACKET || ch === CLOSE_BRACE) depth--;
  }
  return false;
}

const [QUOTE, BACKSLASH, OPEN_BRACKET, CLOSE_BRACKET, OPEN_BRACE, CLOSE_BRACE] = ['"', '\\', '[', ']', '{', '}'].map((c) => c.charCodeAt(0));
