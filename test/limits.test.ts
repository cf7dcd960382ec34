import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { runInput, uid, userMessage } from './support/agui.js';
import { postRun, sseEvents } from './support/run.js';
import { http, useTestBridge } from './support/server.js';
import { openSse } from './support/sse.js';
import { useStandaloneServer } from './support/standalone.js';

describe('requests per minute per resource', () => {
  const tb = useTestBridge({ config: { limits: { requestsPerMinute: 3 } } });

  it('the steering routes and /run share a resource’s budget; past it 429 RATE_LIMITED with Retry-After; other resources unaffected', async () => {
    const resourceId = uid('busy');
    const threadId = uid('rate');
    expect((await http(`${tb.base}/threads`, { body: { resourceId, threadId } })).status).toBe(201);
    const send = () => http(`${tb.base}/threads/${threadId}/queue-message`, { body: { resourceId, message: 'hi' } });
    expect((await send()).status).toBe(202);
    expect((await send()).status).toBe(202);
    const run = await postRun(`${tb.base}/run`, runInput({ threadId: uid('rate-run'), messages: [userMessage('x')], forwardedProps: { resourceId } }));
    expect(run.status).toBe(200);
    for await (const _ of sseEvents(run.body!)) {
      // drained
    }
    const refused = await send();
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: expect.stringMatching(/Too many requests/), code: 'RATE_LIMITED' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const refusedRun = await postRun(`${tb.base}/run`, runInput({ threadId: uid('rate-run'), messages: [userMessage('x')], forwardedProps: { resourceId } }));
    expect(refusedRun.status).toBe(429);
    // Reads are not counted, and other resources have their own budget.
    expect((await http(`${tb.base}/threads/${threadId}?resourceId=${resourceId}`)).status).toBe(200);
    expect((await http(`${tb.base}/threads`, { body: { resourceId: uid('calm') } })).status).toBe(201);
    const metrics = await tb.bridge.metricsText();
    expect(metrics).toMatch(/agui_bridge_limit_refusals_total\{limit="requests_per_minute"\} 2/);
  });
});

describe('open event streams and concurrent runs', () => {
  const tb = useTestBridge({ config: { limits: { streamsPerResource: 2, streams: 3, runsPerResource: 1 } }, delayMs: 30 });

  const follow = (resourceId: string, threadId: string) => openSse(`${tb.base}/threads/${threadId}/events?resourceId=${resourceId}`);

  it('a resource’s third stream is 429; a closed stream frees its slot; the total cap holds for everyone', async () => {
    const alice = uid('alice');
    const threadId = uid('streams');
    const [s1, s2] = await Promise.all([follow(alice, threadId), follow(alice, threadId)]);
    await Promise.all([s1.waitForComment('connected'), s2.waitForComment('connected')]);
    const third = await http(`${tb.base}/threads/${threadId}/events?resourceId=${alice}`);
    expect(third.status).toBe(429);
    expect(third.body.code).toBe('RATE_LIMITED');
    expect(third.headers.get('retry-after')).toBe('5');
    const bob = uid('bob');
    const b1 = await follow(bob, uid('bob-thread'));
    await b1.waitForComment('connected');
    const overall = await http(`${tb.base}/threads/${uid('t')}/events?resourceId=${uid('carol')}`);
    expect(overall.status).toBe(429);
    expect(overall.body.error).toMatch(/on this server/);
    await s1.close();
    await expect
      .poll(
        async () => {
          const again = await follow(alice, threadId).catch(() => undefined); // refused: polled again
          if (!again) return false;
          await again.waitForComment('connected');
          await again.close();
          return true;
        },
        { timeout: 5000, interval: 50 },
      )
      .toBe(true);
    await Promise.all([s2.close(), b1.close()]);
  });

  it('one /run streaming per resource: a second one at once is 429; after the first ends, it runs', async () => {
    const resourceId = uid('runner');
    const first = await postRun(
      `${tb.base}/run`,
      runInput({ threadId: uid('r1'), messages: [userMessage('a long answer that streams for a while, word after word')], forwardedProps: { resourceId } }),
    );
    expect(first.status).toBe(200);
    const second = await postRun(`${tb.base}/run`, runInput({ threadId: uid('r2'), messages: [userMessage('hi')], forwardedProps: { resourceId } }));
    expect(second.status).toBe(429);
    expect((await second.json()).code).toBe('RATE_LIMITED');
    for await (const _ of sseEvents(first.body!)) {
      // the first run to its end
    }
    await expect
      .poll(
        async () => (await postRun(`${tb.base}/run`, runInput({ threadId: uid('r3'), messages: [userMessage('hi')], forwardedProps: { resourceId } }))).status,
        { timeout: 5000, interval: 50 },
      )
      .toBe(200);
  });
});

describe('slow clients on the standalone server', () => {
  const s = useStandaloneServer({ HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '1500' });

  /** Writes `parts` one by one, `gapMs` apart, and resolves with what the server said once it closed the socket (and when). */
  function trickle(parts: string[], gapMs: number): Promise<{ reply: string; closedAfterMs: number }> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(new URL(s.server.url).port), '127.0.0.1');
      const started = Date.now();
      let reply = '';
      let timer: NodeJS.Timeout | undefined;
      socket.setEncoding('utf8');
      socket.on('data', (chunk: Buffer) => (reply += chunk.toString()));
      socket.on('error', () => {});
      socket.on('close', () => {
        clearTimeout(timer);
        resolve({ reply, closedAfterMs: Date.now() - started });
      });
      let i = 0;
      const next = () => {
        if (socket.destroyed) return;
        if (i < parts.length) socket.write(parts[i++]);
        timer = setTimeout(next, gapMs);
      };
      next();
      setTimeout(() => reject(new Error('the server never closed the socket')), 20_000).unref();
    });
  }

  it('headers sent a byte at a time (slowloris): the socket is closed once HEADERS_TIMEOUT_MS has passed', async () => {
    const head = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ' + 'a'.repeat(200);
    const { closedAfterMs } = await trickle(head.split(''), 50);
    // Node checks these timeouts on an interval: closed within the timeout and one check.
    expect(closedAfterMs).toBeGreaterThanOrEqual(1000);
    expect(closedAfterMs).toBeLessThan(1000 + 2000);
  });

  it('a body sent slowly: 408 and the socket closed once REQUEST_TIMEOUT_MS has passed', async () => {
    const body = JSON.stringify({ resourceId: 'slow', title: 'x'.repeat(200) });
    const head = `POST /agui/threads HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const { reply, closedAfterMs } = await trickle([head, ...body.split('')], 50);
    expect(reply).toMatch(/^HTTP\/1\.1 408/);
    expect(closedAfterMs).toBeLessThan(1500 + 2000);
  });
});
