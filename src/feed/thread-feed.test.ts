import { EventType, type Event, type Message } from '@ag-ui/core';
import { Mastra } from '@mastra/core';
import type { Agent } from '@mastra/core/agent';
import { InMemoryStore } from '@mastra/core/storage';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createDemoAgent } from '../demo/agent.js';
import type { FeedSink } from './feed-sink.js';
import { InProcessEventLogs } from './in-process-event-log.js';
import { ThreadFeed, type FeedOptions } from './thread-feed.js';

/** A sink that keeps what the feed wrote, and can play a client that stopped reading. */
class RecordingSink implements FeedSink {
  /** Each frame with its `id:` (`NaN` for a frame that carries none: the client keeps its last one). */
  readonly frames: Array<{ id: number; event: Event }> = [];
  aborted?: string;
  closed = false;
  queuedBytes = 0;
  /** `sendShared` calls: a stream writes each call's batch together. */
  sharedCalls = 0;
  private readonly listeners: Array<() => void> = [];
  private waiters: Array<{ check: () => boolean; resolve: () => void }> = [];

  send(events: readonly Event[], firstId?: number): void {
    events.forEach((event, i) => this.frames.push({ id: firstId === undefined ? Number.NaN : firstId + i, event }));
    this.waiters = this.waiters.filter((w) => (w.check() ? (w.resolve(), false) : true));
  }
  sendShared(events: readonly Event[], firstId: number): void {
    this.sharedCalls++;
    this.send(events, firstId);
  }
  raw(): void {}
  abort(reason: string): void {
    this.aborted = reason;
    for (const listener of this.listeners) listener();
  }
  close(): void {
    this.closed = true;
  }
  onCancel(listener: () => void): void {
    this.listeners.push(listener);
  }
  get types(): string[] {
    return this.frames.map((f) => f.event.type);
  }
  /** Resolves once `n` runs have ended on this client. */
  runsEnded(n: number): Promise<void> {
    const check = () => this.frames.filter((f) => f.event.type === EventType.RUN_FINISHED || f.event.type === EventType.RUN_ERROR).length >= n;
    return check() ? Promise.resolve() : new Promise((resolve) => this.waiters.push({ check, resolve }));
  }
}

let mastra: Mastra;
let agent: Agent;
let feed: ThreadFeed | undefined;
const scope = { threadId: 'feed-thread', resourceId: 'feed-user' };

beforeEach(() => {
  const storage = new InMemoryStore();
  agent = createDemoAgent({ storage, delayMs: 0 });
  mastra = new Mastra({ agents: { demo: agent }, storage, logger: false });
  agent = mastra.getAgent('demo');
});
afterEach(async () => {
  feed?.close();
  await mastra.shutdown();
});

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

async function startFeed(options: Partial<FeedOptions> = {}): Promise<ThreadFeed> {
  const logs = new InProcessEventLogs({ replayBufferSize: 100 } as never);
  feed = new ThreadFeed({
    agent,
    ...scope,
    log: await logs.open('feed'),
    maxClientQueueBytes: 1024,
    heartbeatMs: 60_000,
    loadHistory: async (): Promise<Message[]> => [{ id: 'm1', role: 'user', content: 'earlier' }],
    logger: quiet,
    ...options,
  });
  await feed.start();
  return feed;
}

/** One run on the thread, as a `/run` would start it; resolves once Mastra has streamed it all. */
async function runOnThread(text: string): Promise<void> {
  const output = await agent.stream(text, { memory: { thread: scope.threadId, resource: scope.resourceId } });
  for await (const _chunk of output.fullStream) {
    // drain: the feed sees the run on its own subscription
  }
}

