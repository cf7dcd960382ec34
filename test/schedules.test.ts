import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BridgeClient, BridgeRequestError } from '../src/client/index.js';
import { createDemoWorkflow, DEMO_WORKFLOW_ID } from '../src/demo/workflow.js';
import { runInput, uid, userMessage } from './support/agui.js';
import { postRun, sseEvents } from './support/run.js';
import { http, startTestBridge, useTestBridge, type TestBridge } from './support/server.js';
import { startWebhookReceiver, TEST_WEBHOOK_SECRET, type WebhookReceiver } from './support/webhook-receiver.js';
import { openSse } from './support/sse.js';

// Schedules on threads (docs/schedules.md): Mastra's cron, scoped to the caller's resource, over
// real HTTP with LibSQL and Mastra's scheduler ticking.

const tb = useTestBridge({
  storage: 'libsql',
  scheduler: { tickIntervalMs: 200 },
  config: { schedules: { minIntervalSeconds: 2, maxPerResource: 3 } },
  workflows: () => ({ [DEMO_WORKFLOW_ID]: createDemoWorkflow() }),
});

/** A thread of a new resource. */
async function newThread() {
  const resourceId = uid('scheduler');
  const created = await http(`${tb.base}/threads`, { body: { resourceId } });
  expect(created.status).toBe(201);
  return { resourceId, threadId: created.body.id as string };
}

type Thread = Awaited<ReturnType<typeof newThread>>;

const create = (t: Thread, body: Record<string, unknown>) =>
  http(`${tb.base}/threads/${t.threadId}/schedules`, { body: { resourceId: t.resourceId, ...body } });
const ofSchedule = (t: Pick<Thread, 'resourceId'>, id: string, path = '', init: { method?: string; body?: unknown } = {}) =>
  http(`${tb.base}/schedules/${id}${path}${init.body === undefined && init.method !== 'POST' ? `?resourceId=${t.resourceId}` : ''}`, {
    ...init,
    ...((init.body !== undefined || init.method === 'POST') && { body: { resourceId: t.resourceId, ...(init.body as object) } }),
  });
const listed = async (t: Thread) => (await http(`${tb.base}/threads/${t.threadId}/schedules?resourceId=${t.resourceId}`)).body as Array<{ id: string }>;

const DAILY = { cron: '0 9 * * *', prompt: 'Plan my day', timezone: 'Europe/Oslo', name: 'morning' };

