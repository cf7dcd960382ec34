import { describe, expect, it } from 'vitest';
import type { Route, RouteErrorCode } from '../src/http/route.js';
import { codesOf } from '../src/http/route-codes.js';
import { ROUTES } from '../src/http/routes/index.js';
import { createDemoWorkflow, DEMO_WORKFLOW_ID } from '../src/demo/workflow.js';
import { runInput, runStrict, uid, userMessage } from './support/agui.js';
import { http, useTestBridge } from './support/server.js';
import { openSse } from './support/sse.js';

// Every route of the table, aimed by resource "mallory" at resource "alice"'s ids, answers as it
// does for ids that do not exist, and changes nothing of alice's (docs/security.md "Tenancy").
// Built from ROUTES and each route's own example body: a new route is swept without being listed.

const tb = useTestBridge({ storage: 'libsql', workflows: () => ({ [DEMO_WORKFLOW_ID]: createDemoWorkflow() }) });

/** The ids a request aims at. */
interface Aim {
  threadId: string;
  runId: string;
  toolCallId: string;
  signalId: string;
  scheduleId: string;
}

/** What a route answered, with the aimed ids replaced by their names: two aims compare equal when they told the caller the same. */
interface Told {
  status: number;
  body: string;
}

/** Alice's agent thread with something of everything: history, state, a call waiting for approval, a notification, a schedule. */
async function alicesAgentThread(alice: string): Promise<Aim> {
  const threadId = uid('alice-thread');
  const on = (text: string) => runInput({ threadId, messages: [userMessage(text)], forwardedProps: { resourceId: alice } });
  expect((await runStrict(`${tb.base}/run`, on('remember that I like tea'))).terminal.type).toBe('RUN_FINISHED');
  const approval = on('delete a.txt');
  expect((await runStrict(`${tb.base}/run`, approval)).terminal).toMatchObject({ outcome: { type: 'interrupt' } });
  const notified = await http(`${tb.base}/threads/${threadId}/notifications`, {
    body: { resourceId: alice, source: 'ci', kind: 'build', summary: 'alice only', priority: 'low' },
  });
  expect(notified.status).toBe(202);
  const pending = await http(`${tb.base}/threads/${threadId}/pending-approvals?resourceId=${alice}`);
  expect(pending.body).toHaveLength(1);
  // Paused: a fire would change alice's thread whoever caused it.
  const schedule = await http(`${tb.base}/threads/${threadId}/schedules`, {
    body: { resourceId: alice, cron: '0 9 * * *', prompt: 'plan my day', status: 'paused' },
  });
  expect(schedule.status).toBe(201);
  return { threadId, runId: approval.runId, toolCallId: pending.body[0].toolCallId, signalId: uid('signal'), scheduleId: schedule.body.id };
}

/** Alice's workflow thread, its run waiting on her review. */
async function alicesWorkflowThread(alice: string): Promise<Aim> {
  const input = runInput({ messages: [userMessage('tea')], forwardedProps: { agentId: DEMO_WORKFLOW_ID, resourceId: alice } });
  expect((await runStrict(`${tb.base}/run`, input)).terminal).toMatchObject({ outcome: { type: 'interrupt' } });
  return { threadId: input.threadId, runId: input.runId, toolCallId: uid('call'), signalId: uid('signal'), scheduleId: uid('schedule') };
}

/** Everything alice can read of her thread: a sweep that changed anything of hers changes this. */
async function alicesView(alice: string, agentId: string, threadId: string) {
  const read = async (path: string) => {
    const res = await http(`${tb.base}/threads/${threadId}${path}${path.includes('?') ? '&' : '?'}resourceId=${alice}&agentId=${agentId}`);
    return { status: res.status, body: res.body as unknown };
  };
  return {
    thread: await read(''),
    messages: await read('/messages?format=agui'),
    state: await read('/state'),
    approvals: await read('/pending-approvals'),
    notifications: await read('/notifications'),
    schedules: await read('/schedules'),
  };
}

/** The route's example body, aimed at `aim` as `mallory`: ids replaced, message ids fresh (they are unique across threads). */
function bodyFor(route: Route, aim: Aim, mallory: string, agentId: string): unknown {
  const aimed = (value: unknown, key?: string): unknown => {
    if (Array.isArray(value)) return value.map((v) => aimed(v));
    if (value && typeof value === 'object') {
      const entries = Object.entries(value).map(([k, v]) => [k, aimed(v, k)] as const);
      const out: Record<string, unknown> = Object.fromEntries(entries);
      if (key === 'forwardedProps') Object.assign(out, { resourceId: mallory, agentId });
      return out;
    }
    if (key === 'threadId' || key === 'runId' || key === 'toolCallId') return aim[key];
    if (key === 'id') return uid('msg');
    return value;
  };
  const body = aimed(route.example) as Record<string, unknown>;
  return route.path === '/run' ? body : { ...body, resourceId: mallory, agentId };
}

