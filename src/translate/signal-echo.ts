import { EventType, type Event } from '@ag-ui/core';
import type { SignalEchoChunk } from './chunks.js';
import { signalText } from './values.js';

/**
 * A signal's echo on the run's stream, as the client shows it: a user message as a user text
 * message (its attributes in `metadata`), any other signal as a `signal.<type>` activity.
 *
 * @example
 * signalEchoEvents({ type: 'data-user-message', data: { id: 's1', contents: 'hi', … }, runId: 'r1' });
 * // TEXT_MESSAGE_START (role user), TEXT_MESSAGE_CONTENT 'hi', TEXT_MESSAGE_END
 */
export function signalEchoEvents({ type, data }: SignalEchoChunk): Event[] {
  if (type === 'data-user-message') {
    const metadata = data.attributes ? { attributes: data.attributes } : undefined;
    return [
      { type: EventType.TEXT_MESSAGE_START, messageId: data.id, role: 'user', ...(metadata && { metadata }) },
      { type: EventType.TEXT_MESSAGE_CONTENT, messageId: data.id, delta: signalText(data.contents) },
      { type: EventType.TEXT_MESSAGE_END, messageId: data.id },
    ];
  }
  const content = { tagName: data.tagName ?? data.type, contents: data.contents, attributes: data.attributes ?? {} };
  return [{ type: EventType.ACTIVITY_SNAPSHOT, messageId: data.id, activityType: `signal.${data.type}`, content }];
}
