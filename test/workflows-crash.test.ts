import { EventType, type BaseEvent } from '@ag-ui/client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_WORKFLOW_ID } from '../src/demo/workflow.js';
import { runInput, runStrict, uid, userMessage } from './support/agui.js';
import { killIfRunning, startServerProcess, type ServerProcess } from './support/process.js';
import { http } from './support/server.js';

/**
 * A workflow suspended for a person outlives its process: the standalone server is killed with
 * `kill -9` while `draft-and-send` waits on its review, restarted on the same LibSQL file, and the
 * interrupt is answered there.
 */
describe('kill -9 while a workflow waits on a person', { timeout: 60_000 }, () => {
  let dir: string;
  let server: ServerProcess | undefined;
  const forwardedProps = { agentId: DEMO_WORKFLOW_ID, resourceId: 'crash-user' };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'agui-wf-crash-'));
  });
  afterEach(() => {
    killIfRunning(server);
    server = undefined;
  });
  afterAll(() => {
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
});
