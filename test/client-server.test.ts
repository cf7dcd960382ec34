import type { BaseEvent, Message } from '@ag-ui/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BridgeAgent, BridgeClient, BridgeRequestError, followThreadEvents, type ConnectionStatus, type ThreadEventFrame } from '../src/client/index.js';
import { assistantText, uid } from './support/agui.js';
import { isEventStream, startCutProxy, type CutProxy, type ProxiedRequest } from './support/browser.js';
import { runAgentStrict } from './support/run.js';
import { useTestBridge } from './support/server.js';
import { brackets, foldMessages, isTerminal, openSse, verifyThreadEvents, type AnyEvent, type SseReader } from './support/sse.js';

/** Retries an expectation until it holds (vi.waitFor's 1 s default is too short on a loaded machine). */
const until = (check: () => void) => vi.waitFor(check, { timeout: 20_000, interval: 20 });

/** A message the demo echoes word by word: with `delayMs: 20` a run that lasts about a second. */
const longMessage = (words: number) => Array.from({ length: words }, (_, i) => `w${i}`).join(' ');

const roleAndText = (messages: Message[]) => messages.map((m) => [m.role, 'content' in m ? m.content : undefined]);

/** Counts the run brackets an agent subscriber has seen finish (RUN_FINISHED or RUN_ERROR). */
function runCounter() {
  let finished = 0;
  return {
    subscriber: {
      onRunFinishedEvent: () => void finished++,
      onRunErrorEvent: () => void finished++,
    },
    get finished() {
      return finished;
    },
  };
}

/** Fails the test on any warning the AG-UI client prints (a stream it had to repair). */
function failOnWarnings() {
  const warnings: string[] = [];
  const spy = vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => void warnings.push(args.map(String).join(' ')));
  return {
    check: () => expect(warnings).toEqual([]),
    restore: () => spy.mockRestore(),
  };
}

async function follow(url: string): Promise<SseReader> {
  const sse = await openSse(url);
  await sse.waitForComment('connected');
  return sse;
}

