// @ts-check
// The page builds its cards and transcript entries from plain elements: one helper for them.

/**
 * An element with a class and a text.
 *
 * @example
 * el('pre', 'result', JSON.stringify(value)) // <pre class="result">…</pre>
 *
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string} [className]
 * @param {string} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}
