import { randomUUID } from 'node:crypto';
import { Mastra } from '@mastra/core';
import type { Agent } from '@mastra/core/agent';
import { EventEmitterPubSub } from '@mastra/core/events';
import { InMemoryStore } from '@mastra/core/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../config.js';
import { createServices } from '../container.js';
import { createDemoAgent } from '../demo/agent.js';
import { BridgeMetrics } from '../observability/metrics.js';
import { MastraInbox } from '../threads/inbox.js';
import { InProcessThreadLocks } from '../threads/thread-locks.js';
import type { ThreadScope, ThreadStore } from '../threads/thread-store.js';
import type { SignalRouter } from './signal-router.js';
import type { ThreadStops } from './thread-stops.js';
import { watchThread } from '../../test/support/thread-watch.js';

// The router's answers, over a real Mastra (the demo agent, in-memory storage), with the router
// and the thread store the bridge's container builds (no HTTP in between). What is checked is how Mastra's routing decision becomes the
// answer of the signal routes, and the one rule the router adds: a `deliver` that Mastra gives a
// send on an idle thread means the signal was lost (a run that is finishing still holds the
// thread), and it is sent again.

const silent = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

let mastra: Mastra;
let demo: Agent;
let threads: ThreadStore;
let router: SignalRouter;
let stops: ThreadStops;

beforeAll(() => {
  const storage = new InMemoryStore();
  // 20 ms between model parts: a run lasts long enough to send into it while it is active.
  mastra = new Mastra({ agents: { demo: createDemoAgent({ storage, delayMs: 20 }) }, storage, logger: false });
  demo = mastra.getAgent('demo');
  ({
    services: { signals: router, stops, threads },
  } = createServices(resolveConfig({ logger: silent }), mastra, new BridgeMetrics()));
});
afterAll(async () => {
  await mastra.shutdown();
});

const newScope = (): ThreadScope => ({ threadId: `thread-${randomUUID()}`, resourceId: `user-${randomUUID()}` });
/** Mastra's key for a thread (its runs, its lease): resource and thread id joined by NUL. */
const threadKey = (scope: ThreadScope) => `${scope.resourceId}\0${scope.threadId}`;
const pubsub = () => demo.getPubSub() as EventEmitterPubSub;

/** Mastra's own view of a thread: every chunk of every run on it, and a way to wait for one. */
const watch = (scope: ThreadScope) => watchThread(demo, scope);

/**
 * The signal ids Mastra hands to a run on the thread's topic (`signal-enqueued`): one per send
 * that Mastra answered `deliver`. `reached(n)` resolves once there are `n` of them.
 */
async function enqueued(scope: ThreadScope) {
  const topic = `agent.thread-stream.${encodeURIComponent(threadKey(scope))}`;
  const ids: string[] = [];
  let waiting: { n: number; resolve: () => void } | undefined;
  const listener = (event: { type: string; data?: { signal?: { id: string } } }) => {
    if (event.type !== 'signal-enqueued' || !event.data?.signal) return;
    ids.push(event.data.signal.id);
    if (waiting && ids.length >= waiting.n) waiting.resolve();
  };
  await pubsub().subscribe(topic, listener);
  return {
    ids,
    reached: (n: number) => (ids.length >= n ? Promise.resolve() : new Promise<void>((resolve) => (waiting = { n, resolve }))),
    close: () => pubsub().unsubscribe(topic, listener),
  };
}

/** The thread's stored messages, oldest first: role and text. */
async function stored(scope: ThreadScope) {
  const messages = await threads.messages(scope, {}, 'agui');
  return messages.map((m) => ({ role: m.role, content: m.content }));
}

