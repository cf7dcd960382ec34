import { EventEmitter } from 'node:events';
import type { Agent } from '@mastra/core/agent';
import { beforeAll, describe, expect, it } from 'vitest';
import { runInput, userMessage } from './support/agui.js';
import { postRun } from './support/run.js';
import { http, useTestBridge, type TestBridge } from './support/server.js';
import { brackets, foldMessages, isTerminal, openSse, readSse, type AnyEvent, type IdEvent, type SseReader } from './support/sse.js';
import { eventsUrl, expectValidStream, newThread, post, type Thread } from './support/threads.js';

/** Sends a message and expects Mastra to wake the idle thread. */
async function wake(b: TestBridge, t: Thread, message: string): Promise<{ runId: string; signalId: string }> {
  const res = await post(b, t, 'send-message', { message });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expect(res.body.action).toBe('wake');
  return res.body;
}

/** Ids strictly increasing from one frame to the next. */
function expectIncreasingIds(events: IdEvent[]): void {
  for (let i = 1; i < events.length; i++) expect(events[i].id, `frame ${i}`).toBeGreaterThan(events[i - 1].id);
}

/** The runs of a stream, each from RUN_STARTED to its terminal event. */
const runsOf = (sse: SseReader) => brackets(sse.list);

describe('GET /threads/:threadId/events: one stream across runs', () => {
  const b = useTestBridge();

  it('opens with retry and ": connected", then follows wake, message, notification and approval runs as valid AG-UI', async () => {
    const t = newThread();
    const sse = await openSse(eventsUrl(b, t));
    expect(sse.status).toBe(200);
    expect(sse.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(sse.response.headers.get('cache-control')).toBe('no-cache');
    expect(sse.response.headers.get('x-accel-buffering')).toBe('no');
    await sse.waitForComment('connected');
    expect(sse.text.startsWith(`retry: ${b.bridge.config.retryMs}\n: connected\n\n`)).toBe(true);
    expect(sse.events).toHaveLength(0);

    const first = await wake(b, t, 'hello there');
    await sse.waitForCount('RUN_FINISHED', 1);
    await wake(b, t, 'think about tides');
    await sse.waitForCount('RUN_FINISHED', 2);
    const notified = await post(b, t, 'signals', { type: 'notification', contents: 'Build #7 passed', attributes: { source: 'ci' } });
    expect(notified.status).toBe(202);
    expect(notified.body.action).toBe('wake');
    await sse.waitForCount('RUN_FINISHED', 3);
    const approvalRun = await wake(b, t, 'delete a.txt');
    await sse.waitForCount('RUN_FINISHED', 4);
    const pending = await http(`${b.base}/threads/${t.threadId}/pending-approvals?resourceId=${t.resourceId}`);
    expect(pending.body).toHaveLength(1);
    const approved = await post(b, t, 'tool-approval', { toolCallId: pending.body[0].toolCallId, approved: true });
    expect(approved.status).toBe(202);
    await sse.waitForCount('RUN_FINISHED', 5);

    expectIncreasingIds(sse.events);
    // One client from the start: no gaps either.
    expect((sse.events.at(-1)?.id as number) - sse.events[0].id).toBe(sse.events.length - 1);
    for (const { id } of sse.events) expect(Number.isSafeInteger(id)).toBe(true);
    await expectValidStream(sse.list);

    const runs = runsOf(sse);
    expect(runs).toHaveLength(5);
    for (const run of runs) expect(isTerminal(run.at(-1) as AnyEvent)).toBe(true);
    expect(runs[0][0].runId).toBe(first.runId);
    expect(runs[1].some((e) => e.type === 'REASONING_MESSAGE_CONTENT')).toBe(true);
    expect(runs[2].find((e) => e.type === 'ACTIVITY_SNAPSHOT')).toMatchObject({
      messageId: notified.body.signalId,
      activityType: 'signal.notification',
      content: { tagName: 'notification', contents: 'Build #7 passed', attributes: { source: 'ci' } },
    });
    expect(runs[3][0].runId).toBe(approvalRun.runId);
    expect(runs[3].at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'interrupt' } });
    // The resumed run is a fresh bracket with the same run id.
    expect(runs[4][0]).toMatchObject({ type: 'RUN_STARTED', runId: approvalRun.runId });
    // A client that folds the events keeps the call's arguments once: the resumed bracket does not repeat them.
    const toolCallId = pending.body[0].toolCallId as string;
    const args = sse.list.filter((e) => e.type === 'TOOL_CALL_ARGS' && e.toolCallId === toolCallId).map((e) => e.delta as string);
    expect(JSON.parse(args.join(''))).toEqual({ path: 'a.txt' });
    await sse.close();
  });

  it('fans one thread out to two clients: identical (id, event) sequences', async () => {
    const t = newThread();
    const a = await openSse(eventsUrl(b, t));
    const c = await openSse(eventsUrl(b, t));
    await Promise.all([a.waitForComment('connected'), c.waitForComment('connected')]);
    await wake(b, t, 'weather in Oslo');
    await Promise.all([a.waitForCount('RUN_FINISHED', 1), c.waitForCount('RUN_FINISHED', 1)]);
    await wake(b, t, 'second message');
    await Promise.all([a.waitForCount('RUN_FINISHED', 2), c.waitForCount('RUN_FINISHED', 2)]);
    expect(a.events.length).toBeGreaterThan(10);
    expect(a.events).toEqual(c.events);
    expect(a.list.some((e) => e.type === 'TOOL_CALL_RESULT')).toBe(true);
    await Promise.all([a.close(), c.close()]);
  });
});

