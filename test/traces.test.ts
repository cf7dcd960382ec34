import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tracingWanted } from '../src/server/tracing.js';
import { runInput, uid, userMessage } from './support/agui.js';
import { createCluster, follow, history, LONG_MESSAGE, RESOURCE, type Cluster } from './support/cluster.js';
import { killIfRunning, startServerProcess, type ServerProcess } from './support/process.js';
import { postRun, sseEvents } from './support/run.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver.js';

/** A caller's span, as a `traceparent` header names it. */
function callerSpan() {
  const hex = (bytes: number) =>
    Array.from({ length: bytes }, () =>
      Math.floor(Math.random() * 256)
        .toString(16)
        .padStart(2, '0'),
    ).join('');
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/** Exported quickly: a test waits 100 ms for a batch, not the SDK's default 5 s. */
const OTEL = (receiver: OtlpReceiver, protocol = 'http/json') => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  OTEL_BSP_SCHEDULE_DELAY: '100',
});

/** Runs `/run` on `server` to its end with the caller's `traceparent`. */
async function tracedRun(server: ServerProcess, text: string, traceparent: string) {
  const input = runInput({ threadId: uid('traced'), messages: [userMessage(text)], forwardedProps: { resourceId: RESOURCE } });
  const res = await postRun(`${server.url}/run`, input, { headers: { traceparent } });
  for await (const event of sseEvents(res.body!)) if (event.type === 'RUN_FINISHED' || event.type === 'RUN_ERROR') break;
  return input;
}

const inTrace = (traceId: string) => (spans: ReceivedSpan[]) => spans.filter((s) => s.traceId === traceId);
const runSpan = (runId: string) => (s: ReceivedSpan) => s.name === 'agui.run' && s.attributes['agui.run_id'] === runId;