describe("SignalRouter: Mastra's routing decision, as the signal routes answer it", () => {
  it('an idle thread is woken: { action: "wake", runId, signalId }, answered before the run ends; the signal id names the stored message', async () => {
    const scope = newScope();
    const thread = await watch(scope);
    const answer = await router.sendMessage(scope, { message: 'hello' });
    expect(answer).toStrictEqual({ action: 'wake', runId: expect.any(String), signalId: expect.any(String) });
    expect(thread.finished(answer.runId as string)).toBe(false);

    await thread.until((c) => c.type === 'finish' && c.runId === answer.runId);
    thread.close();
    const messages = await threads.messages(scope, {}, 'agui');
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'hello'],
      ['assistant', 'Echo: hello'],
    ]);
    expect(messages[0].id).toBe(answer.signalId);
  });

  it('ifIdle persist and discard answer the action and the signal id, with no runId (no run was started)', async () => {
    const persisted = await router.sendMessage(newScope(), { message: 'keep this', ifIdle: { behavior: 'persist' } });
    expect(persisted).toStrictEqual({ action: 'persist', signalId: expect.any(String) });
    const discarded = await router.signal(newScope(), { type: 'notification', contents: 'drop this', ifIdle: { behavior: 'discard' } });
    expect(discarded).toStrictEqual({ action: 'discard', signalId: expect.any(String) });
  });

  it('an active run: deliver into it, with its runId, sent once; ifActive persist and discard answer without a runId', async () => {
    const scope = newScope();
    const thread = await watch(scope);
    const signals = await enqueued(scope);
    const first = await router.sendMessage(scope, { message: Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ') });
    expect(first.action).toBe('wake');
    await thread.until((c) => c.type === 'text-delta' && c.runId === first.runId); // the run is answering

    const delivered = await router.sendMessage(scope, { message: 'and one more thing' });
    expect(delivered).toStrictEqual({ action: 'deliver', runId: first.runId, signalId: expect.any(String) });
    expect(signals.ids).toEqual([delivered.signalId]); // a deliver to a run that was active is not sent again

    const kept = await router.sendMessage(scope, { message: 'for later', ifActive: { behavior: 'persist' } });
    expect(kept).toStrictEqual({ action: 'persist', signalId: expect.any(String) });
    const dropped = await router.signal(scope, { type: 'notification', contents: 'never mind', ifActive: { behavior: 'discard' } });
    expect(dropped).toStrictEqual({ action: 'discard', signalId: expect.any(String) });

    await thread.until((c) => c.type === 'finish' && c.runId === first.runId);
    thread.close();
    await signals.close();
  });

  it('state: a changed cacheKey is routed like any signal, an unchanged one is answered { skipped: true } and not sent', async () => {
    const scope = newScope();
    await threads.create({ resourceId: scope.resourceId, threadId: scope.threadId });
    const state = (cacheKey: string) => router.state(scope, { id: 'cart', cacheKey, contents: `Cart ${cacheKey}`, ifIdle: { behavior: 'persist' } });
    expect(await state('v1')).toStrictEqual({ action: 'persist', signalId: expect.any(String) });
    expect(await state('v1')).toStrictEqual({ skipped: true, reason: expect.any(String) });
    expect(await state('v2')).toStrictEqual({ action: 'persist', signalId: expect.any(String) });
  });
});

describe('SignalRouter: whose thread', () => {
  it("a missing thread is created for the sender before the signal is routed, even when the signal is discarded; another resource's thread is 404", async () => {
    const scope = newScope();
    await router.sendMessage(scope, { message: 'dropped', ifIdle: { behavior: 'discard' } });
    expect(await threads.get(scope)).toMatchObject({ id: scope.threadId, resourceId: scope.resourceId });

    const intruder = { ...scope, resourceId: `intruder-${randomUUID()}` };
    await expect(router.sendMessage(intruder, { message: 'hi' })).rejects.toMatchObject({ status: 404, code: 'THREAD_NOT_FOUND' });
    await expect(stops.abort(intruder)).rejects.toMatchObject({ status: 404, code: 'THREAD_NOT_FOUND' });
  });

  it('state needs the thread to exist: 404 THREAD_NOT_FOUND, and nothing is created', async () => {
    const scope = newScope();
    await expect(router.state(scope, { id: 'cart', cacheKey: 'v1', contents: 'Cart' })).rejects.toMatchObject({ status: 404, code: 'THREAD_NOT_FOUND' });
    await expect(threads.load(scope)).rejects.toMatchObject({ status: 404 });
  });
});