describe('a thread’s schedules', () => {
  it('are created, listed, read, changed, paused, resumed and deleted', async () => {
    const t = await newThread();
    const created = await create(t, DAILY);
    expect(created.status).toBe(201);
    const schedule = created.body as Record<string, unknown> & { id: string; nextFireAt: string };
    expect(schedule).toMatchObject({ agentId: 'demo', threadId: t.threadId, resourceId: t.resourceId, status: 'active', ...DAILY });
    expect(Date.parse(schedule.nextFireAt)).toBeGreaterThan(Date.now());
    expect((await listed(t)).map((s) => s.id)).toEqual([schedule.id]);
    expect((await http(`${tb.base}/schedules?resourceId=${t.resourceId}`)).body).toEqual([schedule]);
    expect((await ofSchedule(t, schedule.id)).body).toEqual(schedule);

    const changed = await ofSchedule(t, schedule.id, '', { method: 'PATCH', body: { cron: '30 8 * * 1-5', prompt: 'Plan my working day' } });
    expect(changed.body).toMatchObject({ cron: '30 8 * * 1-5', prompt: 'Plan my working day', name: 'morning', timezone: 'Europe/Oslo' });
    expect((await ofSchedule(t, schedule.id, '/pause', { method: 'POST' })).body).toMatchObject({ status: 'paused' });
    expect((await http(`${tb.base}/schedules?resourceId=${t.resourceId}&status=paused`)).body).toHaveLength(1);
    expect((await ofSchedule(t, schedule.id, '/resume', { method: 'POST' })).body).toMatchObject({ status: 'active' });
    expect((await ofSchedule(t, schedule.id, '', { method: 'DELETE' })).status).toBe(204);
    expect(await listed(t)).toEqual([]);
    expect((await ofSchedule(t, schedule.id)).status).toBe(404);
  });

  it('refuse bad timing, a workflow, a missing thread and one too many with 400/404/409 naming why, storing nothing', async () => {
    const t = await newThread();
    const refused: Array<[Record<string, unknown>, string]> = [
      [{ ...DAILY, cron: '0 9 * *' }, 'cron'],
      [{ ...DAILY, cron: '0 0 9 * * * 2030' }, 'cron'],
      [{ ...DAILY, cron: 'every morning' }, 'cron'],
      [{ ...DAILY, timezone: 'Mars/Olympus' }, 'timezone'],
      [{ ...DAILY, prompt: '' }, 'prompt'],
      [{ ...DAILY, prompt: 'x'.repeat(10_001) }, 'prompt'],
      [{ ...DAILY, cron: '* * * * * *', prompt: 'every second' }, 'cron'],
      [{ ...DAILY, signalType: 'shout' }, 'signalType'],
      [{ ...DAILY, ifActive: { behavior: 'explode' } }, 'ifActive.behavior'],
      [{ ...DAILY, agentId: DEMO_WORKFLOW_ID }, 'agentId'],
    ];
    for (const [body, field] of refused) {
      const res = await create(t, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.code).toBe('INVALID_INPUT');
      expect(res.body.details.map((d: { path: string }) => d.path)).toContain(field);
    }
    expect(await listed(t)).toEqual([]);
    const missing = await http(`${tb.base}/threads/${uid('no-thread')}/schedules`, { body: { resourceId: t.resourceId, ...DAILY } });
    expect(missing).toMatchObject({ status: 404, body: { code: 'THREAD_NOT_FOUND' } });

    for (let i = 0; i < 3; i++) expect((await create(t, { ...DAILY, name: `n${i}` })).status).toBe(201);
    expect(await create(t, DAILY)).toMatchObject({ status: 409, body: { code: 'LIMIT_REACHED' } });
    expect(await listed(t)).toHaveLength(3);

    const [first] = await listed(t);
    const before = (await ofSchedule(t, first.id)).body;
    const patch = await ofSchedule(t, first.id, '', { method: 'PATCH', body: { cron: '*/1 * * * * *', prompt: 'changed' } });
    expect(patch).toMatchObject({ status: 400, body: { code: 'INVALID_INPUT', details: [{ path: 'cron' }] } });
    expect((await ofSchedule(t, first.id)).body).toEqual(before);
  });

  it('belong to their thread’s resource: another gets 404 on every route, and changes nothing', async () => {
    const [alice, mallory] = [await newThread(), await newThread()];
    const { id } = (await create(alice, { ...DAILY, status: 'paused' })).body as { id: string };
    const before = (await ofSchedule(alice, id)).body;
    const asMallory = [
      await ofSchedule(mallory, id),
      await ofSchedule(mallory, id, '', { method: 'PATCH', body: { prompt: 'mine now' } }),
      await ofSchedule(mallory, id, '/pause', { method: 'POST' }),
      await ofSchedule(mallory, id, '/resume', { method: 'POST' }),
      await ofSchedule(mallory, id, '/run', { method: 'POST' }),
      await ofSchedule(mallory, id, '/triggers'),
      await ofSchedule(mallory, id, '', { method: 'DELETE' }),
    ];
    for (const res of asMallory) expect(res).toMatchObject({ status: 404, body: { code: 'SCHEDULE_NOT_FOUND', error: `Schedule ${id} not found` } });
    expect((await http(`${tb.base}/threads/${alice.threadId}/schedules?resourceId=${mallory.resourceId}`)).body.code).toBe('THREAD_NOT_FOUND');
    expect((await create({ ...alice, resourceId: mallory.resourceId }, DAILY)).body.code).toBe('THREAD_NOT_FOUND');
    expect((await http(`${tb.base}/schedules?resourceId=${mallory.resourceId}`)).body).toEqual([]);
    expect((await ofSchedule(alice, id)).body).toEqual(before);
    expect((await ofSchedule(alice, id, '/triggers')).body).toEqual([]);
  });

  it('go with their thread', async () => {
    const t = await newThread();
    const { id } = (await create(t, DAILY)).body as { id: string };
    expect((await http(`${tb.base}/threads/${t.threadId}?resourceId=${t.resourceId}`, { method: 'DELETE' })).status).toBe(204);
    expect((await ofSchedule(t, id)).status).toBe(404);
    expect((await http(`${tb.base}/schedules?resourceId=${t.resourceId}`)).body).toEqual([]);
  });
});

