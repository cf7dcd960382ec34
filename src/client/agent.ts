import {
  HttpAgent,
  type AgentCapabilities,
  type AgentStateMutation,
  type AgentSubscriber,
  type BaseEvent,
  type HttpAgentConfig,
  type RunAgentInput,
  type RunAgentResult,
} from '@ag-ui/client';
import { map, type Observable } from 'rxjs';
import { BridgeClient } from './client.js';
import { followThreadEvents, type ConnectionStatus, type ReconnectOptions } from './follow.js';
import type { FetchFn } from './types.js';

/** Parameters of `runAgent` / `connectAgent` (`RunAgentParameters` plus an `abortController`). */
export type BridgeRunParameters = NonNullable<Parameters<HttpAgent['runAgent']>[0]>;

/** Options of a `BridgeAgent`. */
export interface BridgeAgentConfig extends Omit<HttpAgentConfig, 'url' | 'fetch' | 'agentId'> {
  /** The bridge's base URL, prefix included (`http://127.0.0.1:4111/agui`, or `/agui` in a page). */
  baseUrl: string;
  /** The thread to run on and follow (default: a new random id). */
  threadId?: string;
  /** Who the caller is (`forwardedProps.resourceId` of runs, `resourceId` of the thread stream). */
  resourceId?: string;
  /** The bridge agent to run (`forwardedProps.agentId`); default: the bridge's default agent. Also this AG-UI agent's `agentId`. */
  agentId?: string;
  /** Extra headers on every request (e.g. `Authorization`). */
  headers?: Record<string, string>;
  /** A `fetch` to use instead of the global one. */
  fetch?: FetchFn;
  /** How `connectAgent()` follows the thread. */
  connect?: {
    /** Start with a `MESSAGES_SNAPSHOT` of the thread's history when there is no id to resume from (default `true`). */
    snapshot?: boolean;
    /** Reconnect policy after a dropped connection, or `false` to end `connectAgent()` with the error. */
    reconnect?: ReconnectOptions | false;
    /** Send the resume id as the `Last-Event-ID` header (default) or the `lastEventId` query parameter. */
    lastEventIdIn?: 'header' | 'query';
  };
  /** Called when the followed stream connects, drops, reconnects or stops. */
  onConnectionChange?: (status: ConnectionStatus) => void;
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');

/**
 * An AG-UI `HttpAgent` for the bridge. `runAgent()` posts one run to `${baseUrl}/run` (with
 * `resourceId` and `agentId` in `forwardedProps`); `connectAgent()` follows the thread's event
 * stream (`${baseUrl}/threads/:threadId/events`) across runs, whoever started them (a message sent
 * with `BridgeClient.sendMessage`, a notification, an approval), so `agent.messages` follows the
 * thread. A dropped connection is resumed with `Last-Event-ID`: no event lost or seen twice.
 * `connectAgent()` resolves when the agent stops following: `agent.disconnect()`,
 * `agent.detachActiveRun()` or `abortRun()`.
 *
 * @example
 * const agent = new BridgeAgent({ baseUrl: 'http://127.0.0.1:4111/agui', threadId: 't1', resourceId: 'demo-user' });
 * const following = agent.connectAgent({}, {
 *   onTextMessageContentEvent: ({ event }) => process.stdout.write(event.delta),
 *   onMessagesChanged: ({ messages }) => render(messages),
 * });
 * await new BridgeClient({ baseUrl: agent.baseUrl, resourceId: 'demo-user' }).sendMessage('t1', 'hello');
 * // …later
 * agent.disconnect();
 * await following;
 */
export class BridgeAgent extends HttpAgent {
  /** The bridge's base URL (no trailing slash). */
  readonly baseUrl: string;
  /** Who the caller is; sent with every run and stream request. */
  resourceId: string | undefined;
  /** The bridge agent to run (`forwardedProps.agentId`), if not the default. */
  bridgeAgentId: string | undefined;
  /**
   * The id of the last thread event folded into `messages`: where `connectAgent()` resumes, and the
   * id to keep with a saved copy of `messages`.
   */
  lastEventId: string | undefined;
  /** The state of the followed stream (`closed` when not following). */
  connection: ConnectionStatus = { state: 'closed', attempt: 0 };

  private readonly connectOptions: NonNullable<BridgeAgentConfig['connect']>;
  private readonly onConnectionChange: BridgeAgentConfig['onConnectionChange'];
  private connectController: AbortController | undefined;
  /** Ids of the frames `connect()` emitted that the pipeline has not applied yet, oldest first. */
  private unappliedIds: Array<string | undefined> = [];

  constructor(config: BridgeAgentConfig) {
    const { baseUrl, resourceId, agentId, connect, onConnectionChange, ...rest } = config;
    super({ ...rest, url: `${trimSlash(baseUrl)}/run`, ...(agentId !== undefined && { agentId }) });
    this.baseUrl = trimSlash(baseUrl);
    this.resourceId = resourceId;
    this.bridgeAgentId = agentId;
    this.lastEventId = undefined;
    this.connectOptions = connect ?? {};
    this.onConnectionChange = onConnectionChange;
  }

