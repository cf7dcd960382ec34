import { EventType, type BaseEvent } from '@ag-ui/client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEMO_WORKFLOW_ID } from '../src/demo/workflow.js';
import { runInput, runStrict, uid, userMessage } from './support/agui.js';
import { killIfRunning, startServerProcess, type ServerProcess } from './support/process.js';
import { postRun, sseEvents } from './support/run.js';
import { http } from './support/server.js';
import { startWebhookReceiver, TEST_WEBHOOK_SECRET, type ReceivedWebhook, type WebhookReceiver } from './support/webhook-receiver.js';

/** Posts a `/run` and reads its stream until a step starts: the run is then mid-step. */
async function untilStepStarts(url: string, input: ReturnType<typeof runInput>): Promise<string> {
  const res = await postRun(url, input);
  for await (const event of sseEvents(res.body!)) if (event.type === EventType.STEP_STARTED) return String(event.stepName);
  throw new Error(`run ${input.runId} ended before a step started`);
}

/**
 * A workflow suspended for a person outlives its process: the standalone server is killed with
 * `kill -9` while `draft-and-send` waits on its review, restarted on the same LibSQL file, and the
 * interrupt is answered there.
 */
describe('kill -9 while a workflow waits on a person, or runs', { timeout: 60_000 }, () => {
  let dir: string;
  let server: ServerProcess | undefined;
  let receiver: WebhookReceiver;
  const forwardedProps = { agentId: DEMO_WORKFLOW_ID, resourceId: 'crash-user' };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agui-wf-crash-'));
    receiver = await startWebhookReceiver();
  });
  afterEach(() => {
    killIfRunning(server);
    server = undefined;
  });
  afterAll(async () => {
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is resumed after the restart, on the same database, and answers', async () => {
    const env = { DATABASE_URL: `file:${join(dir, 'suspended.db')}`, DEMO_DELAY_MS: '0' };
    server = await startServerProcess(env);
    const threadId = uid('wf-crash');
    const first = await runStrict(`${server.url}/run`, runInput({ threadId, messages: [userMessage('tea')], forwardedProps }));
    const [interrupt] = (first.terminal as BaseEvent & { outcome: { interrupts: Array<{ id: string }> } }).outcome.interrupts;

    server.child.kill('SIGKILL');
    expect((await server.exited).signal).toBe('SIGKILL');
    server = await startServerProcess(env);

    const run = await runStrict(
      `${server.url}/run`,
      runInput({
        threadId,
        forwardedProps,
        resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true, edit: 'Tea after the crash.' } }],
      }),
    );
    expect(run.events.filter((e) => e.type === EventType.STEP_STARTED).map((e) => (e as BaseEvent & { stepName: string }).stepName)).toEqual([
      'review',
      'send',
    ]);
    expect(run.terminal).toMatchObject({ type: 'RUN_FINISHED', result: { text: 'Sent: Tea after the crash.' } });
    const history = await http(`${server.url}/threads/${threadId}/messages?format=agui&resourceId=crash-user&agentId=${DEMO_WORKFLOW_ID}`);
    expect(history.body.map((m: { content: string }) => m.content)).toEqual(['tea', 'Draft about tea.', 'Sent: Tea after the crash.']);
  });

  it('a run cut mid-step and a resume cut mid-step are settled on restart: failed in history, one webhook each, never run again', async () => {
    const database = { DATABASE_URL: `file:${join(dir, 'cut.db')}`, WEBHOOK_URLS: receiver.url, WEBHOOK_SECRET: TEST_WEBHOOK_SECRET };
    const waitingThread = uid('wf-cut-resume');
    server = await startServerProcess({ ...database, DEMO_DELAY_MS: '0' });
    const first = await runStrict(`${server.url}/run`, runInput({ threadId: waitingThread, messages: [userMessage('tea')], forwardedProps }));
    const [interrupt] = (first.terminal as BaseEvent & { outcome: { interrupts: Array<{ id: string }> } }).outcome.interrupts;
    const answer = { interruptId: interrupt.id, status: 'resolved' as const, payload: { approved: true } };
    killIfRunning(server);
    await server.exited;

    // Each step now waits a minute: both runs are cut inside one.
    server = await startServerProcess({ ...database, DEMO_DELAY_MS: '60000' });
    const started = runInput({ threadId: uid('wf-cut-start'), messages: [userMessage('coffee')], forwardedProps });
    const resumed = runInput({ threadId: waitingThread, forwardedProps, resume: [answer] });
    expect(await Promise.all([untilStepStarts(`${server.url}/run`, started), untilStepStarts(`${server.url}/run`, resumed)])).toEqual(['draft', 'review']);
    server.child.kill('SIGKILL');
    await server.exited;

    server = await startServerProcess({ ...database, DEMO_DELAY_MS: '0' });
    const ofRun = (runId: string) => (w: ReceivedWebhook) => w.payload?.data.runId === runId && w.status === 200;
    for (const run of [started, resumed]) {
      const [hook] = await receiver.waitFor(ofRun(run.runId));
      expect(hook.payload).toMatchObject({ type: 'run.failed', data: { threadId: run.threadId, error: { code: 'UNAVAILABLE' } } });
    }
    const messages = (threadId: string) => http(`${server!.url}/threads/${threadId}/messages?format=agui&resourceId=crash-user&agentId=${DEMO_WORKFLOW_ID}`);
    const runEnd = (runId: string) => ({
      id: `run-end-${runId}`,
      role: 'activity',
      content: expect.objectContaining({ outcome: 'failed', code: 'UNAVAILABLE' }),
    });
    await vi.waitFor(
      async () =>
        expect((await messages(started.threadId)).body).toEqual([
          expect.objectContaining({ content: 'coffee' }),
          expect.objectContaining(runEnd(started.runId)),
        ]),
      {
        timeout: 10_000,
      },
    );
    await vi.waitFor(async () => expect((await messages(waitingThread)).body).toContainEqual(expect.objectContaining(runEnd(resumed.runId))), {
      timeout: 10_000,
    });

    // Cancelled in storage: the answer the cut resume carried is not taken again, and the thread takes a new run.
    const again = await http(`${server.url}/run`, { method: 'POST', body: runInput({ threadId: waitingThread, forwardedProps, resume: [answer] }) });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('RUN_NOT_FOUND');
    const nextInput = runInput({ threadId: started.threadId, messages: [userMessage('cocoa')], forwardedProps });
    const next = await runStrict(`${server.url}/run`, nextInput);
    expect(next.terminal).toMatchObject({ type: 'RUN_FINISHED', outcome: { interrupts: [expect.anything()] } });
    await receiver.waitFor(ofRun(nextInput.runId));
    // One end each: the later run's webhook came after anything recovery would have sent twice.
    expect(receiver.received.filter(ofRun(started.runId))).toHaveLength(1);
    expect(receiver.received.filter(ofRun(resumed.runId))).toHaveLength(1);
  });
});
