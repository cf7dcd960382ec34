import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BaseEvent } from '@ag-ui/client';
import { DEMO_WORKFLOW_ID } from '../src/demo/workflow.js';
import { runInput, runStrict, uid, userMessage } from './support/agui.js';
import { createCluster, history, RESOURCE, type Cluster } from './support/cluster.js';
import type { ServerProcess } from './support/process.js';
import { postRun, sseEvents } from './support/run.js';
import { http } from './support/server.js';
import { openSse } from './support/sse.js';
import { startWebhookReceiver, TEST_WEBHOOK_SECRET, type WebhookReceiver } from './support/webhook-receiver.js';

/**
 * A workflow suspended on one process is answered on another (two real bridge processes on the
 * machine's Redis and PostgreSQL): the run's snapshot is in the shared storage, and the interrupt
 * is taken once across both.
 */
let cluster: Cluster;
let a: ServerProcess;
let b: ServerProcess;

beforeAll(async () => {
  cluster = await createCluster('workflows', { DEMO_DELAY_MS: '0' });
  a = await cluster.start();
  b = await cluster.start();
}, 60_000);
afterAll(() => cluster?.close());

const forwardedProps = { agentId: DEMO_WORKFLOW_ID, resourceId: RESOURCE };

async function suspendedOn(server: ServerProcess) {
  const threadId = uid('wf');
  const run = await runStrict(`${server.url}/run`, runInput({ threadId, messages: [userMessage('tea')], forwardedProps }));
  const [interrupt] = (run.terminal as BaseEvent & { outcome: { interrupts: Array<{ id: string }> } }).outcome.interrupts;
  return { threadId, interruptId: interrupt.id };
}

const answer = (threadId: string, interruptId: string, approved: boolean) =>
  runInput({ threadId, forwardedProps, resume: [{ interruptId, status: 'resolved', payload: { approved } }] });

describe('a workflow suspended on A', () => {
  it('is resumed on B, which answers; history on A shows the whole run', async () => {
    const { threadId, interruptId } = await suspendedOn(a);
    const run = await runStrict(`${b.url}/run`, answer(threadId, interruptId, true));
    expect(run.terminal).toMatchObject({ type: 'RUN_FINISHED', result: { text: 'Sent: Draft about tea.' } });
    const stored = await history(a, threadId, 'agui');
    expect(stored.map((m) => m.content)).toEqual(['tea', 'Draft about tea.', 'Sent: Draft about tea.']);
  });

  it('followed on both: each process’s follower sees the run on A and its resumption on B, as their /runs streamed them', async () => {
    const threadId = uid('wf');
    const url = (server: ServerProcess) => `${server.url}/threads/${threadId}/events?resourceId=${RESOURCE}&agentId=${DEMO_WORKFLOW_ID}`;
    const followers = [await openSse(url(a)), await openSse(url(b))];
    const first = await runStrict(`${a.url}/run`, runInput({ threadId, messages: [userMessage('tea')], forwardedProps }));
    const [interrupt] = (first.terminal as BaseEvent & { outcome: { interrupts: Array<{ id: string }> } }).outcome.interrupts;
    const second = await runStrict(`${b.url}/run`, answer(threadId, interrupt.id, true));
    const types = [...first.events, ...second.events].map((e) => e.type);
    for (const follower of followers) {
      await follower.waitForEvent((e) => e.type === 'RUN_FINISHED', first.events.length);
      expect(follower.events.map((e) => e.event.type)).toEqual(types);
      await follower.close();
    }
  });

  it('streaming on a third process, aborted through B (no agentId): its /run ends cancelled, and B answers aborted', { timeout: 60_000 }, async () => {
    const slow = await cluster.start({ DEMO_DELAY_MS: '60000' });
    const threadId = uid('wf-abort');
    const res = await postRun(`${slow.url}/run`, runInput({ threadId, messages: [userMessage('tea')], forwardedProps }));
    const events: Array<{ type: string; stepName?: string; outcome?: unknown }> = [];
    const read = (async () => {
      for await (const event of sseEvents(res.body!)) events.push(event as (typeof events)[number]);
    })();
    await vi.waitFor(() => expect(events.some((e) => e.type === 'STEP_STARTED')).toBe(true), { timeout: 10_000 });
    const aborted = await http(`${b.url}/threads/${threadId}/abort`, { body: { resourceId: RESOURCE } });
    expect(aborted.body).toEqual({ aborted: true });
    await read;
    expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
  });

  it('answered on A and on B at once: one runs, the other is refused', async () => {
    const { threadId, interruptId } = await suspendedOn(a);
    const [onA, onB] = await Promise.all([
      postRun(`${a.url}/run`, answer(threadId, interruptId, true)),
      postRun(`${b.url}/run`, answer(threadId, interruptId, false)),
    ]);
    expect([onA.status, onB.status].sort()).toEqual([200, 404]);
    await Promise.all([onA.text(), onB.text()]);
  });
});