describe('a schedule’s fires', () => {
  it('are runs on the thread: a follower sees each as a bracket with the schedule’s message, history keeps them, the triggers agree', async () => {
    const t = await newThread();
    const follower = await openSse(`${tb.base}/threads/${t.threadId}/events?resourceId=${t.resourceId}`);
    await follower.waitForComment('connected');
    const { id } = (await create(t, { cron: '*/2 * * * * *', prompt: 'tick' })).body as { id: string };
    await follower.waitForCount('RUN_FINISHED', 2);
    await ofSchedule(t, id, '/pause', { method: 'POST' });
    await follower.close();

    const brackets = follower.list.filter((e) => e.type === 'RUN_STARTED').map((e) => e.runId as string);
    const shown = follower.list.filter((e) => e.type === 'ACTIVITY_SNAPSHOT' && e.activityType === 'signal.notification');
    expect(shown.length).toBeGreaterThanOrEqual(2);
    expect(shown[0]).toMatchObject({ content: { tagName: 'schedule', contents: 'tick' } });
    const history = (await http(`${tb.base}/threads/${t.threadId}/messages?format=agui&resourceId=${t.resourceId}`)).body as Array<{
      role: string;
      content?: unknown;
    }>;
    expect(history.filter((m) => m.role === 'assistant').length).toBeGreaterThanOrEqual(2);

    const triggers = (await ofSchedule(t, id, '/triggers')).body as Array<{ runId?: string; kind: string; outcome: string; firedAt: string }>;
    expect(triggers.length).toBeGreaterThanOrEqual(2);
    expect(triggers.every((tr) => tr.kind === 'schedule')).toBe(true);
    expect(Date.parse(triggers[0].firedAt)).toBeGreaterThanOrEqual(Date.parse(triggers.at(-1)!.firedAt));
    const fired = triggers.filter((tr) => tr.runId !== undefined).map((tr) => tr.runId);
    for (const runId of brackets.slice(0, 2)) expect(fired).toContain(runId);
    expect((await ofSchedule(t, id)).body).toMatchObject({ status: 'paused', lastFireAt: expect.any(String) });
  });

  it('fire now on a paused schedule: one run, a manual trigger, still paused', async () => {
    const t = await newThread();
    const follower = await openSse(`${tb.base}/threads/${t.threadId}/events?resourceId=${t.resourceId}`);
    await follower.waitForComment('connected');
    const { id } = (await create(t, { ...DAILY, prompt: 'now, please', status: 'paused' })).body as { id: string };
    const fired = await ofSchedule(t, id, '/run', { method: 'POST' });
    expect(fired).toMatchObject({ status: 202, body: { scheduleId: id, triggeredAt: expect.any(String) } });
    await follower.waitForCount('RUN_FINISHED', 1);
    await follower.close();
    expect(follower.text).toContain('now, please');
    await expect.poll(async () => ((await ofSchedule(t, id, '/triggers')).body as Array<{ kind: string }>).map((tr) => tr.kind)).toEqual(['manual']);
    expect((await ofSchedule(t, id)).body).toMatchObject({ status: 'paused' });
  });
});

describe('a fire while the thread runs', () => {
  const pickColor = { name: 'pick_color', description: 'pick', parameters: { type: 'object', properties: { color: { type: 'string' } } } };

  it.each([
    ['deliver', 'delivered'],
    ['persist', 'persisted'],
    ['discard', 'discarded'],
  ])('follows ifActive %s: the trigger says %s', async (behavior, outcome) => {
    const t = await newThread();
    // The thread's run waits on a frontend call: it runs until the call is answered.
    const input = runInput({
      threadId: t.threadId,
      messages: [userMessage('use pick_color')],
      tools: [pickColor],
      forwardedProps: { resourceId: t.resourceId },
    });
    const events = sseEvents((await postRun(`${tb.base}/run`, input)).body!);
    let toolCallId: string | undefined;
    while (!toolCallId) {
      const next = await events.next();
      if (next.done) throw new Error('the run ended before its frontend call');
      if (next.value.type === 'TOOL_CALL_END') toolCallId = next.value.toolCallId as string;
    }
    const { id } = (await create(t, { ...DAILY, prompt: `while busy, ${behavior}`, status: 'paused', ifActive: { behavior } })).body as { id: string };
    expect((await ofSchedule(t, id, '/run', { method: 'POST' })).status).toBe(202);
    await expect.poll(async () => ((await ofSchedule(t, id, '/triggers')).body as Array<{ outcome: string }>).map((tr) => tr.outcome)).toEqual([outcome]);
    expect(
      (await http(`${tb.base}/runs/${input.runId}/tool-calls/${toolCallId}/result?resourceId=${t.resourceId}`, { body: { content: 'teal' } })).status,
    ).toBe(202);
    for await (const event of events) void event;
  });
});

