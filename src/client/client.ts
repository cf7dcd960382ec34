import type { Message } from '@ag-ui/client';
import { requestError } from './errors.js';
import type {
  AgentInfo,
  FetchFn,
  MessageInput,
  NotificationAnswer,
  NotificationInput,
  NotificationRecord,
  NotificationStatus,
  PendingApproval,
  RoutingOptions,
  Schedule,
  ScheduleChanges,
  ScheduleFilter,
  ScheduleFired,
  ScheduleInput,
  ScheduleTrigger,
  SignalDecision,
  SignalInput,
  StateSignalInput,
  StateSkipped,
  ThreadInfo,
  ThreadMessage,
  ToolApprovalAnswer,
} from './types.js';

/** Options of a `BridgeClient`. */
export interface BridgeClientConfig {
  /** The bridge's base URL, prefix included (`http://127.0.0.1:4111/agui`, or `/agui` in a page). */
  baseUrl: string;
  /** Who the caller is: sent as `resourceId` with every request (the server's `resolveResourceId` hook has the last word). */
  resourceId?: string;
  /** The bridge agent the thread belongs to, if not the default one. */
  agentId?: string;
  /** Extra headers on every request (e.g. `Authorization`). */
  headers?: Record<string, string>;
  /** A `fetch` to use instead of the global one. */
  fetch?: FetchFn;
}

/**
 * Paging of list routes, as the routes take it (docs/api.md "Pagination"): `limit` items per
 * page, and `offset` the page, counted from 0. `offset` counts pages, not items: the routes pass it
 * to Mastra's storage, which pages that way.
 *
 * @example
 * await client.listThreads({ limit: 20 });            // threads 1–20, newest first
 * await client.listThreads({ limit: 20, offset: 1 }); // threads 21–40 (page 1), not 2–21
 */
export interface PageOptions {
  /** Items per page. Without it, all of them (and `offset` is ignored). */
  limit?: number;
  /** Which page of `limit` items, from 0 (needs `limit`). */
  offset?: number;
}

/**
 * For the steering calls that take one (send, queue, signal, notify, approve, decline): a key made
 * once per request and sent as its `Idempotency-Key` header. Sent again with the same key after a
 * timeout or a dropped connection, the request gets the first answer (marked as a replay) and
 * changes nothing: the message is sent once. 1 to 256 printable ASCII characters.
 *
 * @example
 * const key = crypto.randomUUID();
 * await client.sendMessage('t1', 'book the 9:40 train', { idempotencyKey: key }); // and on a retry, the same key
 */
export interface Idempotent {
  idempotencyKey?: string;
}

type Query = Record<string, string | number | undefined>;

/**
 * Typed helpers for the bridge's thread and signal routes. Every method resolves with the parsed
 * answer, or rejects with a `BridgeRequestError { status, code, details }` for an error answer.
 * The thread stream itself is followed with `BridgeAgent.connectAgent()` (or `followThreadEvents`).
 *
 * @example
 * const client = new BridgeClient({ baseUrl: 'http://127.0.0.1:4111/agui', resourceId: 'demo-user' });
 * const thread = await client.createThread({ title: 'Trip' });
 * const { action, runId } = await client.sendMessage(thread.id, 'weather in Oslo'); // action: 'wake'
 */
export class BridgeClient {
  /** The bridge's base URL (no trailing slash). */
  readonly baseUrl: string;
  readonly resourceId: string | undefined;
  readonly agentId: string | undefined;
  private readonly headers: Record<string, string>;
  private readonly fetchFn: FetchFn;

  constructor(config: BridgeClientConfig) {
    this.baseUrl = config.baseUrl.replace(/\/+$/, '');
    this.resourceId = config.resourceId;
    this.agentId = config.agentId;
    this.headers = { ...config.headers };
    this.fetchFn = config.fetch ?? ((url, init) => fetch(url, init));
  }

  // ── threads ──────────────────────────────────────────────────────────

  /**
   * Creates a thread for the caller (`POST /threads`).
   * @example const thread = await client.createThread({ title: 'Support chat' });
   */
  createThread(options: { threadId?: string; title?: string; metadata?: Record<string, unknown> } = {}): Promise<ThreadInfo> {
    return this.request('POST', '/threads', { body: { ...this.target(), ...options } });
  }

