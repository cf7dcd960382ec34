// @ts-check
/**
 * What a thread is called: "New chat" until its first message or input names it, as chat apps do,
 * and the same name in every tab of this browser on the same resource (a `BroadcastChannel`), and
 * in a tab that comes back to the front (the list read again).
 */

/** What a thread is called until its first message names it (the list shows its date beside it). */
export const NEW_TITLE = 'New chat';

/** A title from a first message: its first 60 characters. */
export function titleFrom(/** @type {string} */ text) {
  return text.length > 60 ? `${text.slice(0, 59).trimEnd()}…` : text;
}

/**
 * @typedef {{ resourceId: string, threadId: string, title: string }} Renamed
 */

/**
 * Tells the other tabs of a rename, and hears theirs.
 *
 * @example
 * const names = threadNames((renamed) => showTitle(renamed));
 * names.renamed({ resourceId, threadId, title });
 *
 * @param {(renamed: Renamed) => void} onRenamed
 */
export function threadNames(onRenamed) {
  const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel('mastra-agui-bridge:thread-names') : undefined;
  channel?.addEventListener('message', (event) => onRenamed(event.data));
  return {
    /** @param {Renamed} renamed */
    renamed: (renamed) => channel?.postMessage(renamed),
  };
}
