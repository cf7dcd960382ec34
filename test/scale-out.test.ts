import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deserialize } from '../src/redis/pubsub/codec.js';
import { runInput, uid, userMessage } from './support/agui.js';
import { createCluster, follow, history, LONG_MESSAGE, post, RESOURCE, startRun, text, type Cluster } from './support/cluster.js';
import type { ServerProcess } from './support/process.js';
import { http } from './support/server.js';

/**
 * Two real bridge processes on one Redis and one PostgreSQL schema: a thread followed on one is
 * steered from the other, with the answers and effects of one process.
 */
let cluster: Cluster;
let a: ServerProcess;
let b: ServerProcess;

beforeAll(async () => {
  cluster = await createCluster('scale', { DEMO_DELAY_MS: '20', SLOW_TASK_MS: '200' });
  // One first, so that it creates the schema's tables alone.
  a = await cluster.start();
  b = await cluster.start();
}, 60_000);
afterAll(() => cluster?.close());

describe('a thread followed on A, steered from B', { timeout: 60_000 }, () => {
  it('send-message on B wakes the idle thread: A’s follower sees the whole run', async () => {
    const threadId = uid('wake');
    const follower = await follow(a, threadId);
    const sent = await post(b, `/threads/${threadId}/send-message`, { message: 'hello from B' });
    expect(sent.status).toBe(202);
    expect(sent.body.action).toBe('wake');
    await follower.waitForEvent((e) => e.type === 'RUN_FINISHED');
    expect(text(follower.events.map((e) => e.event))).toContain('hello from B');
    await follower.close();
  });

  it('send-message on B during a run on A joins that run', async () => {
    const threadId = uid('deliver');
    const run = await startRun(a, threadId, LONG_MESSAGE);
    const sent = await post(b, `/threads/${threadId}/send-message`, { message: 'joined from B' });
    expect(sent.body).toMatchObject({ action: 'deliver', runId: run.events[0].runId });
    await run.rest;
    const stored = await history(b, threadId);
    expect(stored.filter((m) => m.id === sent.body.signalId)).toHaveLength(1);
  });

  it('queue-message on B waits for A’s run, and runs after it; cancel on B cancels one', async () => {
    const threadId = uid('queue');
    const run = await startRun(a, threadId, LONG_MESSAGE);
    const queued = await post(b, `/threads/${threadId}/queue-message`, { message: 'queued on B' });
    const dropped = await post(b, `/threads/${threadId}/queue-message`, { message: 'cancelled on B' });
    expect(queued.status).toBe(202);
    const cancel = await http(`${b.url}/threads/${threadId}/queue/${dropped.body.signalId}?resourceId=${RESOURCE}`, { method: 'DELETE' });
    expect(cancel.body).toEqual({ cancelled: [dropped.body.signalId] });
    await run.rest;
    await expect
      .poll(async () => (await history(b, threadId)).some((m) => m.role === 'assistant' && String(m.content).includes('queued on B')), { timeout: 15_000 })
      .toBe(true);
    const stored = await history(b, threadId);
    const at = stored.findIndex((m) => m.id === queued.body.signalId);
    const firstAnswer = stored.findIndex((m) => m.role === 'assistant');
    expect(at).toBeGreaterThan(firstAnswer);
    expect(stored.some((m) => m.id === dropped.body.signalId)).toBe(false);
  });

  it('abort on B stops the run streaming on A', async () => {
    const threadId = uid('abort');
    const run = await startRun(a, threadId, 'a long answer that streams for a while, word after word after word, and more words still');
    const abort = await post(b, `/threads/${threadId}/abort`);
    expect(abort.body).toEqual({ aborted: true });
    const events = await run.rest;
    expect(events.at(-1)?.type).toMatch(/RUN_FINISHED|RUN_ERROR/);
    expect(text(events)).not.toContain('still');
  });

  it('an approval on B resumes the call once; a second one, from A, is 409', async () => {
    const threadId = uid('approve');
    const run = await startRun(a, threadId, 'please delete notes.txt');
    await run.rest;
    const pending = await http(`${b.url}/threads/${threadId}/pending-approvals?resourceId=${RESOURCE}`);
    expect(pending.body).toHaveLength(1);
    const { toolCallId } = pending.body[0];
    const [first, second] = await Promise.all([
      post(b, `/threads/${threadId}/tool-approval`, { toolCallId, approved: true }),
      post(a, `/threads/${threadId}/tool-approval`, { toolCallId, approved: true }),
    ]);
    expect([first.status, second.status].sort()).toEqual([202, 409]);
    await expect.poll(async () => (await history(a, threadId)).some((m) => String(m.content).includes('Deleted as requested')), { timeout: 15_000 }).toBe(true);
  });

  it('a frontend tool result posted to B reaches the tool waiting on A', async () => {
    const threadId = uid('frontend');
    const tools = [{ name: 'pick_color', description: 'pick', parameters: { type: 'object', properties: { color: { type: 'string' } } } }];
    const run = await startRun(a, threadId, 'use pick_color', { tools });
    const call = run.events.find((e) => e.type === 'TOOL_CALL_START')!;
    const result = (server: ServerProcess, content: string) =>
      http(`${server.url}/runs/${run.input.runId}/tool-calls/${call.toolCallId}/result?resourceId=${RESOURCE}`, { body: { content } });
    const answer = await result(b, 'teal');
    expect(answer.status).toBe(202);
    const again = await result(a, 'red');
    expect(again.status).toBe(409);
    const events = await run.rest;
    expect(events.find((e) => e.type === 'TOOL_CALL_RESULT')?.content).toContain('teal');
  });

  it('a /run on B while A runs the thread waits its turn', async () => {
    const threadId = uid('turns');
    const first = await startRun(a, threadId, 'a long answer that streams for a while, word after word');
    const second = await startRun(b, threadId, 'second question');
    const [firstEvents] = await Promise.all([first.rest, second.rest]);
    expect(firstEvents.at(-1)?.type).toBe('RUN_FINISHED');
    const stored = await history(a, threadId);
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  });

  it('a /run on B with multitask "reject" while A runs the thread is 409 THREAD_BUSY; with "interrupt" it cuts A’s run short and answers', async () => {
    const threadId = uid('multitask');
    const first = await startRun(a, threadId, LONG_MESSAGE);
    const refused = await http(`${b.url}/run`, {
      body: runInput({ threadId, messages: [userMessage('refused')], forwardedProps: { resourceId: RESOURCE, multitask: 'reject' } }),
    });
    expect(refused).toMatchObject({ status: 409, body: { code: 'THREAD_BUSY' } });

    const second = await startRun(b, threadId, 'second question', { forwardedProps: { resourceId: RESOURCE, multitask: 'interrupt' } });
    const [cut, answered] = await Promise.all([first.rest, second.rest]);
    expect(cut.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
    expect(answered.at(-1)?.type).toBe('RUN_FINISHED');
    expect(text(answered)).toBe('Echo: second question');
    const stored = await history(a, threadId);
    expect(stored.map((m) => [m.role, m.content])).toEqual([
      ['user', LONG_MESSAGE],
      ['assistant', text(cut)],
      ['user', 'second question'],
      ['assistant', 'Echo: second question'],
    ]);
  });
});

describe('each run is translated once, in its process', { timeout: 60_000 }, () => {
  it('a follower on B that comes while A runs the thread, with no follower on A, gets the run from its RUN_STARTED', async () => {
    const threadId = uid('midrun');
    const run = await startRun(a, threadId, LONG_MESSAGE);
    const onB = await follow(b, threadId);
    const events = await run.rest;
    await onB.waitForEvent((e) => e.type === 'RUN_FINISHED');
    // What B's follower got is the run as /run streamed it, bracket and all.
    expect(onB.events.map((e) => e.event.type)).toEqual(events.map((e) => e.type));
    expect(text(onB.events.map((e) => e.event))).toBe(text(events));
    await onB.close();
  });

  it('a process that answers at once, with no follower of its own, writes every short run for a follower elsewhere', async () => {
    const quick = await cluster.start({ DEMO_DELAY_MS: '0' });
    // Eight at once, 200 words each: a busy process, each run over in a few milliseconds.
    const words = Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ');
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        const threadId = uid('short');
        const onA = await follow(a, threadId);
        const events = await (await startRun(quick, threadId, words)).rest;
        await onA.waitForEvent((e) => e.type === 'RUN_FINISHED');
        // The run as /run streamed it (the thread's stream adds the run's input to RUN_STARTED).
        expect(onA.events.slice(1).map((e) => e.event)).toEqual(events.slice(1));
        await onA.close();
      }),
    );
  });

  it('a run’s chunks stay in its process: the thread’s Mastra topic in Redis holds only their ends', async () => {
    const threadId = uid('local-chunks');
    const onB = await follow(b, threadId);
    const events = await (await startRun(a, threadId, LONG_MESSAGE)).rest;
    await onB.waitForEvent((e) => e.type === 'RUN_FINISHED');
    expect(text(onB.events.map((e) => e.event))).toBe(text(events));
    const redis = createClient({ url: cluster.redis.url });
    await redis.connect();
    try {
      const topic = `${cluster.redis.prefix}:mastra:topic:agent.thread-stream.${encodeURIComponent(`${RESOURCE}\0${threadId}`)}`;
      const entries = (await redis.xRange(topic, '-', '+')) ?? [];
      const published = entries.map((entry) => deserialize(entry.message.e) as { type: string; data: { part?: { type: string } } });
      const parts = published.filter((event) => event.type === 'stream-part').map((event) => event.data.part?.type);
      // Mastra's control events (the run registered, completed…) still go to every process.
      expect(published.some((event) => event.type === 'run-registered')).toBe(true);
      expect(parts).toEqual(['finish']);
    } finally {
      await redis.close();
    }
    await onB.close();
  });
});

