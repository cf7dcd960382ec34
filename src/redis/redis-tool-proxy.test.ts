import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BridgeError } from '../errors.js';
import type { RedisConnection } from './connection.js';
import { redisKeys } from './keys.js';
import { testConfig, testRedis } from '../../test/support/redis.js';
import { RedisToolProxy, type RedisToolProxyOptions } from './redis-tool-proxy.js';

// Proxies on connections of their own stand for bridge processes on one Redis: the run's tool
// waits in process A, the client's answer may be posted to A or to B.

const redis = testRedis('tools');
const keys = redisKeys(redis.prefix);
// No rechecks within a test: an answer that arrives was woken by its publish.
const wakeOnly: RedisToolProxyOptions = { recheckMs: 60_000 };
let connA: RedisConnection;
let connB: RedisConnection;
let a: RedisToolProxy;
let b: RedisToolProxy;

beforeAll(async () => {
  [connA, connB] = [await redis.connect(), await redis.connect()];
  a = new RedisToolProxy(connA, testConfig(), wakeOnly);
  b = new RedisToolProxy(connB, testConfig(), wakeOnly);
});
afterAll(() => redis.cleanup());

/** The HTTP status the route would answer for a failed `answer()`. */
async function statusOf(answer: Promise<void>): Promise<number> {
  try {
    await answer;
    return 202;
  } catch (error) {
    return (error as BridgeError).status;
  }
}

const newRun = () => `run-${randomUUID()}`;
/** Resolves once the call's slot is in Redis (as it is before the client sees the call). */
const opened = (runId: string, toolCallId: string) => vi.waitFor(async () => expect(await connB.client.exists(keys.tool(runId, toolCallId))).toBe(1));

