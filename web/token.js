// @ts-check
// The access token, on a server with auth on: asked for, kept in this tab, and the page signed in
// as the resource it names; a token the server refuses is asked for again.
import { BridgeRequestError } from './client.js';
import { showConnection } from './follow.js';
import { app, auth, say, setResource, store, ui } from './page.js';

/**
 * The resource a JWT names (its payload is readable; the server verifies it), or undefined (an API key).
 *
 * @param {string} token
 */
export function tokenResource(token) {
  try {
    const payload = JSON.parse(atob(token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')));
    const resource = payload?.[auth?.claim ?? 'sub'];
    return typeof resource === 'string' && resource ? resource : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Shows the token form; `why` says why (no token yet, or what happened to the last one). Until a
 * token is taken the page is signed out: nothing to connect to, nothing to send.
 *
 * @param {string} why
 * @param {import('./page-types').Tone} [tone]
 */
export function askForToken(why, tone = 'error') {
  app.token = undefined;
  store.set('token', null);
  ui.tokenForm.hidden = false;
  ui.token.value = '';
  ui.token.focus();
  signedIn(false);
  say(why, tone, ui.tokenStatus);
}

/**
 * Signs in with `token`, as the resource it names (else the one in the resource box).
 *
 * @param {string} token
 */
export function useToken(token) {
  app.token = token;
  store.set('token', token);
  ui.tokenForm.hidden = true;
  const fromToken = tokenResource(token);
  const resource = fromToken ?? ui.resource.value.trim();
  setResource(resource);
  store.set('resource', resource);
  signedIn(true, fromToken !== undefined);
}

/**
 * Signed in or out (servers with auth on). Signed out, the composer and the resource wait for a
 * token. Signed in with a token that names its resource, the resource is that one: another would be
 * refused (`403`), so the box is read-only.
 *
 * @param {boolean} yes
 * @param {boolean} [resourceFromToken]
 */
export function signedIn(yes, resourceFromToken = false) {
  ui.message.disabled = ui.send.disabled = ui.queue.disabled = !yes;
  ui.message.placeholder = yes ? 'Message the agent… (Enter sends, Shift+Enter for a new line)' : 'Sign in with your access token first (above)';
  const locked = !yes || resourceFromToken;
  ui.resource.readOnly = locked;
  ui.resourceApply.disabled = locked;
  ui.resource.title = resourceFromToken ? 'The resource your token names' : '';
  if (!yes) {
    app.agent?.disconnect();
    showConnection({ state: 'signed out' });
  }
}

/**
 * Whether `error` is the server refusing the token: then the page asks for another one.
 *
 * @param {unknown} error
 */
export function tokenRefused(error) {
  if (!(auth && error instanceof BridgeRequestError && error.status === 401)) return false;
  askForToken(`The token was refused: ${error.message.split(': ').slice(1).join(': ') || 'unauthorized'}. Enter another one.`);
  return true;
}