describe('event ids are global per thread', { timeout: 60_000 }, () => {
  it('a client that reconnects to the other process with Last-Event-ID gets exactly what it missed', async () => {
    const threadId = uid('ids');
    const onA = await follow(a, threadId);
    const onB = await follow(b, threadId);
    await post(a, `/threads/${threadId}/send-message`, { message: 'first' });
    await onA.waitForEvent((e) => e.type === 'RUN_FINISHED');
    await onB.waitForEvent((e) => e.type === 'RUN_FINISHED');
    // Both processes number the thread's events alike.
    expect(onB.events.map((e) => e.id)).toEqual(onA.events.map((e) => e.id));
    const cut = onA.events[2].id;
    await onA.close();
    await post(b, `/threads/${threadId}/send-message`, { message: 'second' });
    await onB.waitForCount('RUN_FINISHED', 2);
    const back = await follow(b, threadId, { 'Last-Event-ID': String(cut) });
    await back.waitForCount('RUN_FINISHED', 2);
    expect(back.events.map((e) => e.id)).toEqual(onB.events.filter((e) => e.id > cut).map((e) => e.id));
    expect(back.events.some((e) => e.event.type === 'MESSAGES_SNAPSHOT')).toBe(false);
    // A fresh subscriber gets no old run replayed as live.
    const fresh = await follow(a, threadId);
    await post(b, `/threads/${threadId}/send-message`, { message: 'third' });
    await fresh.waitForEvent((e) => e.type === 'RUN_FINISHED');
    expect(fresh.events.filter((e) => e.event.type === 'RUN_STARTED')).toHaveLength(1);
    expect(text(fresh.events.map((e) => e.event))).toContain('third');
    await Promise.all([back.close(), onB.close(), fresh.close()]);
  });
});