  /**
   * What the bridge does for this agent (`GET /agents/:agentId`, or the default agent's entry of
   * `GET /agents` when the agent is not named): AG-UI's `AgentCapabilities`.
   * @example if ((await agent.getCapabilities()).transport?.resumable) await agent.connectAgent();
   */
  override async getCapabilities(): Promise<AgentCapabilities> {
    const client = new BridgeClient({ baseUrl: this.baseUrl, resourceId: this.resourceId, headers: this.headers, fetch: this.fetch });
    if (this.bridgeAgentId !== undefined) return (await client.agent(this.bridgeAgentId)).capabilities;
    const agent = (await client.agents()).find((a) => a.default);
    if (!agent) throw new Error(`The bridge at ${this.baseUrl} serves no agent`);
    return agent.capabilities;
  }

  /** One run on `POST ${baseUrl}/run`; `resourceId`/`agentId` are added to `forwardedProps` unless the run sets them. */
  override run(input: RunAgentInput): Observable<BaseEvent> {
    const forwardedProps: Record<string, unknown> = {
      ...(this.resourceId !== undefined && { resourceId: this.resourceId }),
      ...(this.bridgeAgentId !== undefined && { agentId: this.bridgeAgentId }),
      ...(input.forwardedProps as Record<string, unknown> | undefined),
    };
    return super.run({ ...input, forwardedProps });
  }

  /**
   * Follows the thread until `disconnect()`, `detachActiveRun()`, `abortRun()` or
   * `parameters.abortController.abort()`. Rejects with a `BridgeRequestError` when the stream is
   * refused (e.g. `404 THREAD_NOT_FOUND`, the thread is another resource's).
   */
  override connectAgent(parameters?: BridgeRunParameters, subscriber?: AgentSubscriber): Promise<RunAgentResult> {
    this.connectController = parameters?.abortController ?? new AbortController();
    const { abortController: _ignored, ...rest } = parameters ?? {};
    // Frames the pipeline dropped when it stopped must not be matched to the events of a later run.
    return super.connectAgent(rest, subscriber).finally(() => (this.unappliedIds = []));
  }

  /** Stops following the thread: `connectAgent()` resolves. */
  disconnect(): void {
    this.connectController?.abort();
  }

  /** Aborts the running `/run` request and stops following the thread. */
  override abortRun(): void {
    super.abortRun();
    this.disconnect();
  }

  /** The thread's event stream as AG-UI events: what `connectAgent()` folds into `messages`. */
  protected override connect(input: RunAgentInput): Observable<BaseEvent> {
    this.unappliedIds = [];
    const query = new URLSearchParams();
    if (this.resourceId !== undefined) query.set('resourceId', this.resourceId);
    if (this.bridgeAgentId !== undefined) query.set('agentId', this.bridgeAgentId);
    const qs = query.toString();
    const url = `${this.baseUrl}/threads/${encodeURIComponent(input.threadId)}/events${qs ? `?${qs}` : ''}`;
    return followThreadEvents({
      url,
      fetch: this.fetch,
      headers: this.headers,
      lastEventId: this.lastEventId,
      snapshot: this.connectOptions.snapshot ?? true,
      lastEventIdIn: this.connectOptions.lastEventIdIn,
      reconnect: this.connectOptions.reconnect,
      signal: this.connectController?.signal,
      onStatus: (status) => {
        this.connection = status;
        this.onConnectionChange?.(status);
      },
    }).pipe(
      map((frame) => {
        this.unappliedIds.push(frame.id);
        return frame.event;
      }),
    );
  }

  /**
   * Moves `lastEventId` when an event is applied rather than when it arrives: the pipeline applies
   * events one at a time, asynchronously, so an id taken on arrival can be ahead of `messages`, and
   * a copy saved with it would miss the events in between. The pipeline passes the bridge's events
   * one for one (it only adds or drops `*_CHUNK` and unknown types, which the bridge never sends).
   */
  protected override apply(input: RunAgentInput, events$: Observable<BaseEvent>, subscribers: AgentSubscriber[]): Observable<AgentStateMutation> {
    const track: AgentSubscriber = {
      onEvent: () => {
        const id = this.unappliedIds.shift();
        if (id !== undefined) this.lastEventId = id;
      },
    };
    return super.apply(input, events$, [track, ...subscribers]);
  }

  /** A copy on the same thread, resuming from the same event id. */
  override clone(): BridgeAgent {
    const copy = super.clone() as BridgeAgent;
    const fields = copy as unknown as Record<string, unknown>;
    fields.baseUrl = this.baseUrl;
    fields.connectOptions = { ...this.connectOptions };
    fields.onConnectionChange = this.onConnectionChange;
    fields.unappliedIds = [];
    copy.resourceId = this.resourceId;
    copy.bridgeAgentId = this.bridgeAgentId;
    copy.lastEventId = this.lastEventId;
    copy.connection = { state: 'closed', attempt: 0 };
    return copy;
  }
}
