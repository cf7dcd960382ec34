import type { Mastra } from '@mastra/core';
import type { AnyWorkflow as MastraAnyWorkflow } from '@mastra/core/workflows';

/**
 * The door into Mastra's workflow APIs, beside `mastra.ts` for agents: listing, starting,
 * resuming and cancelling runs, reading a run's stored snapshot, and the schemas a workflow
 * declares. Mastra types a workflow by its steps and schemas; the bridge handles any workflow, so
 * the generic types stop here and the rest of the bridge sees plain data.
 */

/** A workflow run's result (Mastra's `WorkflowResult`), as far as the translator reads it. */
export interface WorkflowResult {
  status: string;
  result?: unknown;
  error?: unknown;
  state?: unknown;
  /** Each suspended step's path: nested workflow ids, then the step id. */
  suspended?: string[][];
  /** Each suspended step's payload, under the first id of its path. */
  suspendPayload?: Record<string, unknown>;
}

/**
 * A workflow as Mastra registers it, whatever its steps and schemas, with what the bridge reads of
 * it typed: Mastra's `AnyWorkflow` leaves its id and description `any`, which would leak `any`
 * into every service that names a workflow.
 */
export type AnyWorkflow = Omit<MastraAnyWorkflow, 'id' | 'description'> & { readonly id: string; readonly description?: string };

/** A schema as Mastra keeps it: Standard Schema, with JSON Schema (zod 4, and Mastra's own). */
interface StandardSchema {
  '~standard': {
    validate(value: unknown): StandardResult | Promise<StandardResult>;
    jsonSchema?: { input?(options: { target: string }): Record<string, unknown> };
  };
}
type StandardResult =
  { value: unknown; issues?: undefined } | { issues: ReadonlyArray<{ message: string; path?: ReadonlyArray<PropertyKey | { key: PropertyKey }> }> };

/** What a schema said of a value: the parsed value, or each problem with the field it is in. */
export type Checked = { ok: true; value: unknown } | { ok: false; issues: Array<{ path: string; message: string }> };

function standard(schema: unknown): StandardSchema | undefined {
  return schema && typeof schema === 'object' && '~standard' in schema ? (schema as StandardSchema) : undefined;
}

/** Checks `value` against a workflow or step schema (no schema: anything goes, as is). */
export async function check(schema: unknown, value: unknown): Promise<Checked> {
  const std = standard(schema);
  if (!std) return { ok: true, value };
  const result = await std['~standard'].validate(value);
  if (!result.issues) return { ok: true, value: result.value };
  return {
    ok: false,
    issues: result.issues.map((issue) => ({
      path: (issue.path ?? []).map((p) => String(typeof p === 'object' ? p.key : p)).join('.'),
      message: issue.message,
    })),
  };
}

/** A schema as JSON Schema (draft-07), for a client to build a form from; none when it has no JSON form. */
export function jsonSchemaOf(schema: unknown): Record<string, unknown> | undefined {
  try {
    const json = standard(schema)?.['~standard'].jsonSchema?.input?.({ target: 'draft-07' });
    if (!json) return undefined;
    const { $schema: _dialect, ...rest } = json;
    return rest;
  } catch {
    // A schema with parts JSON Schema cannot express (a transform, a custom check) has no form.
    return undefined;
  }
}

/** Every registered workflow as `[registration key, workflow]`. */
export function workflowsOf(mastra: Mastra): Array<[string, AnyWorkflow]> {
  try {
    return Object.entries(mastra.listWorkflows());
  } catch {
    // A Mastra with no workflows answers an empty record; an older one may throw.
    return [];
  }
}

/** One step of a workflow, as the bridge reads it. */
export interface StepFacts {
  id: string;
  resumeSchema?: unknown;
  description?: string;
}

/** The step at `path`: its id, after the ids of the nested workflows it sits in. */
export function findStep(workflow: AnyWorkflow, path: readonly string[]): StepFacts | undefined {
  const [head, ...rest] = path;
  const step = head === undefined ? undefined : (workflow.steps?.[head] as unknown as (StepFacts & { steps?: unknown }) | undefined);
  if (!step || rest.length === 0) return step;
  return typeof step.steps === 'object' && step.steps !== null ? findStep(step as unknown as AnyWorkflow, rest) : undefined;
}

/** Whether any step of the workflow (at any depth) can suspend: it declares a resume schema. */
export function canSuspend(workflow: AnyWorkflow): boolean {
  return Object.values(workflow.steps ?? {}).some((step) => {
    const facts = step as unknown as { resumeSchema?: unknown; steps?: unknown };
    return facts.resumeSchema !== undefined || (typeof facts.steps === 'object' && facts.steps !== null && canSuspend(step as unknown as AnyWorkflow));
  });
}