describe('traces over OTLP/HTTP (JSON)', { timeout: 60_000 }, () => {
  let receiver: OtlpReceiver;
  let server: ServerProcess;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    server = await startServerProcess({ DATABASE_URL: `file:/tmp/traces-${uid('db')}.db`, DEMO_DELAY_MS: '0', ...OTEL(receiver) });
  });
  afterAll(async () => {
    killIfRunning(server);
    await receiver?.close();
  });

  it('a /run with a traceparent: the server span under the caller, the run span under it with the agui attributes', async () => {
    const caller = callerSpan();
    const input = await tracedRun(server, 'what is the weather in Rome', caller.traceparent);
    const spans = inTrace(caller.traceId)(await receiver.waitFor((all) => all.some(runSpan(input.runId))));
    const serverSpan = spans.find((s) => s.name === 'POST /agui/run')!;
    expect(serverSpan).toMatchObject({
      parentSpanId: caller.spanId,
      service: 'mastra-agui-bridge',
      attributes: { 'http.route': '/agui/run', 'http.response.status_code': 200 },
    });
    const run = spans.find(runSpan(input.runId))!;
    expect(run.parentSpanId).toBe(serverSpan.spanId);
    expect(run.attributes).toMatchObject({
      'agui.thread_id': input.threadId,
      'agui.run_id': input.runId,
      'agui.agent_id': 'demo',
      'agui.resource_id': RESOURCE,
      'agui.outcome': 'success',
    });
  });

  it("Mastra's own spans (the agent, the model call, the tool) are in the run span, in the same trace", async () => {
    const caller = callerSpan();
    const input = await tracedRun(server, 'what is the weather in Oslo', caller.traceparent);
    const named = (prefix: string) => (all: ReceivedSpan[]) => inTrace(caller.traceId)(all).find((s) => s.name.startsWith(prefix));
    const spans = await receiver.waitFor(
      (all) => all.some(runSpan(input.runId)) && !!named('execute_tool')(all) && !!named('invoke_agent')(all) && !!named('chat')(all),
    );
    const byId = new Map(inTrace(caller.traceId)(spans).map((s) => [s.spanId, s]));
    /** Whether `span` descends from `ancestor` (through its parents). */
    const under = (span: ReceivedSpan, ancestor: ReceivedSpan) => {
      for (let at = byId.get(span.parentSpanId ?? ''); at; at = byId.get(at.parentSpanId ?? '')) if (at.spanId === ancestor.spanId) return true;
      return false;
    };
    const run = spans.find(runSpan(input.runId))!;
    const agent = named('invoke_agent')(spans)!;
    expect(agent.parentSpanId).toBe(run.spanId);
    expect(under(named('chat')(spans)!, agent)).toBe(true);
    expect(named('execute_tool')(spans)!.name).toBe('execute_tool get_weather');
    expect(under(named('execute_tool')(spans)!, agent)).toBe(true);
    // `MASTRA_SPANS=on` (the default) leaves Mastra's inner spans out.
    const kinds = new Set(inTrace(caller.traceId)(spans).map((s) => s.name.split(' ')[0]));
    for (const inner of ['processor_run', 'memory_operation', 'model_step', 'model_inference']) expect(kinds).not.toContain(inner);
  });

  it('a run whose caller did not sample it answers as any run and exports nothing, Mastra’s spans included', async () => {
    const dropped = callerSpan();
    const quiet = await tracedRun(server, 'what is the weather in Lima', dropped.traceparent.replace(/-01$/, '-00'));
    expect((await history(server, quiet.threadId)).map((m) => m.role)).toEqual(['user', 'assistant']);
    // Spans are exported in the order they end: once a later run's are in, the dropped run's would be.
    const kept = callerSpan();
    const after = await tracedRun(server, 'hello again', kept.traceparent);
    const spans = await receiver.waitFor((all) => all.some(runSpan(after.runId)));
    expect(inTrace(dropped.traceId)(spans)).toEqual([]);
  });

  it('every log line of the request carries its trace_id and span_id', async () => {
    const caller = callerSpan();
    await tracedRun(server, 'hello logs', caller.traceparent);
    const traced = () =>
      server
        .output()
        .stdout.split('\n')
        .filter((line) => line.includes(caller.traceId))
        .map((line) => JSON.parse(line) as { trace_id: string; span_id: string; msg: string });
    // The stream's last line is written once it has closed, after the client read its end.
    await vi.waitFor(() => expect(traced().map((l) => l.msg)).toEqual(['stream opened', 'stream closed']));
    const lines = traced();
    for (const line of lines) expect(line.span_id).toMatch(/^[0-9a-f]{16}$/);
  });

  it('a run a message woke is in the trace of the request that sent it', async () => {
    const caller = callerSpan();
    const threadId = uid('woken');
    const res = await fetch(`${server.url}/threads/${threadId}/send-message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: caller.traceparent },
      body: JSON.stringify({ resourceId: RESOURCE, message: 'hello from a backend' }),
    });
    const { runId } = (await res.json()) as { runId: string };
    const spans = inTrace(caller.traceId)(await receiver.waitFor((all) => all.some(runSpan(runId))));
    const serverSpan = spans.find((s) => s.name === 'POST /agui/threads/:threadId/send-message')!;
    expect(spans.find(runSpan(runId))).toMatchObject({ parentSpanId: serverSpan.spanId, attributes: { 'agui.origin': 'signal', 'agui.thread_id': threadId } });
  });

  it("a schedule's fire is a run span of its own: origin schedule, with the schedule's id", async () => {
    const { id: threadId } = (await (
      await fetch(`${server.url}/threads`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ resourceId: RESOURCE }) })
    ).json()) as { id: string };
    const post = (path: string, body: object) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ resourceId: RESOURCE, ...body }),
      });
    const { id: scheduleId } = (await (await post(`/threads/${threadId}/schedules`, { cron: '0 9 * * *', prompt: 'traced', status: 'paused' })).json()) as {
      id: string;
    };
    expect((await post(`/schedules/${scheduleId}/run`, {})).status).toBe(202);
    const fired = (span: ReceivedSpan) => span.attributes['agui.schedule_id'] === scheduleId;
    const span = (await receiver.waitFor((all) => all.some(fired))).find(fired)!;
    expect(span).toMatchObject({ name: 'agui.run', attributes: { 'agui.origin': 'schedule', 'agui.thread_id': threadId, 'agui.outcome': 'success' } });
  });

  it('a failed run is an error span', async () => {
    const caller = callerSpan();
    const input = await tracedRun(server, 'please fail', caller.traceparent);
    const spans = await receiver.waitFor((all) => all.some(runSpan(input.runId)));
    expect(spans.find(runSpan(input.runId))).toMatchObject({ attributes: { 'agui.outcome': 'error' }, status: { code: 2 } });
  });
});

describe('traces over OTLP/HTTP (protobuf), and none without an endpoint', { timeout: 60_000 }, () => {
  let receiver: OtlpReceiver;
  const servers: ServerProcess[] = [];
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterAll(async () => {
    for (const server of servers) killIfRunning(server);
    await receiver?.close();
  });

  it('http/protobuf exports the same spans', async () => {
    const server = await startServerProcess({ DATABASE_URL: `file:/tmp/traces-${uid('db')}.db`, DEMO_DELAY_MS: '0', ...OTEL(receiver, 'http/protobuf') });
    servers.push(server);
    const caller = callerSpan();
    const input = await tracedRun(server, 'hello protobuf', caller.traceparent);
    const traceBytes = Buffer.from(caller.traceId, 'hex');
    const has = (body: Buffer) => body.includes(traceBytes) && body.includes('agui.run') && body.includes(input.runId);
    await new Promise<void>((resolve) => {
      const check = () => (receiver.protobuf.some(has) ? resolve() : setTimeout(check, 50));
      check();
    });
    expect(receiver.spans).toHaveLength(0);
  });

  it('without OTEL_EXPORTER_OTLP_ENDPOINT nothing is registered: a traceparent gives no ids', async () => {
    expect(tracingWanted({})).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    const server = await startServerProcess({ DATABASE_URL: `file:/tmp/traces-${uid('db')}.db`, DEMO_DELAY_MS: '0' });
    servers.push(server);
    const caller = callerSpan();
    await tracedRun(server, 'hello untraced', caller.traceparent);
    await vi.waitFor(() => expect(server.output().stdout).toContain('stream closed'));
    expect(server.output().stdout).not.toContain('trace_id');
  });
});

describe("MASTRA_SPANS: how much of Mastra's span tree a trace holds", { timeout: 60_000 }, () => {
  let receiver: OtlpReceiver;
  let all: ServerProcess;
  let off: ServerProcess;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const fast = { ...OTEL(receiver), DEMO_DELAY_MS: '0' };
    [all, off] = await Promise.all([
      startServerProcess({ ...fast, DATABASE_URL: `file:/tmp/traces-${uid('db')}.db`, MASTRA_SPANS: 'all', OTEL_SERVICE_NAME: 'bridge-all' }),
      startServerProcess({ ...fast, DATABASE_URL: `file:/tmp/traces-${uid('db')}.db`, MASTRA_SPANS: 'off' }),
    ]);
  });
  afterAll(async () => {
    for (const server of [all, off]) if (server) killIfRunning(server);
    await receiver?.close();
  });

  it("all: Mastra's processors, memory and model steps too", async () => {
    const caller = callerSpan();
    await tracedRun(all, 'hello all', caller.traceparent);
    const kinds = (spans: ReceivedSpan[]) => new Set(inTrace(caller.traceId)(spans).map((s) => s.name.split(' ')[0]));
    const spans = await receiver.waitFor((received) =>
      ['invoke_agent', 'processor_run', 'memory_operation', 'model_step'].every((kind) => kinds(received).has(kind)),
    );
    expect(inTrace(caller.traceId)(spans).every((s) => s.service === 'bridge-all')).toBe(true);
  });

  it("off: the bridge's spans only", async () => {
    const caller = callerSpan();
    const input = await tracedRun(off, 'hello off', caller.traceparent);
    // The run span ends with the run, after any span of Mastra's would have (its agent span ends
    // with the agent's stream): once it and the server span are in, nothing else of the trace comes.
    const mine = inTrace(caller.traceId);
    const spans = mine(
      await receiver.waitFor((received) => mine(received).some(runSpan(input.runId)) && mine(received).some((s) => s.name === 'POST /agui/run')),
    );
    expect(spans.map((s) => s.name).sort()).toEqual(['POST /agui/run', 'agui.run']);
  });
});

describe('traces in scale-out', { timeout: 90_000 }, () => {
  let cluster: Cluster;
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    cluster = await createCluster('traces', OTEL(receiver));
  });
  afterAll(async () => {
    await cluster?.close();
    await receiver?.close();
  });

  it('what a survivor answers for a process that died is in the trace of the request that sent it', async () => {
    const a = await cluster.start({ DEMO_DELAY_MS: '150' });
    const b = await cluster.start();
    const caller = callerSpan();
    const threadId = uid('traced-failover');
    const onB = await follow(b, threadId);
    const input = runInput({ threadId, messages: [userMessage(LONG_MESSAGE)], forwardedProps: { resourceId: RESOURCE } });
    const res = await postRun(`${a.url}/run`, input, { headers: { traceparent: caller.traceparent } });
    // Read on until A dies (the stream is cut then).
    void (async () => {
      for await (const _event of sseEvents(res.body!)) {
        // read, not kept
      }
    })().catch(() => undefined);
    await onB.waitForEvent((e) => e.type === 'TEXT_MESSAGE_CONTENT');
    await cluster.kill(a);
    // B answers what A acknowledged (the recovery's run), in the caller's trace.
    const spans = await receiver.waitFor((all) =>
      all.some((s) => s.traceId === caller.traceId && s.name === 'agui.run' && s.attributes['agui.origin'] === 'recovery'),
    );
    const recovered = spans.find((s) => s.traceId === caller.traceId && s.attributes['agui.origin'] === 'recovery')!;
    expect(recovered.attributes).toMatchObject({ 'agui.thread_id': threadId, 'agui.resource_id': RESOURCE });
    const mine = spans.filter((s) => s.traceId === caller.traceId && s.name === 'POST /agui/run');
    expect(mine).toHaveLength(1);
    await onB.close();
  });
});
