import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type { AgentInfo as ServerAgentInfo } from '../src/agents/agent-provider.js';
import type { ErrorBody as ServerErrorBody } from '../src/http/errors.js';
import type { SignalDecision as ServerSignalDecision } from '../src/mastra/index.js';
import type { PendingApproval as ServerPendingApproval } from '../src/signals/thread-approvals.js';
import type { NotificationSchema, SendMessageSchema, SignalSchema, StateSignalSchema, ToolApprovalSchema } from '../src/signals/schemas.js';
import type { ThreadInfo as ServerThreadInfo } from '../src/threads/thread-store.js';
import type { ThreadMessage as ServerThreadMessage } from '../src/translate/thread-message.js';
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

// The client declares its own wire types (it must not import server code); this file keeps them
// equal to the server's zod schemas and answer types. It is a type-level test: nothing here runs.
// `npm test` type-checks it (vitest.config.ts: `typecheck`, files `*.test-d.ts`) and reports each
// `it` as a test that fails on a type error; `npm run typecheck` checks it as well.

/** A route's body as the client sends it: `resourceId` and `agentId` are the client's own options. */
type Body<S extends z.ZodType> = Omit<z.input<S>, 'resourceId' | 'agentId'>;
/** One object type for an intersection (`toEqualTypeOf` tells `A & B` from its flat equal). */
type Flat<T> = { [K in keyof T]: T[K] };

describe('client request bodies equal the server schemas (z.input, without resourceId/agentId)', () => {
  it('send-message and queue-message', () => {
    expectTypeOf<Flat<{ message: MessageInput } & RoutingOptions>>().toEqualTypeOf<Body<typeof SendMessageSchema>>();
  });
  it('signals', () => {
    expectTypeOf<SignalInput>().toEqualTypeOf<Body<typeof SignalSchema>>();
  });
  it('state', () => {
    expectTypeOf<StateSignalInput>().toEqualTypeOf<Body<typeof StateSignalSchema>>();
  });
  it('notifications', () => {
    expectTypeOf<NotificationInput>().toEqualTypeOf<Body<typeof NotificationSchema>>();
  });
  it('tool-approval', () => {
    expectTypeOf<{ toolCallId: string; approved: boolean; reason?: string; resumeData?: unknown }>().toEqualTypeOf<Body<typeof ToolApprovalSchema>>();
  });
});

describe('client answer types equal the server answer types', () => {
  it('SignalDecision', () => {
    expectTypeOf<SignalDecision>().toEqualTypeOf<ServerSignalDecision>();
  });
  it('PendingApproval', () => {
    expectTypeOf<PendingApproval>().toEqualTypeOf<ServerPendingApproval>();
  });
  it('ThreadInfo', () => {
    expectTypeOf<ThreadInfo>().toEqualTypeOf<ServerThreadInfo>();
  });
  it('ThreadMessage', () => {
    expectTypeOf<ThreadMessage>().toEqualTypeOf<ServerThreadMessage>();
  });
  it('AgentInfo', () => {
    expectTypeOf<AgentInfo>().toEqualTypeOf<ServerAgentInfo>();
  });
  it('ErrorBody', () => {
    expectTypeOf<ErrorBody>().toEqualTypeOf<ServerErrorBody>();
  });
});