/** The route's path with the aimed ids in it. */
const pathFor = (route: Route, aim: Aim, agentId: string) =>
  route.path
    .replace(':threadId', encodeURIComponent(aim.threadId))
    .replace(':runId', encodeURIComponent(aim.runId))
    .replace(':toolCallId', encodeURIComponent(aim.toolCallId))
    .replace(':signalId', encodeURIComponent(aim.signalId))
    .replace(':scheduleId', encodeURIComponent(aim.scheduleId))
    .replace(':agentId', agentId);

const isFollow = (route: Route) => route.method === 'GET' && Object.values(route.ok).some((ok) => 'events' in ok);

/** Sends `route` aimed at `aim` as mallory, and answers what it told her, the aimed ids replaced by their names. */
async function told(route: Route, aim: Aim, mallory: string, agentId: string): Promise<Told> {
  const url = `${tb.base}${pathFor(route, aim, agentId)}?resourceId=${mallory}&agentId=${agentId}`;
  let status: number;
  let body: unknown;
  if (isFollow(route)) {
    // A thread's stream never ends: what it shows from its snapshot bracket on is what it told.
    const sse = await openSse(`${url}&snapshot=1`);
    status = sse.status;
    if (status === 200) {
      await sse.waitForEvent((e) => e.type === 'RUN_FINISHED');
      body = sse.list.map(({ type, messages, snapshot }) => ({ type, messages, snapshot }));
    }
    await sse.close();
  } else {
    const withBody = route.example !== undefined || route.method === 'POST';
    const res = await http(url, { method: route.method, ...(withBody && { body: route.example === undefined ? {} : bodyFor(route, aim, mallory, agentId) }) });
    status = res.status;
    body = res.body;
  }
  let text = JSON.stringify(body ?? null);
  for (const [name, id] of Object.entries(aim)) text = text.split(id).join(`<${name}>`);
  return { status, body: text };
}

/** Whether a request for `threadId` created it for mallory (a write that claims a missing thread). */
const createdFor = async (mallory: string, threadId: string) => (await http(`${tb.base}/threads/${threadId}?resourceId=${mallory}`)).status === 200;

/** Ids nobody uses: what mallory's answers on alice's ids must look like. */
const nobodys = (): Aim => ({
  threadId: uid('no-thread'),
  runId: uid('no-run'),
  toolCallId: uid('no-call'),
  signalId: uid('no-signal'),
  scheduleId: uid('no-schedule'),
});

/** The routes that aim at something: an id in the path, or a thread in the body. */
const aimed = ROUTES.filter((r) => r.path.includes(':') || JSON.stringify(r.example ?? {}).includes('threadId'));

describe.each([
  { kind: 'agent', agentId: 'demo', make: alicesAgentThread },
  { kind: 'workflow', agentId: DEMO_WORKFLOW_ID, make: alicesWorkflowThread },
])("mallory against alice's $kind thread, on every route", ({ agentId, make }) => {
  it('is answered as for ids that do not exist, and changes nothing of alice', async () => {
    const [alice, mallory] = [uid('alice'), uid('mallory')];
    const hers = await make(alice);
    const before = await alicesView(alice, agentId, hers.threadId);
    expect(aimed.length).toBeGreaterThanOrEqual(27);

    for (const route of aimed) {
      const label = `${route.method} ${route.path}`;
      const missing = nobodys();
      const onNothing = await told(route, missing, mallory, agentId);
      const onAlices = await told(route, hers, mallory, agentId);
      for (const answer of [onNothing, onAlices]) {
        const code = (JSON.parse(answer.body) as { code?: RouteErrorCode } | null)?.code;
        if (code) expect(codesOf(route), `${label} answered ${code}`).toContain(code);
      }
      if (await createdFor(mallory, missing.threadId)) {
        // A write that claims a missing thread made it mallory's: on a taken id it can only refuse,
        // as creating a taken id does for anyone (docs/security.md "What is not an oracle").
        expect([404, 409], `${label}: ${onAlices.body}`).toContain(onAlices.status);
        if (onAlices.status === 404) expect(JSON.parse(onAlices.body).code, label).toBe('THREAD_NOT_FOUND');
      } else {
        expect(onAlices, label).toEqual(onNothing);
      }
    }

    expect(await alicesView(alice, agentId, hers.threadId)).toEqual(before);
  });
});