describe('BridgeAgent against the real server', () => {
  const b = useTestBridge({ delayMs: 20, config: { retryMs: 100 } });

  it('runAgent: one run on /run, with resourceId and agentId in forwardedProps (the thread is the resource’s)', async () => {
    const resourceId = uid('user');
    const agent = new BridgeAgent({ baseUrl: `${b.base}/`, threadId: uid('thread'), resourceId, agentId: 'demo' });
    expect(agent.url).toBe(`${b.base}/run`);
    agent.addMessage({ id: uid('msg'), role: 'user', content: 'hello bridge' });
    const run = await runAgentStrict(agent, { runId: uid('run') });
    expect(assistantText(run.events)).toBe('Echo: hello bridge');
    expect(run.finished?.outcome).toBe('success');
    expect(roleAndText(agent.messages)).toEqual([
      ['user', 'hello bridge'],
      ['assistant', 'Echo: hello bridge'],
    ]);
    // Memory stored the thread under the agent's resourceId (sent in forwardedProps).
    const mine = new BridgeClient({ baseUrl: b.base, resourceId });
    expect(await mine.getThread(agent.threadId)).toMatchObject({ id: agent.threadId, resourceId });
    expect(roleAndText(await mine.messages(agent.threadId, { format: 'agui' }))).toEqual(roleAndText(agent.messages));
    await expect(new BridgeClient({ baseUrl: b.base, resourceId: uid('other') }).getThread(agent.threadId)).rejects.toMatchObject({
      status: 404,
      code: 'THREAD_NOT_FOUND',
    });
  });

  it('connectAgent follows the thread across two runs woken by BridgeClient.sendMessage, then resumes after a disconnect', async () => {
    const warnings = failOnWarnings();
    try {
      const resourceId = uid('user');
      const threadId = uid('thread');
      const statuses: ConnectionStatus[] = [];
      const agent = new BridgeAgent({ baseUrl: b.base, threadId, resourceId, onConnectionChange: (s) => statuses.push(s) });
      const client = new BridgeClient({ baseUrl: b.base, resourceId });
      const runs = runCounter();
      const events: BaseEvent[] = [];
      const following = agent.connectAgent({}, { ...runs.subscriber, onEvent: ({ event }) => void events.push(event) });
      // First the snapshot run (an empty history), then live.
      await until(() => expect(runs.finished).toBe(1));
      expect(agent.connection.state).toBe('live');
      expect(events.map((e) => e.type)).toEqual(['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED']);

      const first = await client.sendMessage(threadId, 'first message');
      expect(first).toEqual({ action: 'wake', runId: expect.any(String), signalId: expect.any(String) });
      await until(() => expect(runs.finished).toBe(2));
      await client.sendMessage(threadId, 'second message');
      await until(() => expect(runs.finished).toBe(3));
      expect(roleAndText(agent.messages)).toEqual([
        ['user', 'first message'],
        ['assistant', 'Echo: first message'],
        ['user', 'second message'],
        ['assistant', 'Echo: second message'],
      ]);
      expect(events.find((e) => e.type === 'RUN_STARTED' && (e as AnyEvent).runId === first.runId)).toBeDefined();
      expect(agent.messages[0].id).toBe(first.signalId); // the user echo carries the signal id

      agent.disconnect();
      const result = await following;
      expect(roleAndText(result.newMessages)).toEqual(roleAndText(agent.messages));
      expect(statuses.map((s) => s.state)).toEqual(['connecting', 'live', 'closed']);
      const resumeFrom = agent.lastEventId;
      expect(Number(resumeFrom)).toBeGreaterThan(10);

      // While nobody follows, a third run; connecting again resumes after the last id: no snapshot, nothing twice.
      await client.sendMessage(threadId, 'third message');
      const again = runCounter();
      const replayed: BaseEvent[] = [];
      const resumed = agent.connectAgent({}, { ...again.subscriber, onEvent: ({ event }) => void replayed.push(event) });
      await until(() => expect(again.finished).toBe(1));
      expect(replayed.map((e) => e.type)).not.toContain('MESSAGES_SNAPSHOT');
      expect(replayed[0]).toMatchObject({ type: 'RUN_STARTED' });
      expect(roleAndText(agent.messages)).toEqual([
        ['user', 'first message'],
        ['assistant', 'Echo: first message'],
        ['user', 'second message'],
        ['assistant', 'Echo: second message'],
        ['user', 'third message'],
        ['assistant', 'Echo: third message'],
      ]);
      await agent.detachActiveRun();
      await resumed;
      warnings.check();
    } finally {
      warnings.restore();
    }
  });

  it('a connection refused with 404 (an agent the bridge does not have) rejects connectAgent with a BridgeRequestError, without retrying', async () => {
    const statuses: string[] = [];
    const agent = new BridgeAgent({
      baseUrl: b.base,
      threadId: uid('thread'),
      resourceId: uid('someone'),
      agentId: 'nobody',
      onConnectionChange: (s) => statuses.push(s.state),
    });
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const failure = await agent.connectAgent({}, {}).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(BridgeRequestError);
      expect(failure).toMatchObject({ status: 404, code: 'AGENT_NOT_FOUND' });
      expect(agent.connection.state).toBe('closed');
      expect(statuses).toEqual(['connecting', 'closed']);
    } finally {
      error.mockRestore();
    }
  });
});

/** Matches the event stream requests of one thread. */
const ofThread = (threadId: string) => (request: ProxiedRequest) => isEventStream(request) && request.path.includes(`/threads/${threadId}/events`);

