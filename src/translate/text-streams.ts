import { EventType, type Event } from '@ag-ui/core';
import type { RunSteps } from './run-steps.js';

export type StreamKind = 'text' | 'reasoning';
const STREAM_KINDS: readonly StreamKind[] = ['text', 'reasoning'];

/** The events that open and close a text or a reasoning message (`delta` fills them): the only difference between the two. */
const STREAMS = {
  text: {
    start: (messageId: string): Event[] => [{ type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant' }],
    end: (messageId: string): Event[] => [{ type: EventType.TEXT_MESSAGE_END, messageId }],
  },
  reasoning: {
    start: (messageId: string): Event[] => [
      { type: EventType.REASONING_START, messageId },
      { type: EventType.REASONING_MESSAGE_START, messageId, role: 'reasoning' },
    ],
    end: (messageId: string): Event[] => [
      { type: EventType.REASONING_MESSAGE_END, messageId },
      { type: EventType.REASONING_END, messageId },
    ],
  },
} as const;

/**
 * The text and reasoning messages of one run: Mastra's parts (`text-start`, `text-delta`, …) by
 * their part id, shown as AG-UI messages whose ids the run's steps hand out.
 *
 * @example
 * const streams = new TextStreams(steps);
 * streams.delta('text', 'part-1', 'Hi', out); // TEXT_MESSAGE_START, TEXT_MESSAGE_CONTENT
 * streams.closeAll(out);                       // TEXT_MESSAGE_END
 */
export class TextStreams {
  /** Open messages: Mastra's part id → AG-UI message id, per kind. */
  private readonly open: Record<StreamKind, Map<string, string>> = { text: new Map(), reasoning: new Map() };

  constructor(private readonly steps: RunSteps) {}

  start(kind: StreamKind, partId: string, out: Event[]): string {
    // Numbered as history numbers the stored parts: text written after a tool call starts a new
    // segment (the reducer would otherwise fold the answer into the message that made the call).
    const messageId = this.steps.nextId(kind);
    this.open[kind].set(partId, messageId);
    out.push(...STREAMS[kind].start(messageId));
    return messageId;
  }

  /** A delta with no open message opens one first; empty deltas are dropped. */
  delta(kind: StreamKind, partId: string, delta: string, out: Event[]): void {
    const messageId = this.open[kind].get(partId) ?? this.start(kind, partId, out);
    if (!delta) return;
    if (kind === 'text') return void out.push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta });
    this.steps.reasoned(delta);
    out.push({ type: EventType.REASONING_MESSAGE_CONTENT, messageId, delta });
  }

  end(kind: StreamKind, partId: string, out: Event[]): void {
    const messageId = this.open[kind].get(partId);
    if (messageId === undefined) return;
    this.open[kind].delete(partId);
    out.push(...STREAMS[kind].end(messageId));
  }

  closeAll(out: Event[]): void {
    for (const kind of STREAM_KINDS) {
      for (const messageId of this.open[kind].values()) out.push(...STREAMS[kind].end(messageId));
      this.open[kind].clear();
    }
  }
}
