import { randomUUID } from 'node:crypto';
import { Mastra } from '@mastra/core';
import type { Agent } from '@mastra/core/agent';
import { InMemoryStore } from '@mastra/core/storage';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDemoAgent } from '../../demo/agent.js';
import type { RedisPubSub } from './redis-pubsub.js';
import { pubsubTestbed } from '../../../test/support/redis-pubsub.js';
import { watchThread } from '../../../test/support/thread-watch.js';

// A real Mastra on a RedisPubSub: the demo agent (scripted model, in-memory storage), driven
// through Mastra's public agent API. A second Mastra on its own RedisPubSub (same Redis, same
// prefix, same storage) stands for a second process following the thread.

const redis = pubsubTestbed('mastra');
let storage: InMemoryStore;
let pubsub: RedisPubSub;
let mastra: Mastra;
let demo: Agent;

/** A Mastra "process": the demo agent on a RedisPubSub of its own, over the shared storage. */
function mastraProcess(bus: RedisPubSub, options: { backgroundTasks?: boolean } = {}): Mastra {
  // 20 ms between model parts: a run lasts long enough to send into it while it is active.
  const demoAgent = createDemoAgent({ storage, delayMs: 20, slowTaskMs: 50 });
  return new Mastra({ agents: { demo: demoAgent }, storage, pubsub: bus, logger: false, backgroundTasks: { enabled: options.backgroundTasks ?? false } });
}

beforeAll(async () => {
  await redis.connect();
  storage = new InMemoryStore();
  pubsub = redis.pubsub();
  mastra = mastraProcess(pubsub);
  demo = mastra.getAgent('demo');
});
afterAll(async () => {
  await mastra.shutdown(); // Mastra does not close its pubsub: cleanup() does
  await redis.cleanup();
});

type Scope = { resourceId: string; threadId: string };
type Chunk = { type: string; runId?: string; payload?: { text?: string } };
const newScope = (): Scope => ({ resourceId: `user-${randomUUID()}`, threadId: `thread-${randomUUID()}` });
/** Mastra's key for a thread (its topic, its lease): resource and thread id joined by NUL. */
const threadKey = (scope: Scope) => `${scope.resourceId}\0${scope.threadId}`;
const threadStreamKey = (scope: Scope) => redis.topicKey(`agent.thread-stream.${encodeURIComponent(threadKey(scope))}`);
/** Long enough (one streamed part per word) to still be running when the next message is sent. */
const LONG_MESSAGE = Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ');

/** What `agent.subscribeToThread` gives: every chunk of every run on the thread, and a way to wait for one. */
const follow = (agent: Agent, scope: Scope) => watchThread(agent, scope);

describe('a Mastra app on RedisPubSub', () => {
  it('agent.stream() completes', async () => {
    const output = await demo.stream('hello');
    expect(await output.text).toBe('Echo: hello');
  });

  it("sendMessage wakes an idle thread and subscribeToThread gets the run's chunks; a message sent while it runs is delivered into it", async () => {
    const scope = newScope();
    const thread = await follow(demo, scope);

    const first = await demo.sendMessage(LONG_MESSAGE, scope).accepted;
    expect(first).toMatchObject({ action: 'wake', runId: expect.any(String) });
    const runId = first.action === 'wake' ? first.runId : '';
    await thread.until((c) => c.type === 'text-delta' && c.runId === runId);
    // The run holds the thread's lease, in Redis.
    expect(await redis.inspect.get(`${redis.prefix}:lease:${threadKey(scope)}`)).toBe(runId);

    const second = await demo.sendMessage('and one more thing', scope).accepted;
    expect(second).toEqual({ action: 'deliver', runId });

    await thread.until((c) => c.type === 'finish' && c.runId === runId);
    expect(thread.of(runId)).toEqual(expect.arrayContaining(['start', 'text-delta', 'finish']));
    // The message delivered into the run was answered in that same run, and stored on the thread.
    expect(thread.textOf(runId)).toContain('Echo: and one more thing');
    const { messages } = await (await demo.getMemory())!.recall({ threadId: scope.threadId, resourceId: scope.resourceId });
    expect(messages.map((m) => m.role)).toEqual(['signal', 'assistant', 'signal', 'assistant']);
    expect(JSON.stringify(messages[2].content)).toContain('and one more thing');
    await vi.waitFor(async () => expect(await pubsub.getLeaseOwner(threadKey(scope))).toBeUndefined());
    // The thread's events went through its stream in Redis (and Mastra never clears that topic).
    expect(await redis.inspect.xLen(threadStreamKey(scope))).toBeGreaterThan(thread.of(runId).length);
    thread.close();
  });

  it('background tasks run: a tool the model calls runs detached and completes; the workers read as consumer-group members', async () => {
    const bus = redis.pubsub();
    const app = mastraProcess(bus, { backgroundTasks: true });
    const scope = newScope();
    const output = await app.getAgent('demo').stream('a slow job please', { memory: { thread: scope.threadId, resource: scope.resourceId } });
    const types: string[] = [];
    for await (const chunk of output.fullStream as AsyncIterable<Chunk>) types.push(chunk.type);
    expect(types).toContain('background-task-started');

    const manager = app.backgroundTaskManager;
    await vi.waitFor(async () => {
      const { tasks } = await manager!.listTasks({ threadId: scope.threadId });
      expect(tasks.map((task) => [task.toolName, task.status])).toEqual([['slow_task', 'completed']]);
    });
    // A pull pubsub: the OrchestrationWorker reads `workflows` in a group; task dispatch has its group. One connection each.
    const connections = (await redis.inspect.clientList()).map((c) => c.name).filter((name) => name.includes(bus.instanceId));
    expect(connections.some((name) => name.endsWith(':group_mastra-orchestration_reader'))).toBe(true);
    expect(connections.some((name) => name.endsWith(':group_background-task-workers_reader'))).toBe(true);
    await app.shutdown();
  });

  // Both Mastras share @mastra/core's thread runtime (a module singleton), but it keeps its state
  // per pubsub: what the second one follows reaches it only through its own RedisPubSub.
  it('another process following the thread gets the run through Redis', async () => {
    const otherPubsub = redis.pubsub();
    const other = mastraProcess(otherPubsub);
    const scope = newScope();
    const remote = await follow(other.getAgent('demo'), scope);

    const woken = await demo.sendMessage('hello from the first process', scope).accepted;
    expect(woken.action).toBe('wake');
    const runId = woken.action === 'wake' ? woken.runId : '';
    await remote.until((c) => c.type === 'finish' && c.runId === runId);
    expect(remote.of(runId)).toEqual(expect.arrayContaining(['start', 'text-delta', 'finish']));
    remote.close();
    await other.shutdown();
  });

  it('a follower that subscribes after a run ended is handed that run again: Mastra subscribes from the earliest entry the stream holds', async () => {
    const scope = newScope();
    const woken = await demo.sendMessage('wake me', scope).accepted;
    const runId = woken.action === 'wake' ? woken.runId : '';
    await vi.waitFor(async () => expect(await pubsub.getLeaseOwner(threadKey(scope))).toBeUndefined());

    // subscribeToThread subscribes to the thread topic with no startFrom (so: earliest), and
    // replays a finished run whose `run-completed` says it was persisted.
    const late = await follow(demo, scope);
    await late.until((c) => c.type === 'finish' && c.runId === runId);
    expect(late.of(runId)).toEqual(expect.arrayContaining(['start', 'text-delta', 'finish']));
    late.close();
  });
});
