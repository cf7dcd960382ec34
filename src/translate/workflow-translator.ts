import { EventType, type Event, type Interrupt, type RunStartedEvent } from '@ag-ui/core';
import { workflowInterruptId } from './ids.js';
import { errorMessage, textOr } from '../text.js';
import type { WorkflowResult } from '../mastra/index.js';

export type { WorkflowResult };

/** What the translator knows of a suspended step (the service reads it off the workflow). */
export interface SuspendedStepFacts {
  responseSchema?: Record<string, unknown>;
  description?: string;
}

export interface WorkflowTranslatorOptions {
  threadId: string;
  runId: string;
  workflowId: string;
  /** The Mastra run being streamed (a resumed run keeps the id it started with). */
  mastraRunId: string;
  /**
   * Prefix of the run's assistant message ids (`<base>-text-<n>`, `<base>-answer`), minted per run:
   * never the client's run id, which may recur on another thread (messages are stored by id).
   */
  messageIdBase: string;
  /** What `RUN_STARTED.input` says: the run's input, as the client sent it. */
  input?: RunStartedEvent['input'];
  /** What the run's suspended steps expect, by path. */
  stepFacts(stepPath: readonly string[]): SuspendedStepFacts;
}

/** A text message the run streamed, as it is to be stored. */
export interface StreamedText {
  id: string;
  text: string;
}

type Chunk = { type?: unknown; payload?: unknown };
type StepPayload = { id?: unknown; stepName?: unknown; output?: unknown };
type Output = { type?: unknown; from?: unknown; payload?: { id?: unknown; text?: unknown }; text?: unknown };

/**
 * Translates one Mastra workflow run (its `fullStream` chunks, then its result) into AG-UI events,
 * one fresh translator per run, with no I/O: `STEP_STARTED` / `STEP_FINISHED` per step (nested
 * steps by their dotted path, none left open), the text a step streams (an agent step, or
 * `writer.write({ type: 'text-delta', … })`) as `TEXT_MESSAGE_*`, other data a step writes as
 * `CUSTOM`, and the end from the run's result: the answer and `RUN_FINISHED { result }`, an
 * interrupt per suspended step, `RUN_ERROR WORKFLOW_FAILED`, or a cancelled outcome.
 */
export class WorkflowTranslator {
  private readonly openSteps: string[] = [];
  /** The open text message of each step (by step path and the stream's own text id). */
  private readonly openTexts = new Map<string, StreamedText & { step: string }>();
  private readonly streamed: StreamedText[] = [];
  private texts = 0;
  private ended = false;

  constructor(private readonly options: WorkflowTranslatorOptions) {}

  /** The texts the run streamed so far, the answer last once the run has one: what history stores. */
  get messages(): readonly StreamedText[] {
    return this.streamed;
  }

  start(): Event[] {
    const { threadId, runId, input } = this.options;
    return [{ type: EventType.RUN_STARTED, threadId, runId, ...(input && { input }) }];
  }

  chunk(raw: unknown): Event[] {
    if (this.ended) return [];
    const chunk = (raw ?? {}) as Chunk;
    const payload = (chunk.payload ?? {}) as StepPayload;
    const out: Event[] = [];
    switch (chunk.type) {
      case 'workflow-step-start':
        this.stepStarted(String(payload.id ?? payload.stepName), out);
        break;
      // A `sleep` step waits without starting: its wait is its step (`sleep_<uuid>`), ended by its result.
      case 'workflow-step-waiting': {
        const step = String(payload.id ?? payload.stepName);
        if (!this.openSteps.includes(step)) this.stepStarted(step, out);
        break;
      }
      case 'workflow-step-result':
      case 'workflow-step-suspended':
        this.stepEnded(String(payload.id ?? payload.stepName), out);
        break;
      case 'workflow-step-output':
        this.stepOutput(textOr(payload.stepName, ''), payload.output ?? {}, out);
        break;
      case 'workflow-step-progress':
        out.push({ type: EventType.CUSTOM, name: 'workflow-step-progress', value: chunk.payload });
        break;
      // `workflow-start`, `-finish`, `-paused`, …: the result (`end`) says what they do, and more.
    }
    return out;
  }

  end(result: WorkflowResult): Event[] {
    if (this.ended) return [];
    const out = this.closeAll();
    switch (result.status) {
      case 'success':
        this.answer(result.result, out);
        return this.finish(out, { result: result.result });
      case 'suspended':
        return this.finish(out, { outcome: { type: 'interrupt', interrupts: this.interrupts(result) } });
      case 'canceled':
        return this.finish(out, { outcome: { type: 'cancelled' } });
      default:
        return this.failed(result.error ?? `The workflow ended ${result.status}`, out);
    }
  }

  /** The run was cut (an abort, the client left): what it opened is closed, and it ends cancelled. */
  cancelled(): Event[] {
    if (this.ended) return [];
    return this.finish(this.closeAll(), { outcome: { type: 'cancelled' } });
  }

  /** The run broke outside the workflow's own steps: `RUN_ERROR` with `code`. */
  broke(error: unknown, code: string): Event[] {
    if (this.ended) return [];
    return this.failed(error, this.closeAll(), code);
  }

  private failed(error: unknown, out: Event[], code = 'WORKFLOW_FAILED'): Event[] {
    this.ended = true;
    out.push({ type: EventType.RUN_ERROR, code, message: errorMessage(error) });
    return out;
  }

