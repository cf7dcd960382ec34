// @ts-check

/**
 * A form's text fields by name, as strings (`''` for a field it lacks; the page's forms have no
 * file fields).
 *
 * @example
 * const field = textFields(form);
 * field('summary'); // 'Build #42 passed'
 *
 * @param {HTMLFormElement} form
 */
export function textFields(form) {
  const data = new FormData(form);
  return (/** @type {string} */ name) => {
    const value = data.get(name);
    return typeof value === 'string' ? value : '';
  };
}
