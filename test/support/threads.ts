import { expect } from 'vitest';
import { uid } from './agui.js';
import { http, type TestBridge } from './server.js';
import { openSse, verifyThreadEvents, type AnyEvent, type SseReader } from './sse.js';

/** A thread and the resource that owns it, as the signal and events routes address it. */
export interface Thread {
  threadId: string;
  resourceId: string;
}

/** A new thread id for a new resource: nothing of it exists yet. */
export const newThread = (): Thread => ({ threadId: uid('thread'), resourceId: uid('user') });

export const threadUrl = (b: TestBridge, t: Thread, path = '') => `${b.base}/threads/${t.threadId}${path}`;

/** The thread's events stream, as its resource; `query` is appended (`&lastEventId=…`). */
export const eventsUrl = (b: TestBridge, t: Thread, query = '') => `${threadUrl(b, t, '/events')}?resourceId=${t.resourceId}${query}`;

/** POSTs to a signal route of the thread, as its resource. */
export function post(b: TestBridge, t: Thread, route: string, body: Record<string, unknown> = {}) {
  return http(threadUrl(b, t, `/${route}`), { body: { resourceId: t.resourceId, ...body } });
}

/** GETs a route of the thread, as its resource; `query` is appended (`&status=…`). */
export function get(b: TestBridge, t: Thread, route: string, query = '') {
  return http(`${threadUrl(b, t, `/${route}`)}?resourceId=${t.resourceId}${query}`);
}

/** Opens the thread's events stream and waits for `: connected`. */
export async function follow(b: TestBridge, t: Thread): Promise<SseReader> {
  const sse = await openSse(eventsUrl(b, t));
  await sse.waitForComment('connected');
  return sse;
}

/** The stream passes `@ag-ui/client`'s verifier with no warning and no event dropped. */
export async function expectValidStream(events: AnyEvent[]): Promise<void> {
  const { verified, warnings } = await verifyThreadEvents(events);
  expect(warnings).toEqual([]);
  expect(verified).toHaveLength(events.length);
}
