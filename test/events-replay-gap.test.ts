import { describe, expect, it, vi } from 'vitest';
import { uid } from './support/agui.js';
import { watchThread } from './support/thread-watch.js';
import { http, useTestBridge } from './support/server.js';
import { openSse } from './support/sse.js';

// A thread nobody follows for a while: its feed is released, runs happen unseen, and a new feed
// starts. An id from the old feed cannot be replayed (the gap is unknown): it gets a snapshot.

const tb = useTestBridge({ config: { subscriptionLingerMs: 0 } });

describe('an id from before a gap', () => {
  it('gets a snapshot with what happened while nobody followed, even when the new feed is already live', async () => {
    const threadId = uid('thread');
    const resourceId = uid('user');
    const url = `${tb.base}/threads/${threadId}/events?resourceId=${resourceId}`;
    const send = (message: string) => http(`${tb.base}/threads/${threadId}/send-message`, { body: { resourceId, message } });

    const first = await openSse(url);
    await first.waitForComment('connected');
    await send('before the gap');
    const finished = await first.waitForEvent((e) => e.type === 'RUN_FINISHED');
    const lastSeen = finished.id;
    await first.close();
    await vi.waitFor(() => expect(tb.bridge.subscriptionCount()).toBe(0));

    // A run nobody follows through the bridge; Mastra's own subscription tells when it is done.
    const watch = await watchThread(tb.demo, { threadId, resourceId });
    const unseen = await send('during the gap');
    await watch.until((c) => c.type === 'finish' && c.runId === unseen.body.runId);
    watch.close();

    const live = await openSse(url); // a new feed, live before the reconnecting client arrives
    await live.waitForComment('connected');
    const back = await openSse(url, { headers: { 'last-event-id': String(lastSeen) } });
    const snapshot = await back.waitForEvent((e) => e.type === 'MESSAGES_SNAPSHOT');
    const contents = (snapshot.event.messages as Array<{ content?: unknown }>).map((m) => m.content);
    expect(contents).toContain('during the gap');
    // The bracket's last frame moves the client to the new feed's position, above its old id.
    const closed = await back.waitForEvent((e) => e.type === 'RUN_FINISHED', snapshot.index);
    expect(closed.id).toBeGreaterThan(lastSeen);
    await live.close();
    await back.close();
  });
});