describe('SignalRouter: a deliver answered on an idle thread (a finishing run still holds the thread)', () => {
  // A run that is finishing no longer counts as active (`getActiveThreadRunId` is undefined) but
  // still holds the thread's lease. Holding the lease through Mastra's own lease API puts the
  // thread in exactly that state, for as long as the test needs: Mastra takes a send for a wake,
  // loses the lease race, answers `deliver` to the lease holder and runs the signal nowhere.
  const holder = 'finishing-run';

  it('is sent again with the same signal id until the thread is let go, then wakes a run that stores and answers it once', async () => {
    const scope = newScope();
    const thread = await watch(scope);
    const signals = await enqueued(scope);
    expect(await pubsub().acquireLease(threadKey(scope), holder, 60_000)).toMatchObject({ acquired: true });
    expect(demo.getActiveThreadRunId(scope)).toBeUndefined();

    const answer = router.sendMessage(scope, { message: 'sent while a run finishes' });
    await Promise.race([signals.reached(3), answer]); // an answer already would be the lost `deliver`
    expect(signals.ids.length).toBeGreaterThanOrEqual(3); // three sends so far, each answered `deliver` to the holder
    await pubsub().releaseLease(threadKey(scope), holder);
    const { action, runId, signalId } = await answer;

    expect(action).toBe('wake');
    expect(new Set(signals.ids)).toEqual(new Set([signalId]));
    await thread.until((c) => c.type === 'finish' && c.runId === runId);
    thread.close();
    await signals.close();
    expect(await stored(scope)).toEqual([
      { role: 'user', content: 'sent while a run finishes' },
      { role: 'assistant', content: 'Echo: sent while a run finishes' },
    ]);
  });

  it('stands after 400 sends when the thread is never let go (the holder is not finishing): the answer is the deliver Mastra gave', async () => {
    const scope = newScope();
    const signals = await enqueued(scope);
    await pubsub().acquireLease(threadKey(scope), holder, 60_000);
    try {
      const answer = await router.sendMessage(scope, { message: 'held for good' });
      expect(answer).toStrictEqual({ action: 'deliver', runId: holder, signalId: expect.any(String) });
      expect(signals.ids).toHaveLength(400);
      expect(new Set(signals.ids)).toEqual(new Set([answer.signalId]));
    } finally {
      await pubsub().releaseLease(threadKey(scope), holder);
      await signals.close();
    }
  });
});

describe('SignalRouter: what the durable inbox keeps', () => {
  const inbox = () => new MastraInbox(mastra, new InProcessThreadLocks());
  const kept = async (scope: ThreadScope) => (await inbox().pending()).filter((e) => e.threadId === scope.threadId);

  it('a notification delivered now is kept under the id of the signal that carries it; one only recorded is not', async () => {
    const scope = newScope();
    const thread = await watch(scope);
    const urgent = await router.notify(scope, { source: 'ci', kind: 'build', summary: 'build 42 is green', priority: 'urgent' });
    expect(urgent.decision.action).toBe('deliver');
    const signalId = urgent.record.deliveredSignalId as string;
    expect(await kept(scope)).toEqual([
      expect.objectContaining({ id: signalId, kind: 'signal', message: expect.objectContaining({ type: 'notification', contents: 'build 42 is green' }) }),
    ]);
    await thread.until((c) => c.type === 'finish' && c.runId === urgent.runId);
    // Low priority on an idle thread is summarised later (by Mastra's dispatcher): nothing sent, nothing kept.
    const low = await router.notify(scope, { source: 'ci', kind: 'lint', summary: 'lint warnings', priority: 'low' });
    expect(low.runId).toBeUndefined();
    expect((await kept(scope)).map((e) => e.id)).toEqual([signalId]);
    thread.close();
  });
});