describe('ThreadFeed', () => {
  it('fans each run out to every client with the same ids, one bracket per run', async () => {
    const feed = await startFeed();
    const [a, b] = [new RecordingSink(), new RecordingSink()];
    await feed.attach(a, {});
    await feed.attach(b, {});
    await runOnThread('hello');
    await Promise.all([a.runsEnded(1), b.runsEnded(1)]);
    expect(a.frames).toEqual(b.frames);
    expect(a.types[0]).toBe(EventType.RUN_STARTED);
    expect(a.types.at(-1)).toBe(EventType.RUN_FINISHED);
    // Ids only grow, one per event.
    a.frames.forEach((f, i) => i > 0 && expect(f.id).toBe(a.frames[i - 1].id + 1));
  });

  it('batches numbered in one turn go to each client together, when the turn ends; a client that caught up from the log meanwhile gets none twice', async () => {
    const feed = await startFeed();
    const early = new RecordingSink();
    await feed.attach(early, {});
    const { threadId } = scope;
    const messageId = 'a1';
    feed.publishRun([{ type: EventType.RUN_STARTED, threadId, runId: 'r1' }]);
    feed.publishRun([{ type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant' }]);
    // Joins inside the run: its catch-up from the log sends the run so far at once.
    const late = new RecordingSink();
    void feed.attach(late, {});
    feed.publishRun([
      { type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta: 'hi' },
      { type: EventType.TEXT_MESSAGE_END, messageId },
    ]);
    expect(early.frames).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));

    const types = [EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_END];
    expect(early.types).toEqual(types);
    expect(early.sharedCalls).toBe(1);
    expect(late.frames).toEqual(early.frames);
    // The next turn's batch is a write of its own.
    feed.publishRun([{ type: EventType.RUN_FINISHED, threadId, runId: 'r1' }]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(early.sharedCalls).toBe(2);
    expect(late.types.at(-1)).toBe(EventType.RUN_FINISHED);
  });

  it("past 1,000 clients, what follows a run's start waits up to 50 ms for the batches after it; a run's start and a user's message go at once", async () => {
    const feed = await startFeed();
    const clients = Array.from({ length: 1000 }, () => new RecordingSink());
    await Promise.all(clients.map((client) => feed.attach(client, {})));
    const [one] = clients;
    const { threadId } = scope;
    vi.useFakeTimers({ toFake: ['setTimeout', 'setImmediate', 'performance'] });
    try {
      feed.publishRun([{ type: EventType.RUN_STARTED, threadId, runId: 'r1' }]);
      feed.publishRun([{ type: EventType.TEXT_MESSAGE_START, messageId: 'u1', role: 'user' }]);
      await vi.advanceTimersByTimeAsync(0);
      expect(one.types).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START]);

      feed.publishRun([{ type: EventType.TEXT_MESSAGE_START, messageId: 'a1', role: 'assistant' }]);
      await vi.advanceTimersByTimeAsync(30);
      feed.publishRun([{ type: EventType.TEXT_MESSAGE_END, messageId: 'a1' }]);
      await vi.advanceTimersByTimeAsync(19);
      expect(one.frames).toHaveLength(2);
      feed.publishRun([{ type: EventType.RUN_FINISHED, threadId, runId: 'r1' }]);
      await vi.advanceTimersByTimeAsync(1);
      expect(one.types.slice(2)).toEqual([EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_END, EventType.RUN_FINISHED]);
      expect(one.sharedCalls).toBe(2);
      expect(clients.every((client) => client.frames.length === 5)).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('replays exactly after an id it handed out; any other id gets a snapshot, and moves nobody else', async () => {
    const feed = await startFeed();
    const first = new RecordingSink();
    await feed.attach(first, {});
    await runOnThread('hello');
    await first.runsEnded(1);
    const middle = first.frames[2].id;

    const resumed = new RecordingSink();
    await feed.attach(resumed, { lastEventId: middle });
    expect(resumed.frames).toEqual(first.frames.slice(3));

    // The feed's base (just before its first event) is where a snapshot taken before any event
    // left its client: from there, everything is replayed.
    const fromBase = new RecordingSink();
    await feed.attach(fromBase, { lastEventId: first.frames[0].id - 1 });
    expect(fromBase.frames).toEqual(first.frames);

    for (const stale of [first.frames[0].id - 2, first.frames.at(-1)!.id + 500, 1]) {
      const client = new RecordingSink();
      await feed.attach(client, { lastEventId: stale });
      expect(client.types).toEqual([EventType.RUN_STARTED, EventType.MESSAGES_SNAPSHOT, EventType.RUN_FINISHED]);
      // Only the frame that completes the bracket moves the client's id.
      expect(client.frames.map((f) => f.id)).toEqual([Number.NaN, Number.NaN, first.frames.at(-1)!.id]);
    }
    const lastId = first.frames.at(-1)!.id;
    await runOnThread('again');
    await first.runsEnded(2);
    // The stale ids changed nothing: the next run goes on right after the last id.
    expect(first.frames.find((f) => f.id > lastId)).toMatchObject({ id: lastId + 1, event: { type: EventType.RUN_STARTED } });
  });

  it('a snapshot taken before the first event leaves its client at the base, which resumes without a second snapshot', async () => {
    const feed = await startFeed();
    const early = new RecordingSink();
    await feed.attach(early, { snapshot: true });
    const position = early.frames.at(-1)!.id;
    await runOnThread('hello');
    await early.runsEnded(2); // its snapshot run, then the live one
    const back = new RecordingSink();
    await feed.attach(back, { lastEventId: position });
    expect(back.types[0]).toBe(EventType.RUN_STARTED);
    expect(back.types).not.toContain(EventType.MESSAGES_SNAPSHOT);
    expect(back.frames[0].id).toBe(position + 1);
  });

  it('never sends an empty snapshot: a history that fails to load cuts the client off before any frame, to retry', async () => {
    const feed = await startFeed({ loadHistory: () => Promise.reject(new Error('storage down')) });
    const other = new RecordingSink();
    await feed.attach(other, {});
    const client = new RecordingSink();
    await feed.attach(client, { snapshot: true });
    expect(client.frames).toEqual([]);
    expect(client.aborted).toMatch(/history could not be loaded/);
    // The others go on.
    await runOnThread('hello');
    await other.runsEnded(1);
    expect(client.frames).toEqual([]);
  });

  it('cuts off a client that falls behind by more than maxClientQueueBytes; the others go on', async () => {
    const feed = await startFeed();
    const [slow, fast] = [new RecordingSink(), new RecordingSink()];
    slow.queuedBytes = 4096;
    await feed.attach(slow, {});
    await feed.attach(fast, {});
    await runOnThread('hello');
    await fast.runsEnded(1);
    expect(slow.aborted).toMatch(/fell too far behind/);
    expect(fast.aborted).toBeUndefined();
  });

  it('closes every client and its open run when it closes', async () => {
    const feed = await startFeed();
    const client = new RecordingSink();
    await feed.attach(client, {});
    feed.close();
    expect(client.closed).toBe(true);
  });
});