  /**
   * The caller's threads, newest first (`GET /threads`).
   * @example const [latest] = await client.listThreads({ limit: 20 });
   */
  listThreads(options: PageOptions = {}): Promise<ThreadInfo[]> {
    return this.request('GET', '/threads', { query: { ...this.target(), ...options } });
  }

  /**
   * One thread (`GET /threads/:threadId`).
   * @example const thread = await client.getThread('t1');
   */
  getThread(threadId: string): Promise<ThreadInfo> {
    return this.request('GET', this.thread(threadId), { query: this.target() });
  }

  /**
   * Changes a thread's title or merges into its metadata (`PATCH /threads/:threadId`).
   * @example await client.updateThread('t1', { title: 'Renamed' });
   */
  updateThread(threadId: string, changes: { title?: string; metadata?: Record<string, unknown> }): Promise<ThreadInfo> {
    return this.request('PATCH', this.thread(threadId), { body: { ...this.target(), ...changes } });
  }

  /**
   * Deletes a thread (`DELETE /threads/:threadId`).
   * @example await client.deleteThread('t1');
   */
  async deleteThread(threadId: string): Promise<void> {
    await this.request<undefined>('DELETE', this.thread(threadId), { query: this.target() });
  }

  /**
   * The thread's history: AG-UI messages with `format: 'agui'` (what `MESSAGES_SNAPSHOT` carries), else Mastra's stored form.
   * @example const history = await client.messages('t1', { format: 'agui' });
   */
  messages(threadId: string, options: PageOptions & { format: 'agui' }): Promise<Message[]>;
  messages(threadId: string, options?: PageOptions & { format?: 'mastra' }): Promise<ThreadMessage[]>;
  messages(threadId: string, options: PageOptions & { format?: 'agui' | 'mastra' } = {}): Promise<Message[] | ThreadMessage[]> {
    return this.request('GET', `${this.thread(threadId)}/messages`, { query: { ...this.target(), ...options } });
  }

  // ── messages and signals ─────────────────────────────────────────────

  /**
   * Sends a user message now: wakes an idle thread, or joins the active run (`POST /send-message`).
   * With `idempotencyKey`, safe to send again after a timeout (`Idempotent`).
   * @example const { action, runId } = await client.sendMessage('t1', 'hello'); // 'wake' on an idle thread
   */
  sendMessage(threadId: string, message: MessageInput, { idempotencyKey, ...routing }: RoutingOptions & Idempotent = {}): Promise<SignalDecision> {
    return this.signalRoute(threadId, 'send-message', { message, ...routing }, idempotencyKey);
  }

  /**
   * Queues a user message for after the active run (or runs it now when idle) (`POST /queue-message`).
   * @example const { signalId } = await client.queueMessage('t1', 'and then summarise');
   */
  queueMessage(threadId: string, message: MessageInput, { idempotencyKey, ...routing }: RoutingOptions & Idempotent = {}): Promise<SignalDecision> {
    return this.signalRoute(threadId, 'queue-message', { message, ...routing }, idempotencyKey);
  }

  /**
   * Sends a raw Mastra signal (`POST /signals`).
   * @example await client.signal('t1', { type: 'reactive', contents: 'The user scrolled to pricing', tagName: 'page_event' });
   */
  signal(threadId: string, signal: SignalInput, { idempotencyKey }: Idempotent = {}): Promise<SignalDecision> {
    return this.signalRoute(threadId, 'signals', { ...signal }, idempotencyKey);
  }

  /**
   * Sends a state signal; an unchanged `cacheKey` answers `{ skipped: true }` (`POST /state`).
   * @example await client.state('t1', { id: 'cart', cacheKey: 'v2', contents: 'Cart: 2 items' });
   */
  state(threadId: string, state: StateSignalInput): Promise<SignalDecision | StateSkipped> {
    return this.signalRoute(threadId, 'state', { ...state });
  }

  /**
   * Pushes a notification; Mastra decides whether it wakes the agent (`POST /notifications`).
   * @example await client.notify('t1', { source: 'ci', kind: 'build', summary: 'Build #7 failed', priority: 'high' });
   */
  notify(threadId: string, notification: NotificationInput, { idempotencyKey }: Idempotent = {}): Promise<NotificationAnswer> {
    return this.signalRoute(threadId, 'notifications', { ...notification }, idempotencyKey);
  }