describe('BridgeClient’s schedule calls', () => {
  it('create, list, change, pause, fire, read the fires of and delete a schedule; another resource’s client gets SCHEDULE_NOT_FOUND', async () => {
    const t = await newThread();
    const client = new BridgeClient({ baseUrl: tb.base, resourceId: t.resourceId });
    const created = await client.createSchedule(t.threadId, { ...DAILY, status: 'paused' });
    expect(await client.threadSchedules(t.threadId)).toEqual([created]);
    expect(await client.schedules({ status: 'paused' })).toEqual([created]);
    expect(await client.updateSchedule(created.id, { prompt: 'Plan my week' })).toMatchObject({ prompt: 'Plan my week' });
    expect(await client.setSchedule(created.id, 'resume')).toMatchObject({ status: 'active' });
    expect(await client.setSchedule(created.id, 'pause')).toMatchObject({ status: 'paused' });
    expect(await client.runSchedule(created.id)).toMatchObject({ scheduleId: created.id });
    await expect.poll(async () => (await client.scheduleTriggers(created.id, { limit: 5 })).map((tr) => tr.kind)).toEqual(['manual']);
    const other = new BridgeClient({ baseUrl: tb.base, resourceId: uid('other') });
    await expect(other.schedule(created.id)).rejects.toMatchObject({ constructor: BridgeRequestError, status: 404, code: 'SCHEDULE_NOT_FOUND' });
    await client.deleteSchedule(created.id);
    expect(await client.schedules()).toEqual([]);
  });
});

describe('a fire, told: its webhook and its count', () => {
  let receiver: WebhookReceiver;
  let hooked: TestBridge;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    hooked = await startTestBridge({
      storage: 'libsql',
      scheduler: { tickIntervalMs: 200 },
      config: { webhooks: { urls: [receiver.url], secret: TEST_WEBHOOK_SECRET } },
    });
  });
  afterAll(async () => {
    await hooked?.close();
    await receiver?.close();
  });

  it('the run a fire woke ends as a webhook with origin "schedule" and the schedule’s id; /metrics counts the fire by outcome', async () => {
    const resourceId = uid('scheduler');
    const { id: threadId } = (await http(`${hooked.base}/threads`, { body: { resourceId } })).body as { id: string };
    const created = await http(`${hooked.base}/threads/${threadId}/schedules`, { body: { resourceId, ...DAILY, prompt: 'told', status: 'paused' } });
    const scheduleId = created.body.id as string;
    expect((await http(`${hooked.base}/schedules/${scheduleId}/run`, { body: { resourceId } })).status).toBe(202);
    const [hook] = await receiver.waitFor((w) => (w.payload as { data?: { scheduleId?: string } }).data?.scheduleId === scheduleId);
    expect(hook.payload).toMatchObject({
      type: 'run.finished',
      data: { origin: 'schedule', scheduleId, threadId, resourceId, agentId: 'demo', outcome: 'success' },
    });
    const [trigger] = (await http(`${hooked.base}/schedules/${scheduleId}/triggers?resourceId=${resourceId}`)).body as Array<{ runId?: string }>;
    expect(hook.payload?.data.runId).toBe(trigger.runId);
    const metrics = await hooked.bridge.metricsText();
    expect(metrics).toMatch(/agui_bridge_schedule_fires_total\{outcome="succeeded"\} 1/);
    expect(metrics).toMatch(/agui_bridge_runs_started_total\{agent="demo",origin="schedule"\} 1/);
  });
});
