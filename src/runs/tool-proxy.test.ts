import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ResolvedConfig } from '../config.js';
import { BridgeError } from '../errors.js';
import { InProcessToolProxy } from './tool-proxy.js';

const proxyWith = (frontendToolTimeoutMs = 60_000) => new InProcessToolProxy({ frontendToolTimeoutMs } as ResolvedConfig);

/** The HTTP status the route would answer for a failed `answer()`. */
async function statusOf(answer: Promise<void>): Promise<number> {
  try {
    await answer;
    return 202;
  } catch (error) {
    return (error as BridgeError).status;
  }
}

describe('InProcessToolProxy', () => {
  afterEach(() => vi.useRealTimers());

  it('hands the answer to the waiting tool, whichever comes first', async () => {
    const proxy = proxyWith();
    const waiting = proxy.wait('r1', 'c1', 'pick_color', undefined, 'alice');
    await proxy.answer('r1', 'c1', 'alice', { content: 'teal' });
    expect(await waiting).toEqual({ content: 'teal' });

    // Answered the instant the call was announced, before its tool started waiting.
    proxy.expect('r1', 'c2', 'alice');
    await proxy.answer('r1', 'c2', 'alice', { content: 'navy', isError: false });
    expect(await proxy.wait('r1', 'c2', 'pick_color', undefined, 'alice')).toEqual({ content: 'navy', isError: false });
  });

  it('answers 404 for an unknown call or another resource, 409 for a second answer', async () => {
    const proxy = proxyWith();
    const waiting = proxy.wait('r1', 'c1', 'pick_color', undefined, 'alice');
    expect(await statusOf(proxy.answer('r1', 'nope', 'alice', { content: 1 }))).toBe(404);
    expect(await statusOf(proxy.answer('r1', 'c1', 'mallory', { content: 1 }))).toBe(404);
    expect(await statusOf(proxy.answer('r1', 'c1', 'alice', { content: 1 }))).toBe(202);
    expect(await statusOf(proxy.answer('r1', 'c1', 'alice', { content: 2 }))).toBe(409);
    expect(await statusOf(proxy.answer('r1', 'c1', 'mallory', { content: 2 }))).toBe(404);
    expect(await waiting).toEqual({ content: 1 });
  });

  it('fails the tool when no answer comes in time, saying how long it waited', async () => {
    vi.useFakeTimers();
    const proxy = proxyWith(250);
    const waiting = proxy.wait('r1', 'c1', 'pick_color', undefined, 'alice');
    vi.advanceTimersByTime(250);
    await expect(waiting).rejects.toThrow('Frontend tool pick_color timed out: no result was posted within 250 ms');
    expect(await statusOf(proxy.answer('r1', 'c1', 'alice', { content: 'late' }))).toBe(404);
  });

  it('fails the tool when the client leaves, and every call of a run when the run ends', async () => {
    const proxy = proxyWith();
    const leave = new AbortController();
    const left = proxy.wait('r1', 'c1', 'pick_color', leave.signal, 'alice');
    leave.abort();
    await expect(left).rejects.toThrow('the client disconnected');

    const calls = [proxy.wait('r2', 'a', 't', undefined, 'alice'), proxy.wait('r2', 'b', 't', undefined, 'alice')];
    const other = proxy.wait('r3', 'a', 't', undefined, 'alice');
    proxy.rejectRun('r2', 'alice', 'The run ended');
    for (const call of calls) await expect(call).rejects.toThrow('The run ended');
    await proxy.answer('r3', 'a', 'alice', { content: 'still waiting' });
    expect(await other).toEqual({ content: 'still waiting' });
  });

  it("another resource's run under the same run id fails none of its calls when it ends", async () => {
    const proxy = proxyWith();
    const alices = proxy.wait('r1', 'a', 't', undefined, 'alice');
    proxy.expect('r1', 'm', 'mallory');
    proxy.rejectRun('r1', 'mallory', 'The run ended');
    expect(await statusOf(proxy.answer('r1', 'm', 'mallory', { content: 'late' }))).toBe(404);
    await proxy.answer('r1', 'a', 'alice', { content: 'still waiting' });
    expect(await alices).toEqual({ content: 'still waiting' });
  });
});