describe('a dropped connection, cut by a real TCP proxy mid-run', () => {
  const b = useTestBridge({ delayMs: 20, config: { retryMs: 100 } });
  let proxy: CutProxy;
  let proxied: string;
  beforeAll(async () => {
    proxy = await startCutProxy(b.base);
    proxied = `${proxy.origin}${new URL(b.base).pathname}`;
  });
  afterAll(async () => {
    await proxy?.close(); // before the bridge closes: vitest runs afterAll hooks in reverse order
  });

  it('followThreadEvents resumes with Last-Event-ID: the same (id, event) sequence as an undisturbed subscriber', async () => {
    const resourceId = uid('user');
    const threadId = uid('thread');
    const client = new BridgeClient({ baseUrl: b.base, resourceId });
    const stayed = await follow(`${b.base}/threads/${threadId}/events?resourceId=${resourceId}`);
    const frames: ThreadEventFrame[] = [];
    const statuses: ConnectionStatus[] = [];
    const from = proxy.requests.length;
    let receivedBeforeReconnect = -1;
    const onStatus = (s: ConnectionStatus) => {
      statuses.push(s);
      if (s.state === 'reconnecting') receivedBeforeReconnect = frames.length;
    };
    const sub = followThreadEvents({ url: `${proxied}/threads/${threadId}/events?resourceId=${resourceId}`, onStatus }).subscribe((f) => frames.push(f));
    await until(() => expect(statuses.at(-1)?.state).toBe('live'));
    const { runId } = await client.sendMessage(threadId, longMessage(40));
    await until(() => expect(frames.filter((f) => f.event.type === 'TEXT_MESSAGE_CONTENT').length).toBeGreaterThanOrEqual(5));
    expect(proxy.cut(ofThread(threadId))).toBe(1);
    const cutAt = frames.length;

    const reconnect = await proxy.waitForRequest(ofThread(threadId), from + 1);
    await until(() => expect(frames.some((f) => f.event.type === 'RUN_FINISHED')).toBe(true));
    await stayed.waitForCount('RUN_FINISHED', 1);
    const reconnecting = statuses.find((s) => s.state === 'reconnecting');
    expect(reconnect.headers['last-event-id']).toBe(reconnecting?.lastEventId);
    expect(reconnect.headers['last-event-id']).toBe(frames[receivedBeforeReconnect - 1].id);
    expect(statuses.map((s) => s.state)).toEqual(['connecting', 'live', 'reconnecting', 'live']);
    // The cut came mid-run, and nothing was lost or doubled around it.
    expect(frames.findIndex((f) => f.event.type === 'RUN_FINISHED')).toBeGreaterThan(cutAt);
    expect(frames.map((f) => ({ id: Number(f.id), event: f.event }))).toEqual(stayed.events);
    expect(frames[0].event).toMatchObject({ type: 'RUN_STARTED', runId });
    const assistant = frames
      .map((f) => f.event as AnyEvent)
      .filter((e) => e.type !== 'TEXT_MESSAGE_CONTENT' || e.messageId !== (frames[1].event as AnyEvent).messageId);
    expect(assistantText(assistant)).toBe(`Echo: ${longMessage(40)}`);
    sub.unsubscribe();
    await stayed.close();
  }, 20_000);

  it('BridgeAgent.connectAgent through the cut: agent.messages equal the undisturbed fold, every event once', async () => {
    const warnings = failOnWarnings();
    try {
      const resourceId = uid('user');
      const threadId = uid('thread');
      const client = new BridgeClient({ baseUrl: b.base, resourceId });
      const stayed = await follow(`${b.base}/threads/${threadId}/events?resourceId=${resourceId}`);
      const statuses: string[] = [];
      const agent = new BridgeAgent({ baseUrl: proxied, threadId, resourceId, onConnectionChange: (s) => statuses.push(s.state) });
      const runs = runCounter();
      const events: BaseEvent[] = [];
      const from = proxy.requests.length;
      const following = agent.connectAgent({}, { ...runs.subscriber, onEvent: ({ event }) => void events.push(event) });
      await until(() => expect(runs.finished).toBe(1)); // the (empty) snapshot run
      expect((await proxy.waitForRequest(ofThread(threadId), from)).path).toContain('snapshot=1');
      await client.sendMessage(threadId, longMessage(40));
      await until(() => expect(events.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').length).toBeGreaterThanOrEqual(5));
      expect(proxy.cut(ofThread(threadId))).toBe(1);
      const reconnect = await proxy.waitForRequest(ofThread(threadId), from + 1);
      expect(reconnect.path).not.toContain('snapshot=1');
      expect(reconnect.headers['last-event-id']).toMatch(/^\d+$/);
      await until(() => expect(runs.finished).toBe(2));
      await stayed.waitForCount('RUN_FINISHED', 1);

      expect(statuses).toEqual(['connecting', 'live', 'reconnecting', 'live']);
      const live = events.slice(3);
      expect(live.map((e) => e.type)).toEqual(stayed.list.map((e) => e.type));
      expect(agent.messages).toEqual(await foldMessages(stayed.list));
      expect(roleAndText(agent.messages)).toEqual([
        ['user', longMessage(40)],
        ['assistant', `Echo: ${longMessage(40)}`],
      ]);
      const { warnings: verifyWarnings } = await verifyThreadEvents(events as AnyEvent[]);
      expect(verifyWarnings).toEqual([]);
      agent.disconnect();
      await following;
      await stayed.close();
      warnings.check();
    } finally {
      warnings.restore();
    }
  });
});

describe('BridgeClient helpers against the real server', () => {
  const b = useTestBridge({ delayMs: 20 });

  const setup = async () => {
    const resourceId = uid('user');
    const client = new BridgeClient({ baseUrl: b.base, resourceId });
    const thread = await client.createThread({ title: 'helpers', metadata: { a: 1 } });
    const sse = await follow(`${b.base}/threads/${thread.id}/events?resourceId=${resourceId}`);
    return { resourceId, client, threadId: thread.id, thread, sse };
  };
  const runsOf = (sse: SseReader) => brackets(sse.list).filter((r) => isTerminal(r.at(-1) as AnyEvent));

  it('threads: create, list, get, update (metadata merged), messages in both formats, delete', async () => {
    const { client, threadId, thread, resourceId, sse } = await setup();
    expect(thread).toMatchObject({ id: threadId, resourceId, title: 'helpers', metadata: { a: 1 } });
    const other = await client.createThread({ threadId: uid('thread') });
    expect((await client.listThreads()).map((t) => t.id)).toEqual([other.id, threadId]);
    expect(await client.listThreads({ limit: 1 })).toHaveLength(1);
    expect(await client.updateThread(threadId, { title: 'renamed', metadata: { b: 2 } })).toMatchObject({ title: 'renamed', metadata: { a: 1, b: 2 } });
    await client.sendMessage(threadId, 'store me');
    await sse.waitForCount('RUN_FINISHED', 1);
    const agui = await client.messages(threadId, { format: 'agui' });
    expect(roleAndText(agui)).toEqual([
      ['user', 'store me'],
      ['assistant', 'Echo: store me'],
    ]);
    const stored = await client.messages(threadId);
    // Mastra stores a message sent as a signal with role "signal".
    expect(stored.map((m) => [m.role, m.content, m.threadId])).toEqual([
      ['signal', 'store me', threadId],
      ['assistant', 'Echo: store me', threadId],
    ]);
    await client.deleteThread(other.id);
    await expect(client.getThread(other.id)).rejects.toMatchObject({ status: 404, code: 'THREAD_NOT_FOUND' });
    await sse.close();
  });

  it('idempotencyKey: a send made again with the same key gets the first answer, and the thread holds the message once', async () => {
    const { client, threadId, sse } = await setup();
    const idempotencyKey = uid('key');
    const first = await client.sendMessage(threadId, 'only once', { idempotencyKey });
    const again = await client.sendMessage(threadId, 'only once', { idempotencyKey });
    expect(again).toEqual(first);
    await sse.waitForCount('RUN_FINISHED', 1);
    // Another key is another request.
    const other = await client.sendMessage(threadId, 'only once', { idempotencyKey: uid('key') });
    expect(other.signalId).not.toBe(first.signalId);
    await sse.waitForCount('RUN_FINISHED', 2);
    expect(roleAndText(await client.messages(threadId, { format: 'agui' }))).toEqual([
      ['user', 'only once'],
      ['assistant', 'Echo: only once'],
      ['user', 'only once'],
      ['assistant', 'Echo: only once'],
    ]);
    await sse.close();
  });

  it('approve and decline: pendingApprovals lists the call, the run resumes on the stream', async () => {
    const { client, threadId, sse } = await setup();
    await client.sendMessage(threadId, 'delete report.pdf');
    await sse.waitFor(() => runsOf(sse).length === 1);
    expect(runsOf(sse)[0].at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'interrupt' } });
    const [call] = await client.pendingApprovals(threadId);
    expect(call).toEqual({ runId: expect.any(String), toolCallId: expect.any(String), toolName: 'delete_file', args: { path: 'report.pdf' } });
    expect(await client.approve(threadId, call.toolCallId)).toEqual({ runId: call.runId, toolCallId: call.toolCallId });
    await sse.waitFor(() => runsOf(sse).length === 2);
    expect(assistantText(runsOf(sse)[1])).toBe('Deleted as requested: {"deleted":"report.pdf"}');
    expect(await client.pendingApprovals(threadId)).toEqual([]);

    await client.sendMessage(threadId, 'delete notes.md');
    await sse.waitFor(() => runsOf(sse).length === 3);
    const [second] = await client.pendingApprovals(threadId);
    await client.decline(threadId, second.toolCallId, { reason: 'keep it' });
    await sse.waitFor(() => runsOf(sse).length === 4);
    expect(assistantText(runsOf(sse)[3])).toContain('I did not delete the file');
    expect(assistantText(runsOf(sse)[3])).toContain('keep it');
    const unknown = await client.approve(threadId, 'no-such-call').catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(BridgeRequestError);
    expect(unknown).toMatchObject({ status: 404, code: 'TOOL_CALL_NOT_FOUND' });
    await sse.close();
  });

  it('notify wakes the agent; notifications lists the record; state is skipped when the cacheKey is unchanged; signal', async () => {
    const { client, threadId, sse } = await setup();
    const answer = await client.notify(threadId, { source: 'ci', kind: 'build', summary: 'Build #7 passed', priority: 'high' });
    expect(answer.record).toMatchObject({ threadId, source: 'ci', kind: 'build', summary: 'Build #7 passed', priority: 'high' });
    expect(answer.runId).toEqual(expect.any(String));
    await sse.waitFor(() => runsOf(sse).length === 1);
    expect(runsOf(sse)[0].find((e) => e.type === 'ACTIVITY_SNAPSHOT')).toMatchObject({
      activityType: 'signal.notification',
      content: { contents: 'Build #7 passed' },
    });
    expect(assistantText(runsOf(sse)[0])).toContain('Build #7 passed</notification>');
    const records = await client.notifications(threadId);
    expect(records.map((r) => r.id)).toEqual([answer.record.id]);
    expect(await client.notifications(threadId, { status: 'pending' })).toEqual([]);

    const state = await client.state(threadId, { id: 'cart', cacheKey: 'v1', contents: 'Cart: 2 items' });
    expect(state).toEqual({ action: 'wake', runId: expect.any(String), signalId: expect.any(String) });
    await sse.waitFor(() => runsOf(sse).length === 2);
    expect(await client.state(threadId, { id: 'cart', cacheKey: 'v1', contents: 'Cart: 2 items' })).toEqual({ skipped: true, reason: expect.any(String) });

    const signal = await client.signal(threadId, { type: 'reactive', contents: 'The user opened pricing', tagName: 'page_event' });
    expect(signal.action).toBe('wake');
    await sse.waitFor(() => runsOf(sse).length === 3);
    expect(runsOf(sse)[2].find((e) => e.type === 'ACTIVITY_SNAPSHOT')).toMatchObject({ activityType: 'signal.reactive', content: { tagName: 'page_event' } });
    await sse.close();
  });

  it('queueMessage while a run is active, cancelQueued, abort', async () => {
    const { client, threadId, sse } = await setup();
    const woke = await client.sendMessage(threadId, longMessage(30));
    await sse.waitForEvent((e) => e.type === 'TEXT_MESSAGE_CONTENT' && e.delta === 'Echo: ');
    const queued = await client.queueMessage(threadId, 'never run me');
    expect(queued.action).toBe('deliver');
    expect(await client.cancelQueued(threadId, queued.signalId)).toEqual({ cancelled: [queued.signalId] });
    expect(await client.abort(threadId)).toEqual({ aborted: true });
    await sse.waitFor(() => runsOf(sse).length === 1);
    expect(runsOf(sse)[0].at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: woke.runId, outcome: { type: 'cancelled' } });
    expect(await client.abort(threadId)).toEqual({ aborted: false });
    expect(JSON.stringify(sse.list)).not.toContain('never run me');
    await sse.close();
  });

  it('agents lists the demo agent', async () => {
    expect(await new BridgeClient({ baseUrl: b.base }).agents()).toEqual([expect.objectContaining({ id: 'demo', name: 'Demo Agent' })]);
  });

  it('maps error answers to BridgeRequestError { status, code, details }', async () => {
    const { client, threadId, sse } = await setup();
    const intruder = new BridgeClient({ baseUrl: b.base, resourceId: uid('intruder') });
    for (const call of [
      () => intruder.sendMessage(threadId, 'hi'),
      () => intruder.pendingApprovals(threadId),
      () => intruder.notifications(threadId),
      () => intruder.messages(threadId),
    ]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BridgeRequestError);
      expect(error).toMatchObject({ status: 404, code: 'THREAD_NOT_FOUND', details: undefined });
    }
    const invalid = await client.signal(threadId, { type: 'reactive', contents: 'x', tagName: '1-not-xml' }).catch((e: unknown) => e);
    expect(invalid).toMatchObject({ status: 400, code: 'INVALID_INPUT', details: [{ path: 'tagName', message: expect.stringContaining('XML-safe') }] });
    const empty = await client.sendMessage(threadId, '').catch((e: unknown) => e);
    expect(empty).toMatchObject({ status: 400, code: 'INVALID_INPUT' });
    expect((empty as BridgeRequestError).details?.[0].path).toMatch(/^message/);
    await sse.close();
  });
});
