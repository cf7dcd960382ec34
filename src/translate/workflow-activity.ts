import { EventType, type Event } from '@ag-ui/core';
import { textOr } from '../text.js';

/** The activity type of a workflow an agent runs as a tool. */
export const WORKFLOW_ACTIVITY = 'workflow';

export function workflowActivityId(toolCallId: string): string {
  return `workflow-${toolCallId}`;
}

export interface WorkflowActivityContent {
  workflowId: string;
  status: string;
  steps: Array<{ id: string; status: string }>;
}

/** A workflow chunk as a workflow tool relays it (`tool-output` whose output comes from the workflow). */
interface RelayedChunk {
  toolCallId: string;
  output?: unknown;
}

type WorkflowChunk = { type?: unknown; from?: unknown; payload?: { id?: unknown; workflowId?: unknown; status?: unknown; workflowStatus?: unknown } };

/**
 * The progress of the workflows an agent runs as tools (an agent's `workflows: { … }`), as one
 * AG-UI activity per call between its `TOOL_CALL_END` and its `TOOL_CALL_RESULT`:
 * `ACTIVITY_SNAPSHOT { messageId: "workflow-<toolCallId>", activityType: "workflow", content: { workflowId, status, steps: [{ id, status }] } }`
 * when the call's workflow first shows in a run, then an `ACTIVITY_DELTA` per change. A resumed
 * call goes on from its activity as it suspended (`known`, kept by the caller). Pure; one per run.
 *
 * @example
 * const activities = new WorkflowActivities(storedActivities);
 * activities.relay(chunk.payload, out); // on `tool-output`
 * activities.touched();                 // what to keep for the thread's history
 */
export class WorkflowActivities {
  /** The calls whose workflow this run showed, with their content as it stands. */
  private readonly shown = new Map<string, WorkflowActivityContent>();

  constructor(private readonly known: Readonly<Record<string, WorkflowActivityContent>> = {}) {}

  /** Whether a relayed chunk is a workflow's (else it is a sub-agent's, or the tool's own output). */
  static isWorkflowChunk(output: unknown): boolean {
    const type = (output as WorkflowChunk | undefined)?.type;
    return typeof type === 'string' && type.startsWith('workflow-') && (output as WorkflowChunk).from === 'WORKFLOW';
  }

  relay({ toolCallId, output }: RelayedChunk, out: Event[]): void {
    if (!WorkflowActivities.isWorkflowChunk(output)) return;
    const chunk = output as WorkflowChunk;
    const payload = chunk.payload ?? {};
    const content = this.shown.get(toolCallId) ?? this.open(toolCallId, textOr(payload.workflowId, ''), out);
    switch (chunk.type) {
      case 'workflow-start':
        return this.set(toolCallId, content, 'running', out);
      case 'workflow-step-start':
        return this.step(toolCallId, content, String(payload.id), 'running', out);
      case 'workflow-step-result':
        return this.step(toolCallId, content, String(payload.id), textOr(payload.status, 'success'), out);
      case 'workflow-step-suspended':
        return this.step(toolCallId, content, String(payload.id), 'suspended', out);
      case 'workflow-canceled':
        return this.set(toolCallId, content, 'canceled', out);
      case 'workflow-finish':
        return this.set(toolCallId, content, textOr(payload.workflowStatus, 'success'), out);
    }
  }

  /** The activities this run showed, as they stand: what history shows of them. */
  touched(): Record<string, WorkflowActivityContent> {
    return Object.fromEntries(this.shown);
  }

  private open(toolCallId: string, workflowId: string, out: Event[]): WorkflowActivityContent {
    const before = this.known[toolCallId];
    const content: WorkflowActivityContent = before ? { ...before, steps: before.steps.map((s) => ({ ...s })) } : { workflowId, status: 'running', steps: [] };
    this.shown.set(toolCallId, content);
    out.push({
      type: EventType.ACTIVITY_SNAPSHOT,
      messageId: workflowActivityId(toolCallId),
      activityType: WORKFLOW_ACTIVITY,
      content: structuredClone(content),
    });
    return content;
  }

  private set(toolCallId: string, content: WorkflowActivityContent, status: string, out: Event[]): void {
    if (content.status === status) return;
    content.status = status;
    this.delta(toolCallId, [{ op: 'replace', path: '/status', value: status }], out);
  }

  private step(toolCallId: string, content: WorkflowActivityContent, id: string, status: string, out: Event[]): void {
    const at = content.steps.findIndex((s) => s.id === id);
    if (at >= 0 && content.steps[at].status === status) return;
    if (at >= 0) content.steps[at].status = status;
    else content.steps.push({ id, status });
    this.delta(
      toolCallId,
      [at >= 0 ? { op: 'replace', path: `/steps/${at}/status`, value: status } : { op: 'add', path: '/steps/-', value: { id, status } }],
      out,
    );
  }

  private delta(toolCallId: string, patch: Array<{ op: 'add' | 'replace'; path: string; value: unknown }>, out: Event[]): void {
    out.push({ type: EventType.ACTIVITY_DELTA, messageId: workflowActivityId(toolCallId), activityType: WORKFLOW_ACTIVITY, patch });
  }
}