// In one process, a slot is there as soon as `wait()` or `expect()` returns, as in memory.
describe('RedisToolProxy in one process: as InProcessToolProxy', () => {
  it('hands the answer to the waiting tool, whichever comes first', async () => {
    const r1 = newRun();
    const waiting = a.wait(r1, 'c1', 'pick_color', undefined, 'alice');
    await a.answer(r1, 'c1', 'alice', { content: 'teal' });
    expect(await waiting).toEqual({ content: 'teal' });

    // Answered the instant the call was announced, before its tool started waiting.
    a.expect(r1, 'c2', 'alice');
    await a.answer(r1, 'c2', 'alice', { content: 'navy', isError: false });
    expect(await a.wait(r1, 'c2', 'pick_color', undefined, 'alice')).toEqual({ content: 'navy', isError: false });
  });

  it('answers 404 for an unknown call or another resource, 409 for a second answer', async () => {
    const r1 = newRun();
    const waiting = a.wait(r1, 'c1', 'pick_color', undefined, 'alice');
    expect(await statusOf(a.answer(r1, 'nope', 'alice', { content: 1 }))).toBe(404);
    expect(await statusOf(a.answer(r1, 'c1', 'mallory', { content: 1 }))).toBe(404);
    expect(await statusOf(a.answer(r1, 'c1', 'alice', { content: 1 }))).toBe(202);
    expect(await statusOf(a.answer(r1, 'c1', 'alice', { content: 2 }))).toBe(409);
    expect(await statusOf(a.answer(r1, 'c1', 'mallory', { content: 2 }))).toBe(404);
    expect(await waiting).toEqual({ content: 1 });
  });

  it('raises the same errors as InProcessToolProxy', async () => {
    const r1 = newRun();
    a.expect(r1, 'c1', 'alice');
    const unknown = await a.answer(r1, 'nope', 'alice', { content: 1 }).catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(BridgeError);
    expect(unknown).toMatchObject({ status: 404, code: 'TOOL_CALL_NOT_FOUND', message: `No pending tool call nope in run ${r1}` });
    await a.answer(r1, 'c1', 'alice', { content: 1 });
    const twice = await a.answer(r1, 'c1', 'alice', { content: 2 }).catch((error: unknown) => error);
    expect(twice).toBeInstanceOf(BridgeError);
    expect(twice).toMatchObject({ status: 409, code: 'CONFLICT', message: 'Tool call c1 was already answered' });
    a.rejectRun(r1, 'alice', 'The run ended');
  });

  it('fails the tool when no answer comes in time, saying how long it waited', async () => {
    const quick = new RedisToolProxy(connA, testConfig(250), wakeOnly);
    const r1 = newRun();
    const waiting = quick.wait(r1, 'c1', 'pick_color', undefined, 'alice');
    await expect(waiting).rejects.toThrow('Frontend tool pick_color timed out: no result was posted within 250 ms');
    expect(await statusOf(quick.answer(r1, 'c1', 'alice', { content: 'late' }))).toBe(404);
  });

  it("another resource's run under the same run id fails none of its calls when it ends", async () => {
    const r1 = newRun();
    const alices = a.wait(r1, 'a', 't', undefined, 'alice');
    a.expect(r1, 'm', 'mallory');
    a.rejectRun(r1, 'mallory', 'The run ended');
    expect(await statusOf(a.answer(r1, 'm', 'mallory', { content: 'late' }))).toBe(404);
    await b.answer(r1, 'a', 'alice', { content: 'still waiting' });
    expect(await alices).toEqual({ content: 'still waiting' });
  });

  it('fails the tool when the client leaves, and every call of a run when the run ends', async () => {
    const [r1, r2, r3] = [newRun(), newRun(), newRun()];
    const leave = new AbortController();
    const left = a.wait(r1, 'c1', 'pick_color', leave.signal, 'alice');
    leave.abort();
    await expect(left).rejects.toThrow('Frontend tool pick_color was cancelled: the client disconnected');
    expect(await statusOf(a.answer(r1, 'c1', 'alice', { content: 'late' }))).toBe(404);

    const calls = [a.wait(r2, 'a', 't', undefined, 'alice'), a.wait(r2, 'b', 't', undefined, 'alice')];
    const other = a.wait(r3, 'a', 't', undefined, 'alice');
    a.rejectRun(r2, 'alice', 'The run ended');
    for (const call of calls) await expect(call).rejects.toThrow('The run ended');
    await a.answer(r3, 'a', 'alice', { content: 'still waiting' });
    expect(await other).toEqual({ content: 'still waiting' });
  });

  it('fails at once when the signal has already aborted', async () => {
    const leave = new AbortController();
    leave.abort();
    await expect(a.wait(newRun(), 'c1', 'pick_color', leave.signal, 'alice')).rejects.toThrow('the client disconnected');
  });
});

