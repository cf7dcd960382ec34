import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Mastra } from '@mastra/core';
import { InMemoryStore } from '@mastra/core/storage';
import { MastraServer } from '@mastra/hono';
import { Hono } from 'hono';
import { pino } from 'pino';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createDemoAgent } from '../src/demo/agent.js';
import { createBridge } from '../src/index.js';
import { readServerEnv } from '../src/server/env.js';
import type { RunningServer } from '../src/server/standalone.js';
import { runInput, runStrict, uid, userMessage } from './support/agui.js';
import { http, silentLogger } from './support/server.js';
import { openSse } from './support/sse.js';
import { useStandaloneServer } from './support/standalone.js';

const quiet = { log: pino({ level: 'silent' }) };

/** The metrics as a map from series (`name{labels}`, as printed) to value. */
async function scrape(origin: string, headers: Record<string, string> = {}): Promise<Map<string, number>> {
  const res = await fetch(`${origin}/metrics`, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  const series = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    series.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return series;
}

/** How much each series grew while `action` ran. */
async function delta(origin: string, action: () => Promise<unknown>): Promise<(series: string) => number> {
  const before = await scrape(origin);
  await action();
  const after = await scrape(origin);
  return (series) => (after.get(series) ?? 0) - (before.get(series) ?? 0);
}

describe('GET /metrics follows real traffic', () => {
  const standalone = useStandaloneServer({}, { logger: silentLogger }, quiet);
  let server: RunningServer;
  let origin: string;
  beforeAll(() => ({ server, origin } = standalone));

  it('serves the Prometheus text format, open without METRICS_TOKEN, with the process metrics', async () => {
    const res = await fetch(`${origin}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('# TYPE agui_bridge_runs_started_total counter');
    expect(text).toContain('# TYPE agui_bridge_http_request_duration_seconds histogram');
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('nodejs_eventloop_lag_seconds');
  });

  it('a /run of the demo agent counts a run started and finished, its events, and the request by route and status', async () => {
    let received = 0;
    const grew = await delta(origin, () =>
      runStrict(
        `${server.url}/run`,
        runInput({ messages: [userMessage('hello there')], forwardedProps: { resourceId: uid('metrics-user') } }),
        () => received++,
      ),
    );
    expect(grew('agui_bridge_runs_started_total{agent="demo",origin="run"}')).toBe(1);
    expect(grew('agui_bridge_runs_finished_total{agent="demo",origin="run",outcome="success"}')).toBe(1);
    // The client's pipeline adds no event, so what it saw is what the bridge sent.
    expect(received).toBeGreaterThan(3);
    expect(grew('agui_bridge_events_sent_total{stream="run"}')).toBe(received);
    expect(grew('agui_bridge_http_requests_total{method="POST",route="/agui/run",status="200"}')).toBe(1);
    expect(grew('agui_bridge_http_request_duration_seconds_count{method="POST",route="/agui/run",status="200"}')).toBe(1);
    const open = await scrape(origin);
    expect(open.get('agui_bridge_open_run_streams')).toBe(0);
  });

  it('an approval ends the run with an interrupt; a failing model with RUN_ERROR', async () => {
    const resourceId = uid('metrics-user');
    const grew = await delta(origin, async () => {
      await runStrict(`${server.url}/run`, runInput({ messages: [userMessage('Please delete report.pdf')], forwardedProps: { resourceId } }));
      await runStrict(`${server.url}/run`, runInput({ messages: [userMessage('please fail')], forwardedProps: { resourceId } }));
    });
    expect(grew('agui_bridge_runs_started_total{agent="demo",origin="run"}')).toBe(2);
    expect(grew('agui_bridge_runs_finished_total{agent="demo",origin="run",outcome="interrupt"}')).toBe(1);
    expect(grew('agui_bridge_runs_errored_total{agent="demo",origin="run"}')).toBe(1);
  });

  it('a refused request is counted under its route pattern, never its path', async () => {
    const threadId = uid('missing-thread');
    const grew = await delta(origin, () => http(`${server.url}/threads/${threadId}?resourceId=nobody`));
    expect(grew('agui_bridge_http_requests_total{method="GET",route="/agui/threads/:threadId",status="404"}')).toBe(1);
    const text = await (await fetch(`${origin}/metrics`)).text();
    expect(text).not.toContain(threadId);
  });

  it('an events stream moves the followers and followed threads gauges; a signal moves the decisions, a woken run and the thread events', async () => {
    const resourceId = uid('metrics-user');
    const threadId = uid('metrics-thread');
    const before = await scrape(origin);
    const sse = await openSse(`${server.url}/threads/${threadId}/events?resourceId=${resourceId}`);
    await sse.waitForComment('connected');
    await vi.waitFor(async () => expect((await scrape(origin)).get('agui_bridge_followers')).toBe(1));
    const following = await scrape(origin);
    expect(following.get('agui_bridge_followed_threads')).toBe(1);
    expect((following.get('agui_bridge_follower_joins_total{kind="live"}') ?? 0) - (before.get('agui_bridge_follower_joins_total{kind="live"}') ?? 0)).toBe(1);
    // The events route's latency is its time to the headers: observed while the stream is still open.
    expect(following.get('agui_bridge_http_requests_total{method="GET",route="/agui/threads/:threadId/events",status="200"}')).toBe(1);

    const sent = await http(`${server.url}/threads/${threadId}/send-message`, { body: { resourceId, message: 'hello there' } });
    expect(sent).toMatchObject({ status: 202, body: { action: 'wake' } });
    await sse.waitForEvent((e) => e.type === 'RUN_FINISHED');
    await vi.waitFor(async () => {
      const after = await scrape(origin);
      const grew = (series: string) => (after.get(series) ?? 0) - (before.get(series) ?? 0);
      expect(grew('agui_bridge_signal_decisions_total{kind="send",action="wake"}')).toBe(1);
      expect(grew('agui_bridge_runs_started_total{agent="demo",origin="signal"}')).toBe(1);
      expect(grew('agui_bridge_runs_finished_total{agent="demo",origin="signal",outcome="success"}')).toBe(1);
      expect(grew('agui_bridge_events_sent_total{stream="thread"}')).toBe(sse.events.length);
    });

    await sse.close();
    await vi.waitFor(async () => expect((await scrape(origin)).get('agui_bridge_followers')).toBe(0));
  });

  it('a follower that comes back is counted as a replay, or a snapshot when asked for one', async () => {
    const resourceId = uid('metrics-user');
    const threadId = uid('metrics-thread');
    const first = await openSse(`${server.url}/threads/${threadId}/events?resourceId=${resourceId}`);
    await http(`${server.url}/threads/${threadId}/send-message`, { body: { resourceId, message: 'hello again' } });
    await first.waitForEvent((e) => e.type === 'RUN_FINISHED');
    const lastId = first.events[1].id;
    const grew = await delta(origin, async () => {
      const replay = await openSse(`${server.url}/threads/${threadId}/events?resourceId=${resourceId}`, { lastEventId: lastId });
      await replay.waitForEvent((e) => e.type === 'RUN_FINISHED');
      await replay.close();
      const snapshot = await openSse(`${server.url}/threads/${threadId}/events?resourceId=${resourceId}&snapshot=1`);
      await snapshot.waitForEvent((e) => e.type === 'MESSAGES_SNAPSHOT');
      await snapshot.close();
    });
    await first.close();
    expect(grew('agui_bridge_follower_joins_total{kind="replay"}')).toBe(1);
    expect(grew('agui_bridge_follower_joins_total{kind="snapshot"}')).toBe(1);
  });

  it('a proxied frontend tool call is counted while it waits for its result', async () => {
    const resourceId = uid('metrics-user');
    const input = runInput({
      messages: [userMessage('use pick_color')],
      tools: [{ name: 'pick_color', description: 'Pick a colour', parameters: { type: 'object', properties: { color: { type: 'string' } } } }],
      forwardedProps: { resourceId },
    });
    let toolCallId: string | undefined;
    const run = runStrict(`${server.url}/run`, input, (e) => {
      if (e.type === 'TOOL_CALL_END') toolCallId = (e as unknown as { toolCallId: string }).toolCallId;
    });
    await vi.waitFor(async () => expect((await scrape(origin)).get('agui_bridge_frontend_tools_waiting')).toBe(1));
    expect((await scrape(origin)).get('agui_bridge_open_run_streams')).toBe(1);
    const posted = await http(`${server.url}/runs/${input.runId}/tool-calls/${toolCallId}/result?resourceId=${resourceId}`, { body: { content: 'teal' } });
    expect(posted.status).toBe(202);
    await run;
    const after = await scrape(origin);
    expect(after.get('agui_bridge_frontend_tools_waiting')).toBe(0);
    expect(after.get('agui_bridge_open_run_streams')).toBe(0);
  });
});

describe('METRICS_TOKEN', () => {
  const token = 'metrics-token-0123456789';
  const standalone = useStandaloneServer({ METRICS_TOKEN: token }, { logger: silentLogger }, quiet);
  let origin: string;
  beforeAll(() => ({ origin } = standalone));

  it('wants Authorization: Bearer <METRICS_TOKEN>; anything else is 401', async () => {
    expect((await http(`${origin}/metrics`)).status).toBe(401);
    expect((await http(`${origin}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await http(`${origin}/metrics`, { headers: { authorization: token } })).status).toBe(401);
    const refused = await http(`${origin}/metrics`, { headers: { authorization: `Bearer ${token}x` } });
    expect(refused).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED' } });
    expect(refused.headers.get('www-authenticate')).toContain('Bearer');
    const series = await scrape(origin, { authorization: `Bearer ${token}` });
    expect(series.has('agui_bridge_open_run_streams')).toBe(true);
  });

  it('an empty METRICS_TOKEN counts as unset', () => {
    expect(readServerEnv({ METRICS_TOKEN: '' }).METRICS_TOKEN).toBeUndefined();
    expect(readServerEnv({ LOG_LEVEL: '' }).LOG_LEVEL).toBeUndefined();
    expect(readServerEnv({ LOG_LEVEL: 'debug' }).LOG_LEVEL).toBe('debug');
    expect(() => readServerEnv({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
  });
});

describe('mounted in a Mastra server: bridge.metricsText()', () => {
  it("counts runs and requests by route pattern, on the bridge's own registry", async () => {
    const storage = new InMemoryStore();
    const bridge = createBridge({ logger: silentLogger });
    const mastra = new Mastra({ agents: { demo: createDemoAgent({ storage, delayMs: 0 }) }, storage, logger: false, server: { apiRoutes: bridge.routes() } });
    const app = new Hono();
    await new MastraServer({ app, mastra }).init();
    const server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
    });
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/agui`;
      await runStrict(`${base}/run`, runInput({ messages: [userMessage('hello from a mounted bridge')] }));
      const res = await fetch(`${base}/agents`);
      expect(res.headers.get('x-request-id')).toBeTruthy();
      const text = await bridge.metricsText();
      expect(text).toContain('agui_bridge_runs_started_total{agent="demo",origin="run"} 1');
      expect(text).toContain('agui_bridge_runs_finished_total{agent="demo",origin="run",outcome="success"} 1');
      expect(text).toContain('agui_bridge_http_requests_total{method="POST",route="/agui/run",status="200"} 1');
      expect(text).toContain('agui_bridge_http_requests_total{method="GET",route="/agui/agents",status="200"} 1');
      // A library bridge leaves the process metrics to its host.
      expect(text).not.toContain('process_cpu_user_seconds_total');
    } finally {
      await bridge.shutdown();
      (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await mastra.shutdown().catch(() => {
        // cleanup: a failed shutdown changes no result
      });
    }
  });
});
