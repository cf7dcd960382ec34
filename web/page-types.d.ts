// The shapes the page's modules pass between them, for their JSDoc (`npx tsc -p web`, strict).
// Types only: the page is plain ES modules and never loads this file (it is not shipped).
import type { Interrupt, Message } from '@ag-ui/core';
import type { AgentInfo, BridgeAgent, BridgeClient, ThreadInfo } from './client.js';

export type { Interrupt, Message };

/** How a status line or a notice reads: neutral, a success, a failure. */
export type Tone = 'info' | 'ok' | 'error';

/** One step of a workflow run's timeline. */
export interface Step {
  name: string;
  status: string;
}

/** A line the page adds to the transcript (`text`), or a workflow run's step timeline (`steps`), after message `after`. */
export interface Notice {
  id: string;
  after?: string;
  tone?: Tone;
  text?: string;
  steps?: Step[];
}

/** A message sent into a busy thread or queued, shown until a run reads it. */
export interface PendingMessage {
  id: string;
  text: string;
  state: string;
}

/** A call waiting for an approval, or answered here, until its result arrives. */
export interface Approval {
  toolCallId: string;
  toolName?: string;
  args?: unknown;
  message?: string;
  state: 'waiting' | 'approved' | 'declined';
  /** Its result arrived: the card goes. */
  resulted?: boolean;
}

/** The part of JSON Schema a suspended step's `responseSchema` is read by. */
export interface JsonSchema {
  type?: string;
  title?: string;
  enum?: unknown[];
  required?: string[];
  properties?: Record<string, JsonSchema>;
}

/** A workflow step suspended for a person, by its interrupt. */
export interface Resume {
  id: string;
  toolCallId?: string;
  message?: string;
  responseSchema?: JsonSchema;
  metadata?: { stepId?: string; suspendPayload?: Record<string, unknown>; [key: string]: unknown };
  /** Why the last answer was refused. */
  error?: string;
}

/** A run's step timeline, shown as a notice. */
export interface Timeline extends Notice {
  steps: Step[];
}

/** How a run that did not finish ended, as the bridge's run-end message (or the page) says it. */
export interface RunEnd {
  outcome?: string;
  code?: string;
  message?: string;
}

/** What the page holds (page.js's `app`). */
export interface App {
  resourceId: string;
  token: string | undefined;
  client: BridgeClient;
  target: Pick<AgentInfo, 'id' | 'kind'> | undefined;
  threadId: string | undefined;
  thread: ThreadInfo | undefined;
  agent: BridgeAgent | undefined;
  notices: Notice[];
  runEndShown: boolean;
  streaming: Set<string>;
  pending: PendingMessage[];
  approvals: Map<string, Approval>;
  resumes: Map<string, Resume>;
  runId: string | undefined;
  answeredCard: boolean;
  timeline: Timeline | undefined;
  running: boolean;
  states: string[];
  log: Array<[number | undefined, string]>;
}

/** What the transcript shows, read when it renders. */
export interface View {
  messages: Message[];
  notices: Notice[];
  pending?: PendingMessage[];
  streaming: Set<string>;
  running: boolean;
  /** `waiting`, `approved` or `declined` by tool call id. */
  approvals: Map<string, string>;
}

/** What every entry of the transcript may carry, whatever its kind. */
interface ItemBase {
  id: string;
  /** The sub-agent whose work it is. */
  subagent?: string;
  streaming?: boolean;
  /** A message not yet read by a run: `sent` or `queued`. */
  pending?: string;
  /** The message's attributes (a signal's, a user message's). */
  attributes?: Record<string, unknown>;
  status?: string;
  activityType?: string;
}

/** One entry of the transcript: a message's text, one of its tool calls, an activity, a notice, a timeline. */
export type Item = ItemBase &
  (
    | { kind: 'user' | 'assistant' | 'reasoning'; text: string }
    | { kind: 'tool'; name: string; args: string; result?: unknown; status: string }
    | { kind: 'activity'; activityType: string; content: Record<string, any> }
    | { kind: 'notice'; tone?: Tone; text?: string }
    | { kind: 'steps'; steps: Step[] }
  );