describe('RedisToolProxy across processes', () => {
  it('delivers an answer posted to B to the tool waiting in A', async () => {
    const r1 = newRun();
    a.expect(r1, 'c1', 'alice');
    const waiting = a.wait(r1, 'c1', 'pick_color', undefined, 'alice');
    await opened(r1, 'c1');
    await b.answer(r1, 'c1', 'alice', { content: { color: 'teal' }, isError: false });
    expect(await waiting).toEqual({ content: { color: 'teal' }, isError: false });
  });

  it('keeps an answer posted to B before the tool in A waits', async () => {
    const r1 = newRun();
    a.expect(r1, 'c1', 'alice');
    await opened(r1, 'c1');
    await b.answer(r1, 'c1', 'alice', { content: 'navy' });
    expect(await a.wait(r1, 'c1', 'pick_color', undefined, 'alice')).toEqual({ content: 'navy' });
  });

  it('answers a second answer 409 from either process, before and after the tool took the first', async () => {
    const r1 = newRun();
    a.expect(r1, 'c1', 'alice');
    await opened(r1, 'c1');
    const first = [b.answer(r1, 'c1', 'alice', { content: 1 }), a.answer(r1, 'c1', 'alice', { content: 2 })];
    // Sent at once from two processes: exactly one wins.
    expect((await Promise.all(first.map(statusOf))).sort()).toEqual([202, 409]);
    const answer = await a.wait(r1, 'c1', 'pick_color', undefined, 'alice');
    expect([1, 2]).toContain(answer.content);
    expect(await statusOf(a.answer(r1, 'c1', 'alice', { content: 3 }))).toBe(409);
    expect(await statusOf(b.answer(r1, 'c1', 'alice', { content: 3 }))).toBe(409);
    expect(await statusOf(b.answer(r1, 'c1', 'mallory', { content: 3 }))).toBe(404);
  });

  it("answers 404 for an unknown call and for another resource's call", async () => {
    const r1 = newRun();
    const waiting = a.wait(r1, 'c1', 'pick_color', undefined, 'alice');
    await opened(r1, 'c1');
    expect(await statusOf(b.answer(r1, 'nope', 'alice', { content: 1 }))).toBe(404);
    expect(await statusOf(b.answer(newRun(), 'c1', 'alice', { content: 1 }))).toBe(404);
    expect(await statusOf(b.answer(r1, 'c1', 'mallory', { content: 1 }))).toBe(404);
    await b.answer(r1, 'c1', 'alice', { content: 'mine' });
    expect(await waiting).toEqual({ content: 'mine' });
  });

  it('answers 404 after the tool in A timed out', async () => {
    const quick = new RedisToolProxy(connA, testConfig(250), wakeOnly);
    const r1 = newRun();
    await expect(quick.wait(r1, 'c1', 'pick_color', undefined, 'alice')).rejects.toThrow('within 250 ms');
    expect(await statusOf(b.answer(r1, 'c1', 'alice', { content: 'late' }))).toBe(404);
  });

  it("fails A's calls when its run ends: later answers on B are 404, one already given stays 409", async () => {
    const [r2, r3] = [newRun(), newRun()];
    const calls = [a.wait(r2, 'a', 't', undefined, 'alice'), a.wait(r2, 'b', 't', undefined, 'alice')];
    a.expect(r2, 'streamed', 'alice'); // announced, never waited on
    a.expect(r2, 'answered', 'alice');
    const other = a.wait(r3, 'a', 't', undefined, 'alice');
    await Promise.all([opened(r2, 'a'), opened(r2, 'b'), opened(r2, 'streamed'), opened(r2, 'answered'), opened(r3, 'a')]);
    await b.answer(r2, 'answered', 'alice', { content: 'early' });

    a.rejectRun(r2, 'alice', 'The run ended before the tool call was answered');
    for (const call of calls) await expect(call).rejects.toThrow('The run ended before the tool call was answered');
    expect(await statusOf(b.answer(r2, 'a', 'alice', { content: 'late' }))).toBe(404);
    expect(await statusOf(b.answer(r2, 'streamed', 'alice', { content: 'late' }))).toBe(404);
    expect(await statusOf(b.answer(r2, 'answered', 'alice', { content: 'again' }))).toBe(409);

    await b.answer(r3, 'a', 'alice', { content: 'still waiting' });
    expect(await other).toEqual({ content: 'still waiting' });
  });

  it('finds an answer whose wake-up was lost at its next recheck', async () => {
    const rechecking = new RedisToolProxy(connA, testConfig(), { recheckMs: 50 });
    const r1 = newRun();
    const waiting = rechecking.wait(r1, 'c1', 'pick_color', undefined, 'alice');
    await opened(r1, 'c1');
    // Answered behind the proxy's back: stored, never published.
    await connB.client.hSet(keys.tool(r1, 'c1'), { state: 'answered', answer: JSON.stringify({ content: 'quiet' }) });
    expect(await waiting).toEqual({ content: 'quiet' });
  });

  it('keeps slots in Redis under <prefix>:tool:<runId>:<toolCallId>, with a TTL', async () => {
    const r1 = newRun();
    a.expect(r1, 'c:1', 'alice');
    await opened(r1, 'c:1');
    const key = `${redis.prefix}:tool:${r1}:c%3A1`;
    expect(await connB.client.hGetAll(key)).toEqual({ resource: 'alice', state: 'pending' });
    expect(await connB.client.pTTL(key)).toBeGreaterThan(60_000);
    a.rejectRun(r1, 'alice', 'done');
  });
});
