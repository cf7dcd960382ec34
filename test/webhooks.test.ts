import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createBridge, BridgeConfigError } from '../src/index.js';
import { readServerEnv } from '../src/server/env.js';
import { createDemoWorkflow, DEMO_WORKFLOW_ID } from '../src/demo/workflow.js';
import { runInput, runStrict, uid, userMessage } from './support/agui.js';
import { http, startTestBridge, type TestBridge } from './support/server.js';
import { startWebhookReceiver, TEST_WEBHOOK_SECRET, type WebhookReceiver } from './support/webhook-receiver.js';

const RESOURCE = 'hook-user';
const props = { resourceId: RESOURCE, agentId: 'demo' };
const ofRunId = (runId: string) => (w: { payload?: { data: Record<string, unknown> } }) => w.payload?.data.runId === runId;

describe('webhooks on run endings', () => {
  let receiver: WebhookReceiver;
  let tb: TestBridge;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    // The demo model streams a part every 15 ms: a run can be stopped in the middle.
    tb = await startTestBridge({ delayMs: 15, config: { webhooks: { urls: [receiver.url], secret: TEST_WEBHOOK_SECRET } } });
  });
  afterAll(async () => {
    await tb?.close();
    await receiver?.close();
  });

  it('a finished /run: run.finished once, signed, with the run and its outcome', async () => {
    const input = runInput({ messages: [userMessage('hello there')], forwardedProps: props });
    await runStrict(`${tb.base}/run`, input);
    const [hook] = await receiver.waitFor(ofRunId(input.runId));
    expect(hook.payload).toMatchObject({
      type: 'run.finished',
      data: { threadId: input.threadId, runId: input.runId, resourceId: RESOURCE, agentId: 'demo', outcome: 'success' },
    });
    expect(hook.id).toMatch(/^msg_/);
    expect(Date.parse(hook.payload!.timestamp)).not.toBeNaN();
  });

  it('an approval to give: run.interrupted with the interrupts the run waits on', async () => {
    const input = runInput({ messages: [userMessage('delete /tmp/x.txt')], forwardedProps: props });
    await runStrict(`${tb.base}/run`, input);
    const [hook] = await receiver.waitFor(ofRunId(input.runId));
    expect(hook.payload).toMatchObject({ type: 'run.interrupted', data: { runId: input.runId, outcome: 'interrupt' } });
    expect(hook.payload!.data.interrupts).toHaveLength(1);
  });

  it('a failed run: run.failed with the code and message its RUN_ERROR had', async () => {
    const input = runInput({ messages: [userMessage('please fail')], forwardedProps: props });
    const run = await runStrict(`${tb.base}/run`, input);
    const [hook] = await receiver.waitFor(ofRunId(input.runId));
    expect(hook.payload).toMatchObject({
      type: 'run.failed',
      data: { runId: input.runId, error: { code: (run.terminal as { code?: string }).code, message: (run.terminal as { message?: string }).message } },
    });
    expect(hook.payload!.data.outcome).toBeUndefined();
  });

  it('a stopped run: run.cancelled', async () => {
    const input = runInput({ messages: [userMessage('think about tea and how to brew it well')], forwardedProps: props });
    let stopped: Promise<Response> | undefined;
    const run = await runStrict(`${tb.base}/run`, input, (event) => {
      if (stopped || event.type !== 'TEXT_MESSAGE_CONTENT') return;
      stopped = fetch(`${tb.base}/threads/${input.threadId}/abort`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(props),
      });
    });
    expect(await (await stopped)?.json()).toEqual({ aborted: true });
    expect(run.terminal).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
    const [hook] = await receiver.waitFor(ofRunId(input.runId));
    expect(hook.payload).toMatchObject({ type: 'run.cancelled', data: { runId: input.runId, outcome: 'cancelled' } });
  });

  it('a run a message woke (no /run, nobody following): run.finished under that run', async () => {
    const threadId = uid('woken');
    const sent = await fetch(`${tb.base}/threads/${threadId}/send-message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...props, message: 'hello from a backend' }),
    });
    const decision = (await sent.json()) as { action: string; runId: string };
    expect(decision.action).toBe('wake');
    const [hook] = await receiver.waitFor(ofRunId(decision.runId));
    expect(hook.payload).toMatchObject({ type: 'run.finished', data: { threadId, runId: decision.runId, resourceId: RESOURCE, outcome: 'success' } });
  });

  it('each webhook is sent once when the receiver answers 2xx, and every signature verifies', async () => {
    const input = runInput({ messages: [userMessage('once please')], forwardedProps: props });
    await runStrict(`${tb.base}/run`, input);
    await receiver.waitFor(ofRunId(input.runId));
    // A later webhook has come through the same sender: nothing of this run's is on its way still.
    const later = runInput({ messages: [userMessage('and after')], forwardedProps: props });
    await runStrict(`${tb.base}/run`, later);
    await receiver.waitFor(ofRunId(later.runId));
    expect(receiver.received.filter(ofRunId(input.runId))).toHaveLength(1);
    expect(receiver.received.every((w) => w.payload !== undefined)).toBe(true);
  });

  it('a receiver answering 503 twice gets the same webhook-id three times, then it is delivered', async () => {
    receiver.answers.push(503, 503);
    const input = runInput({ messages: [userMessage('retry me')], forwardedProps: props });
    await runStrict(`${tb.base}/run`, input);
    const attempts = await receiver.waitFor(ofRunId(input.runId), 3);
    expect(attempts.map((a) => a.status)).toEqual([503, 503, 200]);
    expect(new Set(attempts.map((a) => a.id)).size).toBe(1);
    const metrics = await tb.bridge.metricsText();
    expect(metrics).toMatch(/agui_bridge_webhook_attempts_total\{result="retried"\} [2-9]/);
  });

  it('a receiver that never answers does not hold up the runs after it', async () => {
    receiver.answers.push('hang');
    const first = runInput({ messages: [userMessage('first of two')], forwardedProps: props });
    await runStrict(`${tb.base}/run`, first);
    await receiver.waitFor(ofRunId(first.runId));
    // The first webhook's request is held open by the receiver; runs go on meanwhile.
    const second = runInput({ messages: [userMessage('second of two')], forwardedProps: props });
    const run = await runStrict(`${tb.base}/run`, second);
    expect(run.terminal.type).toBe('RUN_FINISHED');
    await receiver.waitFor(ofRunId(second.runId));
  });
});

describe('webhooks on a workflow run that waits on a person', () => {
  let receiver: WebhookReceiver;
  let tb: TestBridge;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    tb = await startTestBridge({
      storage: 'libsql',
      workflows: () => ({ [DEMO_WORKFLOW_ID]: createDemoWorkflow() }),
      config: { webhooks: { urls: [receiver.url], secret: TEST_WEBHOOK_SECRET } },
    });
  });
  afterAll(async () => {
    await tb?.close();
    await receiver?.close();
  });

  it.each([
    ['an abort', (threadId: string) => http(`${tb.base}/threads/${threadId}/abort`, { body: { resourceId: RESOURCE } })],
    [
      'new input',
      (threadId: string) => http(`${tb.base}/threads/${threadId}/send-message`, { body: { resourceId: RESOURCE, agentId: 'demo', message: 'forget it' } }),
    ],
  ])('cancelled by %s: run.interrupted, then run.cancelled under the same run, once each', async (_, cancel) => {
    const input = runInput({ messages: [userMessage('tea')], forwardedProps: { resourceId: RESOURCE, agentId: DEMO_WORKFLOW_ID } });
    await runStrict(`${tb.base}/run`, input);
    expect((await cancel(input.threadId)).status).toBeLessThan(300);
    const hooks = await receiver.waitFor(ofRunId(input.runId), 2);
    expect(hooks.map((w) => w.payload?.type).sort()).toEqual(['run.cancelled', 'run.interrupted']);
    expect(hooks.find((w) => w.payload?.type === 'run.cancelled')?.payload).toMatchObject({
      data: { threadId: input.threadId, agentId: DEMO_WORKFLOW_ID, resourceId: RESOURCE, outcome: 'cancelled' },
    });
  });
});

describe("webhooks with the storage away at a run's end", () => {
  it('the webhook is kept in memory, stored once the storage answers again, and sent', async () => {
    const receiver = await startWebhookReceiver();
    const tb = await startTestBridge({ config: { webhooks: { urls: [receiver.url], secret: TEST_WEBHOOK_SECRET } } });
    try {
      const state = (await tb.storage.getStore('threadState'))!;
      const setState = state.setState.bind(state);
      let refused = 0;
      state.setState = async (args) => {
        if (args.type.startsWith('mastra-agui-bridge.webhook')) {
          refused++;
          throw new Error('storage away');
        }
        return setState(args);
      };
      const input = runInput({ messages: [userMessage('hello while the outbox is away')], forwardedProps: props });
      const run = await runStrict(`${tb.base}/run`, input);
      expect(run.terminal.type).toBe('RUN_FINISHED');
      await vi.waitFor(() => expect(refused).toBeGreaterThan(0));
      state.setState = setState;
      const [hook] = await receiver.waitFor(ofRunId(input.runId));
      expect(hook.payload).toMatchObject({ type: 'run.finished', data: { runId: input.runId } });
    } finally {
      await tb.close();
      await receiver.close();
    }
  });
});

describe('webhook configuration', () => {
  it('a bad secret or URL stops the bridge with a clear message', () => {
    expect(() => createBridge({ webhooks: { urls: ['ftp://example.com/x'], secret: TEST_WEBHOOK_SECRET } })).toThrow(BridgeConfigError);
    expect(() => createBridge({ webhooks: { urls: ['ftp://example.com/x'], secret: TEST_WEBHOOK_SECRET } })).toThrow(
      /webhooks\.urls\.0: each webhook URL must be an http\(s\) URL/,
    );
    expect(() => createBridge({ webhooks: { urls: ['http://127.0.0.1:9/x'], secret: 'not-a-secret' } })).toThrow(
      /webhooks\.secret: the webhook secret must be "whsec_"/,
    );
    expect(() => createBridge({ webhooks: { urls: [], secret: TEST_WEBHOOK_SECRET } })).toThrow(/needs at least one URL/);
  });

  it('the server refuses WEBHOOK_URLS without WEBHOOK_SECRET, a bad secret, and a bad URL', () => {
    expect(() => readServerEnv({ WEBHOOK_URLS: 'http://127.0.0.1:9/x' })).toThrow(/WEBHOOK_SECRET: set WEBHOOK_URLS and WEBHOOK_SECRET together/);
    expect(() => readServerEnv({ WEBHOOK_URLS: 'http://127.0.0.1:9/x', WEBHOOK_SECRET: 'whsec_short' })).toThrow(/WEBHOOK_SECRET: must be "whsec_"/);
    expect(() => readServerEnv({ WEBHOOK_URLS: 'not a url', WEBHOOK_SECRET: TEST_WEBHOOK_SECRET })).toThrow(/WEBHOOK_URLS\.0: must be an http\(s\):\/\/ URL/);
    expect(readServerEnv({ WEBHOOK_URLS: 'http://a.example/x, https://b.example/y', WEBHOOK_SECRET: TEST_WEBHOOK_SECRET })).toMatchObject({
      WEBHOOK_URLS: ['http://a.example/x', 'https://b.example/y'],
    });
  });
});
