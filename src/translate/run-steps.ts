import { EventType, type Event } from '@ag-ui/core';
import { MessageNumbering, type MessagePosition } from './ids.js';
import type { CutStep } from './retraction.js';

/**
 * The steps of one run, and the stored assistant message each writes into: `STEP_STARTED` /
 * `STEP_FINISHED`, the ids of the message parts (numbered as history numbers them), and whether
 * the client was shown something Mastra did not keep.
 *
 * @example
 * const steps = new RunSteps('run-1');
 * steps.start('msg-1', out); // STEP_STARTED step-1
 * steps.nextId('text');      // 'msg-1'
 * steps.finish(false, out);  // STEP_FINISHED step-1
 */
export class RunSteps {
  private numbering: MessageNumbering;
  /** A step started: the run writes an assistant message. */
  private wrote = false;
  private readonly open: string[] = [];
  private count = 0;
  /** The current step showed the client something (text, reasoning, a tool call). */
  private shown = false;
  /** The reasoning the current step showed, one text per reasoning message (only reasoning: a cut drops it). */
  private reasoning: string[] = [];
  /** A step the client saw was turned down or blocked by a processor: Mastra did not keep it. */
  private discardedStep = false;

  /** @param runId numbers the parts until a step names its stored message. */
  constructor(
    runId: string,
    private appendsTo?: MessagePosition,
  ) {
    this.numbering = MessageNumbering.start(runId);
  }

  /** Whether a step the client saw was dropped by Mastra (`RunTranslator.retracts`). */
  get discarded(): boolean {
    return this.discardedStep;
  }

  get cutStep(): CutStep | undefined {
    return this.reasoning.length > 0 ? { messageId: this.numbering.messageId, reasoning: [...this.reasoning] } : undefined;
  }

  position(): MessagePosition | undefined {
    return this.wrote ? this.numbering.position() : undefined;
  }

  /** The run starts with a message of its own (a signal echo): Mastra stores its answer as a new message. */
  startsOwnMessage(): void {
    this.appendsTo = undefined;
  }

  start(messageId: string | undefined, out: Event[]): void {
    if (messageId) this.enterMessage(messageId);
    this.shown = false;
    this.reasoning = [];
    const stepName = `step-${++this.count}`;
    this.open.push(stepName);
    out.push({ type: EventType.STEP_STARTED, stepName });
  }

  /** A step ends; one a processor turned down (`retried`) is run again, and Mastra keeps only the new attempt. */
  finish(retried: boolean, out: Event[]): void {
    if (retried) this.discardIfShown();
    const stepName = this.open.pop();
    if (stepName) out.push({ type: EventType.STEP_FINISHED, stepName });
  }

  /** A processor blocked the step: what it showed is not kept. */
  discardIfShown(): void {
    if (this.shown) this.discardedStep = true;
  }

  closeAll(out: Event[]): void {
    for (let stepName = this.open.pop(); stepName; stepName = this.open.pop()) out.push({ type: EventType.STEP_FINISHED, stepName });
  }

  nextId(kind: 'text' | 'reasoning'): string {
    this.shown = true;
    if (kind === 'reasoning') this.reasoning.push('');
    return this.numbering.next(kind);
  }

  /** Reasoning the step showed, kept for a cut (`cutStep`). */
  reasoned(delta: string): void {
    this.reasoning[this.reasoning.length - 1] += delta;
  }

  toolCallParent(): string {
    this.shown = true;
    return this.numbering.toolCallParent();
  }

  /**
   * A step writes into Mastra's stored message `messageId`; the first step of a run that Mastra
   * appends to an earlier message writes into that one, after what it holds.
   */
  private enterMessage(messageId: string): void {
    this.wrote = true;
    const target = this.appendsTo;
    this.appendsTo = undefined;
    if (target) this.numbering = MessageNumbering.resume(target);
    else if (messageId !== this.numbering.messageId) this.numbering = MessageNumbering.start(messageId);
  }
}