/** What the bridge reads of a workflow run's output: its chunks, its result, and how to stop it. */
export interface WorkflowOutput {
  fullStream: AsyncIterable<unknown>;
  result: Promise<WorkflowResult>;
  cancel(): Promise<void>;
}

/** Which run, and whose: the resource is stored with the run's snapshot. */
export interface WorkflowRunTarget {
  runId: string;
  resourceId: string;
}

/** Starts a run of `workflow` and streams it; its final state comes with its result. */
export async function startWorkflow(
  workflow: AnyWorkflow,
  target: WorkflowRunTarget,
  start: { inputData: unknown; initialState?: unknown },
): Promise<WorkflowOutput> {
  const run = await workflow.createRun({ runId: target.runId, resourceId: target.resourceId });
  const output = run.stream({
    inputData: start.inputData,
    ...(start.initialState !== undefined && { initialState: start.initialState }),
    outputOptions: { includeState: true },
  });
  return outputOf(run, output);
}

/** Resumes the suspended step at `stepPath` (its id, with the nested workflows' ids before it) with `resumeData`. */
export async function resumeWorkflow(
  workflow: AnyWorkflow,
  target: WorkflowRunTarget,
  resume: { stepPath: string[]; resumeData: unknown },
): Promise<WorkflowOutput> {
  const run = await workflow.createRun({ runId: target.runId, resourceId: target.resourceId });
  const output = run.resumeStream({ step: resume.stepPath, resumeData: resume.resumeData, outputOptions: { includeState: true } });
  return outputOf(run, output);
}

/** Cancels a suspended run from storage (a run that streams is cancelled through its output). */
export async function cancelWorkflowRun(workflow: AnyWorkflow, target: WorkflowRunTarget): Promise<void> {
  const run = await workflow.createRun({ runId: target.runId, resourceId: target.resourceId });
  await run.cancel();
}

type MastraRun = Awaited<ReturnType<AnyWorkflow['createRun']>>;

function outputOf(run: MastraRun, output: { fullStream: unknown; result: Promise<unknown> }): WorkflowOutput {
  return {
    fullStream: output.fullStream as AsyncIterable<unknown>,
    result: output.result as Promise<WorkflowResult>,
    cancel: () => run.cancel(),
  };
}

/** A stored workflow run, as the bridge reads it: where it stands, and what it waits on. */
export interface StoredWorkflowRun {
  status: string;
  resourceId?: string;
  /** The state as last stored (Mastra stores it after each step). */
  state: unknown;
  /** Each suspended step's path (nested workflow ids, then the step id), and what it suspended with. */
  suspended: Array<{ path: string[]; payload: unknown }>;
}

/** A workflow run as storage holds it; `undefined` when there is none. */
export async function storedWorkflowRun(mastra: Mastra, workflow: AnyWorkflow, runId: string): Promise<StoredWorkflowRun | undefined> {
  const store = await mastra.getStorage()?.getStore('workflows');
  const row = await store?.getWorkflowRunById({ workflowName: workflow.id, runId });
  if (!row) return undefined;
  // LibSQL and PostgreSQL hand the snapshot back as stored; some stores as its JSON text.
  const snapshot = (typeof row.snapshot === 'string' ? JSON.parse(row.snapshot) : row.snapshot) as SnapshotData;
  const suspended = Object.keys(snapshot.suspendedPaths ?? {}).map((stepId) => ({
    path: suspendedPath(snapshot, stepId),
    payload: suspendPayloadOf(snapshot, stepId),
  }));
  return { status: snapshot.status ?? 'unknown', resourceId: row.resourceId, state: snapshot.value ?? {}, suspended };
}

interface SnapshotData {
  status?: string;
  value?: unknown;
  suspendedPaths?: Record<string, number[]>;
  context?: Record<string, { suspendPayload?: unknown; status?: string }>;
}

/** What a suspended step suspended with, without the bookkeeping Mastra keeps beside it (`__workflow_meta`). */
function suspendPayloadOf(snapshot: SnapshotData, stepId: string): unknown {
  const payload = snapshot.context?.[stepId]?.suspendPayload;
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return payload;
  const { __workflow_meta: _meta, ...own } = payload as Record<string, unknown>;
  return own;
}

/** A suspended step's path: a step inside a nested workflow is suspended under the nested workflow's id. */
function suspendedPath(snapshot: SnapshotData, stepId: string): string[] {
  const meta = (snapshot.context?.[stepId]?.suspendPayload as { __workflow_meta?: { path?: string[] } } | undefined)?.__workflow_meta;
  return meta?.path?.length && meta.path[0] !== stepId ? [stepId, ...meta.path] : [stepId];
}