  /**
   * The thread's notifications, optionally by status (`GET /notifications`).
   * @example const pending = await client.notifications('t1', { status: 'pending' });
   */
  notifications(threadId: string, options: { status?: NotificationStatus } = {}): Promise<NotificationRecord[]> {
    return this.request('GET', `${this.thread(threadId)}/notifications`, { query: { ...this.target(), ...options } });
  }

  // ── approvals, abort, queue ──────────────────────────────────────────

  /**
   * Approves a tool call that waits for approval; the run resumes on the thread stream (`POST /tool-approval`).
   * @example const [call] = await client.pendingApprovals('t1'); await client.approve('t1', call.toolCallId);
   */
  approve(threadId: string, toolCallId: string, { idempotencyKey, ...options }: { resumeData?: unknown } & Idempotent = {}): Promise<ToolApprovalAnswer> {
    return this.signalRoute(threadId, 'tool-approval', { toolCallId, approved: true, ...options }, idempotencyKey);
  }

  /**
   * Declines a tool call that waits for approval; the model hears the reason (`POST /tool-approval`).
   * @example await client.decline('t1', call.toolCallId, { reason: 'not that file' });
   */
  decline(threadId: string, toolCallId: string, { idempotencyKey, ...options }: { reason?: string } & Idempotent = {}): Promise<ToolApprovalAnswer> {
    return this.signalRoute(threadId, 'tool-approval', { toolCallId, approved: false, ...options }, idempotencyKey);
  }

  /**
   * Tool calls waiting for approval on the thread (`GET /pending-approvals`; survives a server restart).
   * @example const waiting = await client.pendingApprovals('t1');
   */
  pendingApprovals(threadId: string): Promise<PendingApproval[]> {
    return this.request('GET', `${this.thread(threadId)}/pending-approvals`, { query: this.target() });
  }

  /**
   * Aborts the thread's active run (`POST /abort`).
   * @example const { aborted } = await client.abort('t1');
   */
  abort(threadId: string): Promise<{ aborted: boolean }> {
    return this.signalRoute(threadId, 'abort', {});
  }

  /**
   * Cancels a queued message by its signal id (`DELETE /queue/:signalId`).
   * @example const { cancelled } = await client.cancelQueued('t1', queued.signalId);
   */
  cancelQueued(threadId: string, signalId: string): Promise<{ cancelled: string[] }> {
    return this.request('DELETE', `${this.thread(threadId)}/queue/${encodeURIComponent(signalId)}`, { query: this.target() });
  }

  // ── schedules ────────────────────────────────────────────────────────

  /**
   * Schedules a message into the thread on a cron; each fire is a run on the thread (`POST /threads/:threadId/schedules`).
   * @example const morning = await client.createSchedule('t1', { cron: '0 9 * * *', timezone: 'Europe/Oslo', prompt: 'Plan my day' });
   */
  createSchedule(threadId: string, schedule: ScheduleInput): Promise<Schedule> {
    return this.signalRoute(threadId, 'schedules', { ...schedule });
  }

  /**
   * The thread's schedules (`GET /threads/:threadId/schedules`).
   * @example const schedules = await client.threadSchedules('t1');
   */
  threadSchedules(threadId: string): Promise<Schedule[]> {
    return this.request('GET', `${this.thread(threadId)}/schedules`, { query: this.target() });
  }

  /**
   * The caller's schedules, newest first (`GET /schedules`).
   * @example const paused = await client.schedules({ status: 'paused' });
   */
  schedules(filter: ScheduleFilter = {}): Promise<Schedule[]> {
    return this.request('GET', '/schedules', { query: { ...this.caller(), ...filter } });
  }

  /**
   * One schedule (`GET /schedules/:scheduleId`).
   * @example const { nextFireAt } = await client.schedule(morning.id);
   */
  schedule(scheduleId: string): Promise<Schedule> {
    return this.request('GET', this.scheduleOf(scheduleId), { query: this.caller() });
  }