/** A message the demo echoes word by word: with `delayMs` set, a run that lasts a while. */
const longMessage = (words: number) => Array.from({ length: words }, (_, i) => `word${i}`).join(' ');

describe('reconnecting with Last-Event-ID', () => {
  const b = useTestBridge({ delayMs: 20 });

  it('resumes in the middle of a run, by header and by ?lastEventId=: no gap, no duplicate, same as a client that stayed', async () => {
    const t = newThread();
    const a = await openSse(eventsUrl(b, t));
    const stayed = await openSse(eventsUrl(b, t));
    await Promise.all([a.waitForComment('connected'), stayed.waitForComment('connected')]);
    const { runId } = await wake(b, t, longMessage(30));
    // Leave after a few words of the answer.
    await a.waitFor(() => a.list.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').length >= 4, 'a few deltas');
    await a.close();
    const lastId = a.events.at(-1)?.id as number;
    expect(a.list.some(isTerminal)).toBe(false);

    const byHeader = await openSse(eventsUrl(b, t), { lastEventId: lastId });
    const byQuery = await openSse(eventsUrl(b, t, `&lastEventId=${lastId}`));
    await Promise.all([stayed, byHeader, byQuery].map((s) => s.waitForCount('RUN_FINISHED', 1)));

    expect(byHeader.events[0].id).toBe(lastId + 1);
    expect([...a.events, ...byHeader.events]).toEqual(stayed.events);
    expect([...a.events, ...byQuery.events]).toEqual(stayed.events);
    expect(stayed.list[0]).toMatchObject({ type: 'RUN_STARTED', runId });
    await expectValidStream([...a.list, ...byHeader.list]);
    expect(await foldMessages([...a.list, ...byHeader.list])).toEqual(await foldMessages(stayed.list));
    await Promise.all([stayed.close(), byHeader.close(), byQuery.close()]);
  });

  it("ids this server never handed out (clients back from before a restart): a snapshot each, at the feed's own position, then the same live ids", async () => {
    const t = newThread();
    const first = await openSse(eventsUrl(b, t), { lastEventId: 100 });
    await first.waitForCount('RUN_FINISHED', 1);
    const second = await openSse(eventsUrl(b, t), { lastEventId: 200 });
    await second.waitForCount('RUN_FINISHED', 1);
    for (const sse of [first, second]) {
      expect(sse.list.map((e) => e.type)).toEqual(['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED']);
    }
    // The clients' ids move nothing: both snapshots end at the feed's position, far above them
    // (the bracket's frames before its last carry no id: a client keeps its own until then).
    const position = first.events[2].id;
    expect(position).toBeGreaterThan(200);
    expect(first.events.map((e) => e.id)).toEqual([100, 100, position]);
    expect(second.events.map((e) => e.id)).toEqual([200, 200, position]);
    const { runId } = await wake(b, t, 'after the restart');
    await Promise.all([first.waitForCount('RUN_FINISHED', 2), second.waitForCount('RUN_FINISHED', 2)]);
    expect(second.events[3]).toEqual({ id: position + 1, event: expect.objectContaining({ type: 'RUN_STARTED', runId }) });
    expect(first.events.slice(3)).toEqual(second.events.slice(3));
    await Promise.all([first.close(), second.close()]);
  });

  it('a Last-Event-ID equal to the newest id replays nothing and goes on live', async () => {
    const t = newThread();
    const stayed = await openSse(eventsUrl(b, t));
    await stayed.waitForComment('connected');
    await wake(b, t, 'one');
    await stayed.waitForCount('RUN_FINISHED', 1);
    const newest = stayed.events.at(-1)?.id as number;
    const resumed = await openSse(eventsUrl(b, t), { lastEventId: newest });
    await resumed.waitForComment('connected');
    const { runId } = await wake(b, t, 'two');
    await Promise.all([stayed.waitForCount('RUN_FINISHED', 2), resumed.waitForCount('RUN_FINISHED', 1)]);
    expect(resumed.events[0]).toEqual({ id: newest + 1, event: expect.objectContaining({ type: 'RUN_STARTED', runId }) });
    expect(resumed.events).toEqual(stayed.events.filter((e) => e.id > newest));
    await Promise.all([stayed.close(), resumed.close()]);
  });
  for (const message of [longMessage(30), `weather in Oslo ${longMessage(3)}`]) {
    it(`snapshot=1 in the middle of a run: the snapshot, then that run from its RUN_STARTED; ids never go back (${message.slice(0, 12)})`, async () => {
      const t = newThread();
      const stayed = await openSse(eventsUrl(b, t));
      await stayed.waitForComment('connected');
      const { runId } = await wake(b, t, message);
      await stayed.waitFor(() => stayed.list.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').length >= 4, 'a few deltas');
      const late = await openSse(eventsUrl(b, t, '&snapshot=1'));
      await Promise.all([stayed.waitForCount('RUN_FINISHED', 1), late.waitForCount('RUN_FINISHED', 2)]);
      expect(late.list.slice(0, 3).map((e) => e.type)).toEqual(['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED']);
      expect(late.list[3]).toMatchObject({ type: 'RUN_STARTED', runId });
      expect(late.events.slice(3)).toEqual(stayed.events);
      // Opened without an id, the client has none until the snapshot's last frame.
      expect(late.events.slice(0, 2).map((e) => e.id)).toEqual([Number.NaN, Number.NaN]);
      for (let i = 3; i < late.events.length; i++) expect(late.events[i].id, `frame ${i}`).toBeGreaterThanOrEqual(late.events[i - 1].id);
      await expectValidStream(late.list);
      // The history in the snapshot and the replayed run add up to what the client that stayed holds.
      expect(await foldMessages(late.list)).toEqual(await foldMessages(stayed.list));
      await Promise.all([stayed.close(), late.close()]);
    });
  }
});

describe('snapshots: a Last-Event-ID older than the replay ring, and snapshot=1', () => {
  const b = useTestBridge({ config: { replayBufferSize: 5 } });

  /** A thread with one finished run, and a client that stays on it (so the ring lives on). */
  async function threadWithHistory() {
    const t = newThread();
    const stayed = await openSse(eventsUrl(b, t));
    await stayed.waitForComment('connected');
    const first = await wake(b, t, 'hello history');
    await stayed.waitForCount('RUN_FINISHED', 1);
    expect(stayed.events.length).toBeGreaterThan(5);
    return { t, stayed, first };
  }

  function expectSnapshotRun(events: AnyEvent[], t: Thread, signalId: string): void {
    expect(events.slice(0, 3).map((e) => e.type)).toEqual(['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED']);
    expect(events[0]).toMatchObject({ threadId: t.threadId });
    expect(events[2]).toMatchObject({ threadId: t.threadId, runId: events[0].runId });
    const messages = events[1].messages as Array<{ id: string; role: string; content?: unknown }>;
    expect(messages.find((m) => m.role === 'user')).toMatchObject({ id: signalId, content: 'hello history' });
    expect(messages.some((m) => m.role === 'assistant' && m.content === 'Echo: hello history')).toBe(true);
  }

  for (const how of ['header', 'query'] as const) {
    it(`Last-Event-ID (${how}) older than the ring: a snapshot run, then live`, async () => {
      const { t, stayed, first } = await threadWithHistory();
      const old = stayed.events[0].id;
      const late = how === 'header' ? await openSse(eventsUrl(b, t), { lastEventId: old }) : await openSse(eventsUrl(b, t, `&lastEventId=${old}`));
      await late.waitForCount('RUN_FINISHED', 1);
      expectSnapshotRun(late.list, t, first.signalId);
      const second = await wake(b, t, 'after the snapshot');
      await late.waitForCount('RUN_FINISHED', 2);
      expect(late.list[3]).toMatchObject({ type: 'RUN_STARTED', runId: second.runId });
      // Live frames after the snapshot are the thread's own, as every other client sees them.
      await stayed.waitForCount('RUN_FINISHED', 2);
      expect(late.events.slice(3)).toEqual(stayed.events.filter((e) => e.id >= late.events[3].id));
      // Ids never go back, and the snapshot's last frame carries the position the client resumes from.
      for (let i = 3; i < late.events.length; i++) expect(late.events[i].id).toBeGreaterThanOrEqual(late.events[i - 1].id);
      expect(late.events[3].id).toBeGreaterThan(late.events[2].id);
      await expectValidStream(late.list);
      // History from the snapshot plus the live run: the same messages as the client that saw both runs.
      expect(await foldMessages(late.list)).toEqual(await foldMessages(stayed.list));
      await Promise.all([stayed.close(), late.close()]);
    });
  }

  it('snapshot=1 sends the history first, then live runs', async () => {
    const { t, stayed, first } = await threadWithHistory();
    const fresh = await openSse(eventsUrl(b, t, '&snapshot=1'));
    await fresh.waitForCount('RUN_FINISHED', 1);
    expectSnapshotRun(fresh.list, t, first.signalId);
    const second = await wake(b, t, 'live again');
    await fresh.waitForCount('RUN_FINISHED', 2);
    expect(fresh.list[3]).toMatchObject({ type: 'RUN_STARTED', runId: second.runId });
    await expectValidStream(fresh.list);
    await Promise.all([stayed.close(), fresh.close()]);
  });
});

describe('heartbeats', () => {
  const b = useTestBridge({ config: { heartbeatMs: 50 } });

  it('sends ": keep-alive" comments while the thread is idle', async () => {
    const t = newThread();
    const sse = await openSse(eventsUrl(b, t));
    await sse.waitFor(() => sse.comments.filter((c) => c === 'keep-alive').length >= 2, 'two keep-alives');
    expect(sse.comments[0]).toBe('connected');
    expect(sse.events).toHaveLength(0);
    expect(sse.text).toMatch(/\n\n: keep-alive\n\n/);
    await sse.close();
  });
});

/**
 * Counts the live Mastra thread subscriptions of an agent by wrapping `subscribeToThread` (the
 * bridge's hub calls it through the same agent object): `until(n)` resolves when the count is `n`.
 */
function trackSubscriptions(agent: Agent) {
  const changes = new EventEmitter();
  let live = 0;
  const original = agent.subscribeToThread.bind(agent);
  agent.subscribeToThread = (async (options: Parameters<typeof original>[0]) => {
    const subscription = await original(options);
    const unsubscribe = subscription.unsubscribe;
    let released = false;
    live++;
    changes.emit('change');
    subscription.unsubscribe = () => {
      if (!released) {
        released = true;
        live--;
        changes.emit('change');
      }
      unsubscribe();
    };
    return subscription;
  }) as typeof agent.subscribeToThread;
  return {
    get live() {
      return live;
    },
    until(n: number): Promise<void> {
      if (live === n) return Promise.resolve();
      return new Promise((resolve) => {
        const check = () => {
          if (live !== n) return;
          changes.off('change', check);
          resolve();
        };
        changes.on('change', check);
      });
    },
  };
}

/** Listeners on the thread's Mastra pubsub topic (the hub's subscription and Mastra's own control listener). */
function topicListeners(b: TestBridge, t: Thread): number {
  const topic = `agent.thread-stream.${encodeURIComponent(`${t.resourceId}\0${t.threadId}`)}`;
  const emitter = (b.mastra.pubsub as unknown as { emitter: EventEmitter }).emitter;
  return emitter.listenerCount(topic);
}

describe('subscription lifetime (subscriptionLingerMs: 0)', () => {
  const b = useTestBridge({ config: { subscriptionLingerMs: 0 } });
  let subscriptions: ReturnType<typeof trackSubscriptions>;
  beforeAll(() => {
    subscriptions = trackSubscriptions(b.demo);
  });

  it('one Mastra subscription per thread, whatever the number of clients; none left after they leave', async () => {
    const t = newThread();
    const clients = await Promise.all([openSse(eventsUrl(b, t)), openSse(eventsUrl(b, t)), openSse(eventsUrl(b, t))]);
    await Promise.all(clients.map((c) => c.waitForComment('connected')));
    expect(subscriptions.live).toBe(1);
    await wake(b, t, 'hello');
    await Promise.all(clients.map((c) => c.waitForCount('RUN_FINISHED', 1)));
    expect(subscriptions.live).toBe(1);
    // Mastra keeps a control listener of its own on the topic once a run happened; ours is the other one.
    const listening = topicListeners(b, t);

    await clients[0].close();
    await clients[1].close();
    expect(subscriptions.live).toBe(1); // one client is still there
    await clients[2].close();
    await subscriptions.until(0);
    expect(topicListeners(b, t)).toBe(listening - 1);
  });

  it('a reconnect after the subscription was released gets a snapshot, and ids keep growing', async () => {
    const t = newThread();
    const first = await openSse(eventsUrl(b, t));
    await first.waitForComment('connected');
    const { signalId } = await wake(b, t, 'before the release');
    await first.waitForCount('RUN_FINISHED', 1);
    await first.close();
    await subscriptions.until(0);
    const lastId = first.events.at(-1)?.id as number;

    const again = await openSse(eventsUrl(b, t), { lastEventId: lastId });
    await again.waitForCount('RUN_FINISHED', 1);
    expect(again.list.slice(0, 3).map((e) => e.type)).toEqual(['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED']);
    expect(again.list[1].messages.some((m: { id: string }) => m.id === signalId)).toBe(true);
    const { runId } = await wake(b, t, 'after the release');
    await again.waitForCount('RUN_FINISHED', 2);
    expect(again.events[3]).toEqual({ id: expect.any(Number), event: expect.objectContaining({ type: 'RUN_STARTED', runId }) });
    expect(again.events[3].id).toBeGreaterThan(lastId);
    await again.close();
    await subscriptions.until(0);
  });
});

describe('slow clients (maxClientQueueBytes: 4096)', () => {
  const b = useTestBridge({
    delayMs: 1,
    config: { maxClientQueueBytes: 4096, maxBodyBytes: 32 * 1024 * 1024, subscriptionLingerMs: 0 },
  });
  let subscriptions: ReturnType<typeof trackSubscriptions>;
  beforeAll(() => {
    subscriptions = trackSubscriptions(b.demo);
  });

  /**
   * A long run on the thread: `/run` with a message of 1200 words of 8000 characters, which the demo
   * echoes word by word, about 10 MB of frames of 8 KB each. That is far more than the kernel and the
   * HTTP client buffer for a reader that does not read (about 4 MB here), so such a reader must fall
   * behind by more than 4 KB; frames stay small so that a reader that does read never does.
   */
  async function longRun(t: Thread): Promise<void> {
    const word = 'x'.repeat(8000);
    const text = Array.from({ length: 1200 }, () => word).join(' ');
    const input = runInput({ threadId: t.threadId, messages: [userMessage(text)], forwardedProps: { resourceId: t.resourceId } });
    const res = await postRun(`${b.base}/run`, input);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/"type":"RUN_FINISHED"/);
  }

  /** Whether a stalled client's body ended before the run's end, or (not expected) delivered the whole run. */
  function cutOffOrComplete(slow: SseReader): Promise<'cut off' | 'complete'> {
    const complete = slow.waitForEvent(isTerminal).then(
      () => 'complete' as const,
      () => 'cut off' as const,
    );
    return Promise.race([slow.ended.then(() => 'cut off' as const), complete]);
  }

  /** A client that connects and then never reads its body (until the test decides to). */
  async function stalledClient(t: Thread) {
    const controller = new AbortController();
    const response = await fetch(eventsUrl(b, t), { signal: controller.signal });
    expect(response.status).toBe(200);
    return { response, controller };
  }

  it('cuts off a client that does not read while a client that reads gets everything through RUN_FINISHED', async () => {
    const t = newThread();
    const fast = await openSse(eventsUrl(b, t));
    await fast.waitForComment('connected');
    const stalled = await stalledClient(t);
    await longRun(t);
    await fast.waitForCount('RUN_FINISHED', 1);
    expect(fast.end).toBeUndefined();
    expect(fast.list.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').length).toBeGreaterThan(1200);
    expect(fast.events.at(-1)?.event.type).toBe('RUN_FINISHED');

    // Now read what the stalled client was sent: it ends early instead of going on for ever.
    const slow = readSse(stalled.response, stalled.controller);
    expect(await cutOffOrComplete(slow)).toBe('cut off');
    expect(slow.events.length).toBeLessThan(fast.events.length);
    // What it did get is a prefix of the thread's sequence.
    expect(slow.events).toEqual(fast.events.slice(0, slow.events.length));
    await fast.close();
    await subscriptions.until(0);
  });

  it('releases the subscription when the only client is cut off', async () => {
    const t = newThread();
    const stalled = await stalledClient(t);
    await subscriptions.until(1);
    await longRun(t);
    const slow = readSse(stalled.response, stalled.controller);
    expect(await cutOffOrComplete(slow)).toBe('cut off');
    await subscriptions.until(0);
  });
});