/** Within this of a `kill -9`, with the default thread lease (15 s), the run's followers elsewhere hear of it (the process's heartbeat). */
const FAILOVER_MS = 5000;

describe('a workflow run cut by kill -9 mid-step (the thread lease at its default, 15 s)', () => {
  let cut: Cluster;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    cut = await createCluster('wf-cut', { DEMO_DELAY_MS: '0', WEBHOOK_URLS: receiver.url, WEBHOOK_SECRET: TEST_WEBHOOK_SECRET });
  }, 60_000);
  afterAll(async () => {
    await cut?.close();
    await receiver?.close();
  });

  it(
    'its follower on the other process sees it end within 5 s (RUN_ERROR, then the thread as stored); the survivor settles it unasked: cancelled in storage, failed in history, one webhook',
    { timeout: 60_000 },
    async () => {
      const watcher = await cut.start();
      const runner = await cut.start({ DEMO_DELAY_MS: '1500' });
      const [threadId, resourceId] = [uid('wf-cut'), uid('cut-user')];
      const props = { agentId: DEMO_WORKFLOW_ID, resourceId };
      const follower = await openSse(`${watcher.url}/threads/${threadId}/events?resourceId=${resourceId}&agentId=${DEMO_WORKFLOW_ID}`);
      await follower.waitForComment('connected');
      const cutInput = runInput({ threadId, messages: [userMessage('tea')], forwardedProps: props });
      const running = await postRun(`${runner.url}/run`, cutInput);
      expect(running.status).toBe(200);
      // Cut in its second step: the first one's text was stored as it ended.
      await follower.waitForEvent((e) => e.type === 'STEP_STARTED' && (e as BaseEvent & { stepName: string }).stepName === 'review');
      await cut.kill(runner);
      const killedAt = Date.now();

      const end = await follower.waitForEvent((e) => e.type === 'RUN_ERROR' || e.type === 'RUN_FINISHED');
      const tookMs = Date.now() - killedAt;
      console.log(`failover: a workflow run's follower on the other process got RUN_ERROR ${tookMs} ms after kill -9 (default lease TTL)`);
      expect(tookMs).toBeLessThan(FAILOVER_MS);
      expect(end.event).toMatchObject({ type: 'RUN_ERROR' });
      const snapshot = await follower.waitForEvent((e) => e.type === 'MESSAGES_SNAPSHOT', end.index);
      expect((snapshot.event as BaseEvent & { messages: Array<{ content: string }> }).messages.map((m) => m.content)).toEqual(['tea', 'Draft about tea.']);
      await follower.close();

      // Settled by the survivor with no request on the thread: its sweep finds the record on a thread no run holds.
      const statuses = async () => {
        const rows = await cut.db.query(`SELECT snapshot FROM "${cut.db.schema}".mastra_workflow_snapshot WHERE workflow_name = $1`, [DEMO_WORKFLOW_ID]);
        return rows
          .map((r) => (typeof r.snapshot === 'string' ? JSON.parse(r.snapshot) : r.snapshot) as { status: string })
          .map((s) => s.status)
          .sort();
      };
      const [hook] = await receiver.waitFor((w) => w.payload?.data.runId === cutInput.runId);
      expect(hook.payload).toMatchObject({ type: 'run.failed', data: { threadId, error: { code: 'UNAVAILABLE' } } });
      expect(await statuses()).toEqual(['canceled']);
      const stored = async () => (await http(`${watcher.url}/threads/${threadId}/messages?resourceId=${resourceId}&format=agui`)).body as Array<{ id: string }>;
      await vi.waitFor(async () => expect((await stored()).map((m) => m.id)).toContain(`run-end-${cutInput.runId}`), { timeout: 10_000 });

      // No one runs it again unasked; the next run is the thread's own.
      const next = await runStrict(`${watcher.url}/run`, runInput({ threadId, messages: [userMessage('coffee')], forwardedProps: props }));
      expect(next.terminal).toMatchObject({ outcome: { type: 'interrupt' } });
      expect(await statuses()).toEqual(['canceled', 'suspended']);
      expect(receiver.received.filter((w) => w.payload?.data.runId === cutInput.runId)).toHaveLength(1);
    },
  );
});