  /**
   * Changes a schedule (`PATCH /schedules/:scheduleId`).
   * @example await client.updateSchedule(morning.id, { cron: '30 8 * * 1-5' });
   */
  updateSchedule(scheduleId: string, changes: ScheduleChanges): Promise<Schedule> {
    return this.request('PATCH', this.scheduleOf(scheduleId), { body: { ...this.caller(), ...changes } });
  }

  /**
   * Pauses (`'pause'`) or resumes (`'resume'`) a schedule (`POST /schedules/:scheduleId/pause` · `/resume`).
   * @example await client.setSchedule(morning.id, 'pause');
   */
  setSchedule(scheduleId: string, action: 'pause' | 'resume'): Promise<Schedule> {
    return this.request('POST', `${this.scheduleOf(scheduleId)}/${action}`, { body: this.caller() });
  }

  /**
   * Fires a schedule once, now, whatever its status (`POST /schedules/:scheduleId/run`).
   * @example await client.runSchedule(morning.id);
   */
  runSchedule(scheduleId: string): Promise<ScheduleFired> {
    return this.request('POST', `${this.scheduleOf(scheduleId)}/run`, { body: this.caller() });
  }

  /**
   * A schedule's fires, newest first (`GET /schedules/:scheduleId/triggers`).
   * @example const [last] = await client.scheduleTriggers(morning.id, { limit: 1 });
   */
  scheduleTriggers(scheduleId: string, options: { limit?: number } = {}): Promise<ScheduleTrigger[]> {
    return this.request('GET', `${this.scheduleOf(scheduleId)}/triggers`, { query: { ...this.caller(), ...options } });
  }

  /**
   * Deletes a schedule (`DELETE /schedules/:scheduleId`).
   * @example await client.deleteSchedule(morning.id);
   */
  async deleteSchedule(scheduleId: string): Promise<void> {
    await this.request<undefined>('DELETE', this.scheduleOf(scheduleId), { query: this.caller() });
  }

  // ── agents ───────────────────────────────────────────────────────────

  /**
   * The agents the bridge serves (`GET /agents`).
   * @example const agents = await client.agents();
   */
  agents(): Promise<AgentInfo[]> {
    return this.request('GET', '/agents', { query: this.caller() });
  }

  /**
   * One agent, by id or registration key (`GET /agents/:agentId`); `404 AGENT_NOT_FOUND` rejects.
   * @example const { capabilities } = await client.agent('demo');
   */
  agent(agentId: string): Promise<AgentInfo> {
    return this.request('GET', `/agents/${encodeURIComponent(agentId)}`, { query: this.caller() });
  }

  // ── plumbing ─────────────────────────────────────────────────────────

  private thread(threadId: string): string {
    return `/threads/${encodeURIComponent(threadId)}`;
  }

  private scheduleOf(scheduleId: string): string {
    return `/schedules/${encodeURIComponent(scheduleId)}`;
  }

  private caller(): { resourceId?: string } {
    return this.resourceId !== undefined ? { resourceId: this.resourceId } : {};
  }

  private target(): { resourceId?: string; agentId?: string } {
    return { ...(this.resourceId !== undefined && { resourceId: this.resourceId }), ...(this.agentId !== undefined && { agentId: this.agentId }) };
  }

  private signalRoute<T>(threadId: string, route: string, body: Record<string, unknown>, idempotencyKey?: string): Promise<T> {
    return this.request('POST', `${this.thread(threadId)}/${route}`, {
      body: { ...this.target(), ...body },
      ...(idempotencyKey !== undefined && { headers: { 'Idempotency-Key': idempotencyKey } }),
    });
  }

  private async request<T>(
    method: string,
    path: string,
    options: { query?: Query; body?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ): Promise<T> {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(options.query ?? {})) if (value !== undefined) params.set(key, String(value));
    const qs = params.toString();
    const url = `${this.baseUrl}${path}${qs ? `?${qs}` : ''}`;
    const headers: Record<string, string> = { Accept: 'application/json', ...this.headers, ...options.headers };
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    const response = await this.fetchFn(url, { method, headers, ...(options.body !== undefined && { body: JSON.stringify(options.body) }) });
    if (!response.ok) throw await requestError(response, `${method} ${url}`);
    if (response.status === 204) return undefined as T;
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }
}
