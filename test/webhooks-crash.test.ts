import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { runInput, uid, userMessage } from './support/agui.js';
import { createCluster, RESOURCE, type Cluster } from './support/cluster.js';
import { killIfRunning, startServerProcess, type ServerProcess } from './support/process.js';
import { postRun, sseEvents } from './support/run.js';
import { http } from './support/server.js';
import { startWebhookReceiver, TEST_WEBHOOK_SECRET, type ReceivedWebhook, type WebhookReceiver } from './support/webhook-receiver.js';

/** Runs `text` on a new thread of `server` to its end; answers the run's id. */
async function runToEnd(server: ServerProcess, text: string, resourceId: string): Promise<string> {
  const input = runInput({ threadId: uid('hook'), messages: [userMessage(text)], forwardedProps: { resourceId } });
  const res = await postRun(`${server.url}/run`, input);
  for await (const event of sseEvents(res.body!)) if (event.type === 'RUN_FINISHED' || event.type === 'RUN_ERROR') break;
  return input.runId;
}

const ofRun = (runId: string) => (w: ReceivedWebhook) => w.payload?.data.runId === runId;

/** The count of a `/metrics` series, 0 when absent. */
async function metric(server: ServerProcess, series: string): Promise<number> {
  const text = String((await http(`${server.url.replace(/\/agui$/, '')}/metrics`)).body);
  const line = text.split('\n').find((l) => l.startsWith(series));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('webhooks through kill -9', { timeout: 60_000 }, () => {
  let dir: string;
  let receiver: WebhookReceiver;
  let server: ServerProcess | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agui-hooks-'));
    receiver = await startWebhookReceiver();
  });
  afterEach(() => killIfRunning(server));
  afterAll(async () => {
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a bridge killed while the receiver fails delivers after its restart, under the same webhook-id', async () => {
    const env = { DATABASE_URL: `file:${join(dir, 'hooks.db')}`, DEMO_DELAY_MS: '0', WEBHOOK_URLS: receiver.url, WEBHOOK_SECRET: TEST_WEBHOOK_SECRET };
    server = await startServerProcess(env);
    receiver.answers.push(503, 503, 503, 503, 503, 503, 503, 503);
    const runId = await runToEnd(server, 'hello before the crash', 'crash-hooks');
    const [failed] = await receiver.waitFor(ofRun(runId));
    expect(failed.status).toBe(503);
    // Written back to the outbox (the attempt counted once stored): nothing is in flight when the process dies.
    await vi.waitFor(async () => expect(await metric(server!, 'agui_bridge_webhook_attempts_total{result="retried"}')).toBeGreaterThanOrEqual(1), {
      timeout: 10_000,
      interval: 50,
    });
    server.child.kill('SIGKILL');
    await server.exited;
    receiver.answers.length = 0;
    server = await startServerProcess(env);
    const attempts = await receiver.waitFor(ofRun(runId), 2);
    const delivered = attempts.find((a) => a.status === 200);
    expect(delivered, 'delivered after the restart').toBeDefined();
    expect(new Set(attempts.map((a) => a.id))).toEqual(new Set([failed.id]));
    expect(delivered!.payload).toMatchObject({ type: 'run.finished', data: { runId, resourceId: 'crash-hooks' } });
  });
});

describe('webhooks in scale-out', { timeout: 90_000 }, () => {
  let cluster: Cluster;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    cluster = await createCluster('hooks', { DEMO_DELAY_MS: '0', WEBHOOK_URLS: receiver.url, WEBHOOK_SECRET: TEST_WEBHOOK_SECRET });
  });
  afterAll(async () => {
    await cluster?.close();
    await receiver?.close();
  });

  it('each run of either process is one webhook, every attempt of it sent by one process at a time', async () => {
    const a = await cluster.start();
    const b = await cluster.start();
    // Every webhook fails once: its retry is up for either process to take.
    receiver.answers.push(...Array.from({ length: 12 }, () => 503));
    const runIds = await Promise.all(Array.from({ length: 12 }, (_, i) => runToEnd(i % 2 === 0 ? a : b, `hello number ${i}`, RESOURCE)));
    const delivered = await Promise.all(runIds.map(async (runId) => (await receiver.waitFor((w) => ofRun(runId)(w) && w.status === 200))[0]));
    for (const [i, runId] of runIds.entries()) {
      const attempts = receiver.received.filter(ofRun(runId));
      expect(
        attempts.map((w) => w.status),
        `run ${i}`,
      ).toEqual([503, 200]);
      expect(new Set(attempts.map((w) => w.id)).size).toBe(1);
    }
    expect(new Set(delivered.map((w) => w.id)).size).toBe(runIds.length);
  });
});