  private finish(out: Event[], end: { result?: unknown; outcome?: NonNullable<Extract<Event, { type: EventType.RUN_FINISHED }>['outcome']> }): Event[] {
    this.ended = true;
    const { threadId, runId } = this.options;
    out.push({
      type: EventType.RUN_FINISHED,
      threadId,
      runId,
      ...(end.result !== undefined && { result: end.result }),
      ...(end.outcome && { outcome: end.outcome }),
    });
    return out;
  }

  private stepStarted(step: string, out: Event[]): void {
    this.openSteps.push(step);
    out.push({ type: EventType.STEP_STARTED, stepName: step });
  }

  private stepEnded(step: string, out: Event[]): void {
    this.closeTexts(out, step);
    const at = this.openSteps.lastIndexOf(step);
    if (at < 0) return;
    // Steps nested in this one (a nested workflow's) end with it.
    for (const inner of this.openSteps.splice(at).reverse()) out.push({ type: EventType.STEP_FINISHED, stepName: inner });
  }

  private stepOutput(step: string, output: Output, out: Event[]): void {
    const kind = output.type;
    if (kind === 'text-start' || kind === 'text-delta' || kind === 'text-end') {
      const key = `${step}\0${textOr(output.payload?.id, '')}`;
      if (kind === 'text-end') return this.closeText(key, out);
      const text = this.openTexts.get(key) ?? this.openText(key, step, out);
      const delta = output.payload?.text ?? output.text;
      if (kind === 'text-delta' && typeof delta === 'string' && delta.length > 0) {
        text.text += delta;
        out.push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: text.id, delta });
      }
      return;
    }
    // An agent step's other chunks (its steps, tool calls, finish) are the agent's own workings.
    if (output.from === 'AGENT') return;
    out.push({ type: EventType.CUSTOM, name: typeof kind === 'string' ? kind : 'workflow-step-output', value: output });
  }

  private openText(key: string, step: string, out: Event[]): StreamedText & { step: string } {
    const text = { id: this.nextMessageId(), text: '', step };
    this.openTexts.set(key, text);
    out.push({ type: EventType.TEXT_MESSAGE_START, messageId: text.id, role: 'assistant' });
    return text;
  }

  private closeText(key: string, out: Event[]): void {
    const text = this.openTexts.get(key);
    if (!text) return;
    this.openTexts.delete(key);
    out.push({ type: EventType.TEXT_MESSAGE_END, messageId: text.id });
    if (text.text.length > 0) this.streamed.push({ id: text.id, text: text.text });
  }

  /** Closes the open texts (of one step, or all). A nested step writes under its own id, not its path. */
  private closeTexts(out: Event[], step?: string): void {
    const own = step?.split('.').at(-1);
    for (const [key, text] of [...this.openTexts]) if (step === undefined || text.step === step || text.step === own) this.closeText(key, out);
  }

  private closeAll(): Event[] {
    const out: Event[] = [];
    this.closeTexts(out);
    for (let step = this.openSteps.pop(); step !== undefined; step = this.openSteps.pop()) out.push({ type: EventType.STEP_FINISHED, stepName: step });
    return out;
  }

  private nextMessageId(): string {
    return `${this.options.messageIdBase}-text-${++this.texts}`;
  }

  private answer(result: unknown, out: Event[]): void {
    const text = answerText(result);
    if (text.length === 0) return;
    const messageId = `${this.options.messageIdBase}-answer`;
    out.push(
      { type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant' },
      { type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta: text },
      { type: EventType.TEXT_MESSAGE_END, messageId },
    );
    this.streamed.push({ id: messageId, text });
  }

  private interrupts(result: WorkflowResult): [Interrupt, ...Interrupt[]] {
    const paths = result.suspended?.length ? result.suspended : [[]];
    const steps = paths.map((path) => ({ path, payload: result.suspendPayload?.[path[0] ?? ''] }));
    return workflowInterrupts(this.options, steps) as [Interrupt, ...Interrupt[]];
  }
}

/**
 * The `workflow_suspended` interrupts of a run's suspended steps: what its `RUN_FINISHED` says when
 * it suspends, and what a thread's snapshot says while it waits.
 *
 * @example
 * workflowInterrupts({ workflowId: 'draft-and-send', mastraRunId, stepFacts }, [{ path: ['review'], payload: { draft } }]);
 * // [{ id: `${mastraRunId}::review`, reason: 'workflow_suspended', message, responseSchema, metadata: { workflowId, stepId: 'review', suspendPayload: { draft } } }]
 */
export function workflowInterrupts(
  run: Pick<WorkflowTranslatorOptions, 'workflowId' | 'mastraRunId' | 'stepFacts'>,
  steps: ReadonlyArray<{ path: readonly string[]; payload?: unknown }>,
): Interrupt[] {
  return steps.map(({ path, payload }): Interrupt => {
    const stepId = path.join('.');
    const facts = run.stepFacts(path);
    return {
      id: workflowInterruptId(run.mastraRunId, path),
      reason: 'workflow_suspended',
      message: facts.description ? `${facts.description}.` : `Step ${stepId} is waiting for input.`,
      ...(facts.responseSchema && { responseSchema: facts.responseSchema }),
      metadata: { workflowId: run.workflowId, stepId, suspendPayload: payload ?? null },
    };
  });
}

/** The text of a workflow's answer: a string as it is, else its string field `text`, else the result as JSON. */
export function answerText(result: unknown): string {
  if (typeof result === 'string') return result;
  if (result === undefined || result === null) return '';
  const text = (result as { text?: unknown }).text;
  return typeof text === 'string' ? text : JSON.stringify(result);
}
