import { EventType } from '@ag-ui/core';
import { describe, expect, it } from 'vitest';
import { BridgeMetrics, statusOutcome, terminalOutcome } from './metrics.js';

/** The value of one sample line of the text format, `undefined` when there is none. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('BridgeMetrics', () => {
  it('limitRefused counts agui_bridge_limit_refusals_total by limit', async () => {
    const metrics = new BridgeMetrics();
    metrics.limitRefused('rate');
    metrics.limitRefused('rate');
    metrics.limitRefused('streams');
    const text = await metrics.text();
    expect(sample(text, 'agui_bridge_limit_refusals_total{limit="rate"}')).toBe(2);
    expect(sample(text, 'agui_bridge_limit_refusals_total{limit="streams"}')).toBe(1);
  });

  it('owns its registry: two bridges in one process count apart, and neither touches the global one', async () => {
    const a = new BridgeMetrics();
    const b = new BridgeMetrics();
    a.runStarted('demo', 'run');
    expect(sample(await a.text(), 'agui_bridge_runs_started_total{agent="demo",origin="run"}')).toBe(1);
    expect(sample(await b.text(), 'agui_bridge_runs_started_total{agent="demo",origin="run"}')).toBeUndefined();
    const { register } = await import('prom-client');
    expect(register.getSingleMetric('agui_bridge_runs_started_total')).toBeUndefined();
  });

  it('runEnded splits RUN_FINISHED (by outcome) from RUN_ERROR', async () => {
    const metrics = new BridgeMetrics();
    metrics.runEnded('demo', 'run', 'success');
    metrics.runEnded('demo', 'run', 'interrupt');
    metrics.runEnded('demo', 'signal', 'error');
    const text = await metrics.text();
    expect(sample(text, 'agui_bridge_runs_finished_total{agent="demo",origin="run",outcome="success"}')).toBe(1);
    expect(sample(text, 'agui_bridge_runs_finished_total{agent="demo",origin="run",outcome="interrupt"}')).toBe(1);
    expect(sample(text, 'agui_bridge_runs_errored_total{agent="demo",origin="signal"}')).toBe(1);
  });

  it('bound event counters and level gauges move without label lookups', async () => {
    const metrics = new BridgeMetrics();
    metrics.runEvents.inc(5);
    metrics.threadEvents.inc(3);
    metrics.toolsWaiting.inc();
    metrics.toolsWaiting.inc();
    metrics.toolsWaiting.dec();
    const text = await metrics.text();
    expect(sample(text, 'agui_bridge_events_sent_total{stream="run"}')).toBe(5);
    expect(sample(text, 'agui_bridge_events_sent_total{stream="thread"}')).toBe(3);
    expect(sample(text, 'agui_bridge_frontend_tools_waiting')).toBe(1);
  });

  it('gauges read their sources at scrape time, summed over every source', async () => {
    const metrics = new BridgeMetrics();
    let open = 2;
    metrics.trackOpenRuns(() => open);
    metrics.trackOpenRuns(() => 1);
    metrics.trackFollowers(() => 4);
    expect(sample(await metrics.text(), 'agui_bridge_open_run_streams')).toBe(3);
    open = 0;
    const text = await metrics.text();
    expect(sample(text, 'agui_bridge_open_run_streams')).toBe(1);
    expect(sample(text, 'agui_bridge_followers')).toBe(4);
    expect(sample(text, 'agui_bridge_followed_threads')).toBe(0);
  });

  it('the HTTP histogram is in seconds, by method, route pattern and status', async () => {
    const metrics = new BridgeMetrics();
    metrics.httpRequest('GET', '/agui/threads/:threadId', 404, 0.003);
    const text = await metrics.text();
    expect(sample(text, 'agui_bridge_http_requests_total{method="GET",route="/agui/threads/:threadId",status="404"}')).toBe(1);
    expect(sample(text, 'agui_bridge_http_request_duration_seconds_bucket{le="0.005",method="GET",route="/agui/threads/:threadId",status="404"}')).toBe(1);
    expect(sample(text, 'agui_bridge_http_request_duration_seconds_count{method="GET",route="/agui/threads/:threadId",status="404"}')).toBe(1);
  });

  it('collects the process metrics only when asked', async () => {
    const metrics = new BridgeMetrics();
    expect(await metrics.text()).not.toContain('process_cpu_user_seconds_total');
    metrics.collectProcessMetrics();
    expect(await metrics.text()).toContain('process_cpu_user_seconds_total');
    expect(metrics.contentType).toContain('text/plain');
  });
});

describe('terminalOutcome', () => {
  it('maps the terminal AG-UI events, and nothing else', () => {
    expect(terminalOutcome({ type: EventType.RUN_FINISHED })).toBe('success');
    expect(terminalOutcome({ type: EventType.RUN_FINISHED, outcome: { type: 'interrupt', interrupts: [] } })).toBe('interrupt');
    expect(terminalOutcome({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } })).toBe('cancelled');
    expect(terminalOutcome({ type: EventType.RUN_FINISHED, outcome: { type: 'success', pendingToolCallIds: ['c1'] } })).toBe('success');
    expect(terminalOutcome({ type: EventType.RUN_ERROR })).toBe('error');
    expect(terminalOutcome({ type: EventType.TEXT_MESSAGE_END })).toBeUndefined();
    expect(terminalOutcome(undefined)).toBeUndefined();
  });
});

describe('statusOutcome', () => {
  it("maps a Mastra output's status", () => {
    expect(statusOutcome('success')).toBe('success');
    expect(statusOutcome('failed')).toBe('error');
    expect(statusOutcome('tripwire')).toBe('error');
    expect(statusOutcome('suspended')).toBe('interrupt');
    expect(statusOutcome('canceled')).toBe('cancelled');
  });
});
