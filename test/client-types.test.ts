import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { AgentInfo as ServerAgentInfo } from '../src/agents/agent-provider.js';
import type { ErrorBody as ServerErrorBody } from '../src/http/errors.js';
import type { PendingApproval as ServerPendingApproval, SignalDecision as ServerSignalDecision } from '../src/signals/signal-router.js';
import type { NotificationSchema, SendMessageSchema, SignalSchema, StateSignalSchema, ToolApprovalSchema } from '../src/signals/schemas.js';
import type { ThreadInfo as ServerThreadInfo } from '../src/threads/thread-store.js';
import type { ThreadMessage as ServerThreadMessage } from '../src/translate/history.js';
import type {
  AgentInfo,
  ErrorBody,
  MessageInput,
  NotificationInput,
  PendingApproval,
  RoutingOptions,
  SignalDecision,
  SignalInput,
  StateSignalInput,
  ThreadInfo,
  ThreadMessage,
} from '../src/client/types.js';

/**
 * The client declares its own wire types (it must not import server code). These compile-time
 * checks keep them equal to the server's zod schemas and answer types: `npm run typecheck` fails
 * when either side changes alone.
 */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Body<S extends z.ZodType> = Omit<z.input<S>, 'resourceId' | 'agentId'>;

const checks = {
  sendMessage: true as Same<{ message: MessageInput } & RoutingOptions, Body<typeof SendMessageSchema>>,
  signal: true as Same<SignalInput, Body<typeof SignalSchema>>,
  state: true as Same<StateSignalInput, Body<typeof StateSignalSchema>>,
  notification: true as Same<NotificationInput, Body<typeof NotificationSchema>>,
  toolApproval: true as Same<{ toolCallId: string; approved: boolean; reason?: string; resumeData?: unknown }, Body<typeof ToolApprovalSchema>>,
  signalDecision: true as Same<SignalDecision, ServerSignalDecision>,
  pendingApproval: true as Same<PendingApproval, ServerPendingApproval>,
  threadInfo: true as Same<ThreadInfo, ServerThreadInfo>,
  threadMessage: true as Same<ThreadMessage, ServerThreadMessage>,
  agentInfo: true as Same<AgentInfo, ServerAgentInfo>,
  errorBody: true as Same<ErrorBody, ServerErrorBody>,
} satisfies Record<string, true>;

describe('client wire types', () => {
  it('match the server schemas (checked by the type checker)', () => {
    expect(Object.values(checks).every(Boolean)).toBe(true);
  });
});
