import { createHash } from 'node:crypto';

/**
 * The AG-UI ids the bridge derives from Mastra's: one rule each, shared by the live translators,
 * history (`toAguiMessages`) and resume, so that a message keeps its id from the live stream to a
 * reload.
 *
 * @example
 * assistantSegmentId('m1', 0); // 'm1'
 * assistantSegmentId('m1', 2); // 'm1-2'
 * toolResultMessageId('call-1'); // 'tool-result-call-1'
 * interruptId('run-1', 'call-1'); // 'run-1::call-1'
 * mastraRunIdOf('t1', 'run-1'); // 'run-1@<12 characters that name t1>'
 */

/** Prefix of the message id of a tool result: `tool-result-<toolCallId>`, as the contract fixes it. */
export const TOOL_RESULT_PREFIX = 'tool-result-';

/** Separates the Mastra run id and the tool call id inside an interrupt id. */
export const INTERRUPT_ID_SEPARATOR = '::';

/**
 * Mastra stores a whole response (a tool call, then the text written after its result) as one
 * assistant message; AG-UI shows one assistant message per segment, split where text or reasoning
 * follows a tool call. The first segment keeps the stored id, later ones are `<id>-<n>`.
 */
export function assistantSegmentId(messageId: string, segment: number): string {
  return segment === 0 ? messageId : `${messageId}-${segment}`;
}

/** The reasoning message that precedes a segment's text. */
export function reasoningMessageId(segmentId: string): string {
  return `${segmentId}-reasoning`;
}

export function toolResultMessageId(toolCallId: string): string {
  return `${TOOL_RESULT_PREFIX}${toolCallId}`;
}

export function interruptId(runId: string, toolCallId: string): string {
  return `${runId}${INTERRUPT_ID_SEPARATOR}${toolCallId}`;
}

/** Separates a `/run`'s run id from its thread's tag in the Mastra run id (`mastraRunIdOf`). */
const RUN_SCOPE_SEPARATOR = '@';

/** Twelve base64url characters of the thread id's SHA-256: short enough to keep interrupt ids short, long enough never to meet. */
function threadTag(threadId: string): string {
  return createHash('sha256').update(threadId).digest('base64url').slice(0, 12);
}

/**
 * The Mastra run id of a `/run`: the client's run id, scoped to its thread. Run ids are the
 * client's choice (`r1` in every quick start), and Mastra keys by run id alone what a run
 * registers, what it suspends, and what the bridge keeps of its end; scoped, a run id another
 * thread uses reaches nothing of that thread's run. `clientRunIdOf` turns it back, so clients and
 * followers see the run id the client sent. Threads belong to one resource, so neither does a run.
 */
export function mastraRunIdOf(threadId: string, runId: string): string {
  return `${runId}${RUN_SCOPE_SEPARATOR}${threadTag(threadId)}`;
}

/** The run id clients know a Mastra run of thread `threadId` by: the `/run`'s own (`mastraRunIdOf`), or Mastra's, for a run a signal woke. */
export function clientRunIdOf(threadId: string, mastraRunId: string): string {
  const suffix = `${RUN_SCOPE_SEPARATOR}${threadTag(threadId)}`;
  return mastraRunId.endsWith(suffix) ? mastraRunId.slice(0, -suffix.length) : mastraRunId;
}

/** A suspended workflow step's interrupt id: the Mastra run's id and the step's path, dotted (`run-1::outer.review`). */
export function workflowInterruptId(mastraRunId: string, stepPath: readonly string[]): string {
  return interruptId(mastraRunId, stepPath.join('.'));
}

/** The Mastra run and the step path a workflow interrupt id names; `undefined` when it is not one. */
export function parseWorkflowInterruptId(id: string): { mastraRunId: string; stepPath: string[] } | undefined {
  const at = id.indexOf(INTERRUPT_ID_SEPARATOR);
  if (at <= 0) return undefined;
  const path = id.slice(at + INTERRUPT_ID_SEPARATOR.length);
  return path ? { mastraRunId: id.slice(0, at), stepPath: path.split('.') } : undefined;
}

/** Where the numbering of a stored assistant message stands: which segment, and what it holds so far. */
export interface MessagePosition {
  messageId: string;
  segment: number;
  /** The segment holds tool calls: the next text or reasoning starts a new segment. */
  hasToolCalls: boolean;
  texts: number;
  reasonings: number;
}

/**
 * Hands out the AG-UI ids of one stored assistant message's parts, in the order the model wrote
 * them: the live translators and history both number through it, so both give the same ids.
 * Within a segment the first text is the segment id (it also carries the segment's tool calls),
 * the first reasoning `<segment>-reasoning`, and repeats `<segment>-text-<n>` / `-reasoning-<n>`.
 *
 * @example
 * const n = MessageNumbering.start('m1');
 * n.toolCallParent(); // 'm1'
 * n.next('text');     // 'm1-1': text after a tool call starts a new segment
 */
export class MessageNumbering {
  private constructor(private at: MessagePosition) {}

  static start(messageId: string): MessageNumbering {
    return new MessageNumbering({ messageId, segment: 0, hasToolCalls: false, texts: 0, reasonings: 0 });
  }

  /** Goes on from a position (a run that Mastra appends to a stored message). */
  static resume(position: MessagePosition): MessageNumbering {
    return new MessageNumbering({ ...position });
  }

  get messageId(): string {
    return this.at.messageId;
  }

  get segment(): number {
    return this.at.segment;
  }

  position(): MessagePosition {
    return { ...this.at };
  }

  next(kind: 'text' | 'reasoning'): string {
    if (this.at.hasToolCalls) this.at = { ...this.at, segment: this.at.segment + 1, hasToolCalls: false, texts: 0, reasonings: 0 };
    const n = kind === 'text' ? ++this.at.texts : ++this.at.reasonings;
    const segmentId = assistantSegmentId(this.at.messageId, this.at.segment);
    if (n > 1) return `${segmentId}-${kind}-${n}`;
    return kind === 'text' ? segmentId : reasoningMessageId(segmentId);
  }

  /** The message a tool call belongs to (the segment's first text, made if absent). */
  toolCallParent(): string {
    this.at.hasToolCalls = true;
    return assistantSegmentId(this.at.messageId, this.at.segment);
  }
}

/** The activity message that follows a background task. */
export function backgroundTaskId(taskId: string): string {
  return `background-task-${taskId}`;
}

/**
 * A delegation to a sub-agent (its tool call `agent-<name>`): the `subagentRunId` of its events,
 * and the ids of the sub-agent's messages (its answer, the message carrying its tool calls, its
 * n-th reasoning), all made from the call's id, so that history names them as the live stream did.
 *
 * @example
 * subagentRunId('call-1');          // 'subagent-call-1'
 * subagentReasoningId('call-1', 2); // 'subagent-call-1-reasoning-2'
 */
export function subagentRunId(toolCallId: string): string {
  return `subagent-${toolCallId}`;
}

export function subagentTextId(toolCallId: string): string {
  return `subagent-${toolCallId}-text`;
}

export function subagentCallsId(toolCallId: string): string {
  return `subagent-${toolCallId}-calls`;
}

export function subagentReasoningId(toolCallId: string, n: number): string {
  return n === 1 ? `subagent-${toolCallId}-reasoning` : `subagent-${toolCallId}-reasoning-${n}`;
}
