import { forbidden } from '../errors.js';

/**
 * The caller's resource: the authenticated `subject`. A `resourceId` the request claims (body,
 * query or `forwardedProps`) must be the same: any other is refused (`403`), never trusted.
 *
 * @example
 * return resourceOf(payload.sub, claimed);
 */
export function resourceOf(subject: string, claimed: string | undefined): string {
  if (claimed !== undefined && claimed !== subject) {
    throw forbidden('The resourceId claimed by the request is not the authenticated one');
  }
  return subject;
}
