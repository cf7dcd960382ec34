/**
 * Records the chunk sequences the REAL demo agent (scripted model, no network) emits for a set of
 * scenarios and writes them to `test/fixtures/chunks/<scenario>.json`, for translator tests.
 *
 *   npm run record-fixtures            # or: npx tsx scripts/record-fixtures.ts
 *   npx tsx scripts/record-fixtures.ts echo approval-request   # only some scenarios
 *
 * Each file is `{ scenario, description, source: 'stream' | 'subscription', chunks }`. Chunks are
 * recorded verbatim except for bulky volatile fields a translator never needs (see `sanitize`).
 * The script is idempotent (overwrites) and every scenario always yields the same chunk TYPE
 * sequence; ids, timestamps and run ids naturally differ between recordings.
 *
 * Setup: the demo agent (`delayMs: 0`, `slowTaskMs: 100`) in a Mastra with background tasks
 * enabled and an `InMemoryStore`; the two abort scenarios use a second, separate demo agent with
 * `delayMs: 20` so the abort lands mid-stream (with `delayMs: 0` the whole model stream is already
 * enqueued). Every scenario uses its own thread (resource `r`), except the approval and
 * frontend-tool pairs, whose second half continues the first half's thread.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Mastra } from '@mastra/core';
import type { Agent } from '@mastra/core/agent';
import { InMemoryStore } from '@mastra/core/storage';
import { createTool } from '@mastra/core/tools';
import { z } from 'zod';
import { createDemoAgent } from '../src/demo/agent.js';
import { createGuardedAgent } from '../src/demo/guardrails.js';
import { createDemoWorkflow, DEMO_WORKFLOW_ID } from '../src/demo/workflow.js';
import { errorMessage } from '../src/text.js';
import { agentStepWorkflow, failingWorkflow, loopsWorkflow, shapesWorkflow } from '../test/support/workflows.js';

type Chunk = { type: string; runId?: string; payload?: Record<string, unknown>; [key: string]: unknown };
type Source = 'stream' | 'subscription';

interface Fixture {
  scenario: string;
  description: string;
  source: Source;
  chunks: unknown[];
}

interface Scenario {
  name: string;
  description: string;
  source: Source;
  run: (ctx: Context) => Promise<Chunk[]>;
}

interface Context {
  /** The demo agent with `delayMs: 0` (everything but the abort scenarios). */
  agent: Agent;
  /** A second demo agent (own Mastra + storage) with `delayMs: 20`, so that an abort lands mid-stream. */
  slowAgent: Agent;
  /** The scripted model behind two guardrails (`src/demo/guardrails.ts`), in the first Mastra. */
  guardedAgent: Agent;
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT_DIR = join(ROOT, 'test', 'fixtures', 'chunks');
const RESOURCE = 'r';
const SCENARIO_TIMEOUT_MS = 10_000;

// ---------------------------------------------------------------------------------------------
// Helpers

/**
 * Collects every chunk of an async iterable (a `fullStream`) until it ends. Each chunk is
 * snapshotted (`sanitize`) on arrival: Mastra keeps mutating some payload objects afterwards
 * (e.g. the `output.steps` array of an early `step-finish` grows with later steps).
 */
async function collect(
  stream: AsyncIterable<unknown>,
  onChunk?: (chunk: Chunk, all: Chunk[]) => void,
  stopAfter?: (chunk: Chunk) => boolean,
): Promise<Chunk[]> {
  const chunks: Chunk[] = [];
  for await (const raw of stream) {
    const chunk = sanitize(raw as Chunk);
    chunks.push(chunk);
    onChunk?.(chunk, chunks);
    if (stopAfter?.(chunk)) break;
  }
  return chunks;
}

/** Rejects after `ms` with a clear message, unless `promise` settles first. */
function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let threadCounter = 0;
/** A fresh thread id per use: scenarios never share memory unless they mean to. */
function newThread(prefix: string): string {
  threadCounter += 1;
  return `${prefix}-${threadCounter}-${Date.now().toString(36)}`;
}

function memoryFor(thread: string) {
  return { thread, resource: RESOURCE };
}

/** Last `tool-call-approval` / `tool-call` id of a recording. */
function toolCallIdOf(chunks: Chunk[], type: 'tool-call' | 'tool-call-approval'): string {
  const chunk = [...chunks].reverse().find((c) => c.type === type);
  const id = chunk?.payload?.toolCallId;
  if (typeof id !== 'string') throw new Error(`no ${type} chunk with a toolCallId in: ${typeSequence(chunks)}`);
  return id;
}

/**
 * A live thread subscription whose chunks are buffered in the background, so a scenario can act
 * on the thread and wait for a condition (`until`) without racing the iterator.
 */
class ThreadRecorder {
  readonly chunks: Chunk[] = [];
  private waiters: Array<{ test: (c: Chunk, all: Chunk[]) => boolean; resolve: (c: Chunk) => void }> = [];
  private ended = false;
  private failure: unknown;
  private pump: Promise<void>;

  private constructor(readonly sub: Awaited<ReturnType<Agent['subscribeToThread']>>) {
    this.pump = (async () => {
      try {
        for await (const raw of sub.stream) {
          const chunk = sanitize(raw as unknown as Chunk);
          this.chunks.push(chunk);
          this.waiters = this.waiters.filter((w) => {
            if (!w.test(chunk, this.chunks)) return true;
            w.resolve(chunk);
            return false;
          });
        }
      } catch (error) {
        this.failure = error;
      } finally {
        this.ended = true;
      }
    })();
  }

  static async open(agent: Agent, threadId: string): Promise<ThreadRecorder> {
    const sub = await agent.subscribeToThread({ resourceId: RESOURCE, threadId });
    return new ThreadRecorder(sub);
  }

  /** Resolves with the first chunk (already buffered or future) that passes `test`. */
  until(test: (c: Chunk, all: Chunk[]) => boolean, what: string, ms = SCENARIO_TIMEOUT_MS): Promise<Chunk> {
    const seen = this.chunks.find((c, i) => test(c, this.chunks.slice(0, i + 1)));
    if (seen) return Promise.resolve(seen);
    if (this.ended)
      return Promise.reject(new Error(`subscription ended (${this.failure === undefined ? 'no error' : errorMessage(this.failure)}) before ${what}`));
    const waiting = new Promise<Chunk>((resolve) => this.waiters.push({ test, resolve }));
    return withTimeout(waiting, ms, `waiting for ${what}; got so far: ${typeSequence(this.chunks) || '(nothing)'}`);
  }

  async close(): Promise<Chunk[]> {
    this.sub.unsubscribe();
    await withTimeout(this.pump, 2_000, 'the subscription iterator to end after unsubscribe()');
    return this.chunks;
  }
}

/** Runs `body` with a subscription opened BEFORE anything is sent; always unsubscribes. */
async function recordThread(agent: Agent, prefix: string, body: (rec: ThreadRecorder, threadId: string) => Promise<void>): Promise<Chunk[]> {
  const threadId = newThread(prefix);
  const rec = await ThreadRecorder.open(agent, threadId);
  try {
    await withTimeout(body(rec, threadId), SCENARIO_TIMEOUT_MS, `subscription scenario ${prefix}`);
  } finally {
    await rec.close();
  }
  return rec.chunks;
}

// ---------------------------------------------------------------------------------------------
// Sanitizing

const STEP_TYPES = new Set(['step-start', 'step-finish', 'finish']);

/**
 * Drops only bulky, volatile fields a translator never needs: in `step-start`/`step-finish`/`finish`
 * payloads `request`, `response`, `messages`, `metadata.request` and the same `request`/`response`
 * inside `output.steps[]`; anywhere, error `stack`
 * strings. `Error` instances (which `JSON.stringify` would turn into `{}`) become plain
 * `{ name, message, ...own fields }` so that the fixture still shows what the translator sees.
 */
function sanitize(chunk: Chunk): Chunk {
  const plain = toPlain(chunk) as Chunk;
  if (STEP_TYPES.has(plain.type) && plain.payload && typeof plain.payload === 'object') {
    const payload = { ...plain.payload };
    delete payload.request;
    delete payload.response;
    delete payload.messages;
    if (payload.metadata && typeof payload.metadata === 'object') {
      const metadata = { ...(payload.metadata as Record<string, unknown>) };
      delete metadata.request;
      payload.metadata = metadata;
    }
    // `output.steps[]` repeats the same per-step `request` / `response` (the latter with the full
    // response messages): dropped like the top-level ones.
    const output = payload.output as { steps?: unknown } | undefined;
    if (output && Array.isArray(output.steps)) {
      payload.output = {
        ...output,
        steps: output.steps.map((step) => {
          if (!step || typeof step !== 'object') return step as unknown;
          const { request: _request, response: _response, ...rest } = step as Record<string, unknown>;
          return rest;
        }),
      };
    }
    plain.payload = payload;
  }
  return plain;
}

/** JSON-ready copy: Dates → ISO strings, Errors → plain objects, no `stack` strings, no cycles. */
function toPlain(value: unknown, ancestors: object[] = []): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date) return value.toISOString();
  if (ancestors.includes(value)) return '[Circular]';
  const path = [...ancestors, value];
  if (Array.isArray(value)) return value.map((v) => toPlain(v, path));
  if (value instanceof Error) {
    const out: Record<string, unknown> = { name: value.name, message: value.message };
    for (const [k, v] of Object.entries(value)) if (k !== 'stack' && v !== undefined) out[k] = toPlain(v, path);
    if (value.cause !== undefined) out.cause = toPlain(value.cause, path);
    return out;
  }
  const json = (value as { toJSON?: () => unknown }).toJSON;
  if (typeof json === 'function') return toPlain(json.call(value), ancestors);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === 'stack' && typeof v === 'string') continue;
    if (v === undefined || typeof v === 'function') continue;
    out[k] = toPlain(v, path);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Summary

function typeSequence(chunks: Array<{ type: string }>): string {
  const out: string[] = [];
  let prev: string | undefined;
  let count = 0;
  const flush = () => {
    if (prev !== undefined) out.push(count > 1 ? `${prev}×${count}` : prev);
  };
  for (const { type } of chunks) {
    if (type === prev) {
      count += 1;
      continue;
    }
    flush();
    prev = type;
    count = 1;
  }
  flush();
  return out.join(',');
}

// ---------------------------------------------------------------------------------------------
// Scenarios

const pickColor = createTool({
  id: 'pick_color',
  description: 'Pick a color',
  inputSchema: z.object({ color: z.string() }),
});
const clientTools = { pick_color: pickColor };

/** One plain `agent.stream(input)` on a fresh thread. */
async function streamOnce(agent: Agent, prefix: string, input: string, extra: Record<string, unknown> = {}): Promise<Chunk[]> {
  const output = await agent.stream(input, { memory: memoryFor(newThread(prefix)), ...extra });
  return collect(output.fullStream as AsyncIterable<unknown>);
}

/** `delete notes.txt` (or `input`) on a fresh thread, up to the approval request. */
async function requestApproval(agent: Agent, prefix: string, input = 'delete notes.txt') {
  const thread = newThread(prefix);
  const output = await agent.stream(input, { memory: memoryFor(thread) });
  const chunks = await collect(output.fullStream as AsyncIterable<unknown>);
  const last = chunks.at(-1);
  if (last?.type !== 'tool-call-approval') throw new Error(`expected to end with tool-call-approval: ${typeSequence(chunks)}`);
  return { thread, runId: output.runId, chunks };
}

const approvalRuns = new Map<string, Awaited<ReturnType<typeof requestApproval>>>();

const frontendRuns = new Map<string, { thread: string; toolCallId: string }>();

/** The suspended workflow call of `agent-workflow-suspend`, for `agent-workflow-resume`. */
const workflowCalls = new Map<string, { thread: string; runId: string; toolCallId: string }>();

const SCENARIOS: Scenario[] = [
  {
    name: 'echo',
    description: "agent.stream('hello world'): plain text answer 'Echo: hello world', streamed word by word.",
    source: 'stream',
    run: ({ agent }) => streamOnce(agent, 'echo', 'hello world'),
  },
  {
    name: 'subagent',
    description:
      "agent.stream('research tides'): step 1 delegates to the researcher sub-agent (tool call agent-researcher); its chunks arrive as tool-output (from AGENT), then the tool-result carries its answer; step 2 answers with a summary.",
    source: 'stream',
    run: ({ agent }) => streamOnce(agent, 'subagent', 'research tides'),
  },
  {
    name: 'subagent-error',
    description: "agent.stream('research Atlantis'): the researcher sub-agent's model fails; the delegation ends with a tool-error, and the agent answers on.",
    source: 'stream',
    run: ({ agent }) => streamOnce(agent, 'subagent-error', 'research Atlantis'),
  },
  {
    name: 'subagent-tool',
    description:
      "agent.stream('research the weather in Oslo'): the researcher sub-agent calls get_weather and reports its result; its tool call and result arrive relayed as tool-output chunks of the delegation.",
    source: 'stream',
    run: ({ agent }) => streamOnce(agent, 'subagent-tool', 'research the weather in Oslo'),
  },
  {
    name: 'subagent-reasoning',
    description:
      "agent.stream('research tides, think it through'): the researcher sub-agent reasons, then answers; its reasoning arrives relayed as tool-output chunks.",
    source: 'stream',
    run: ({ agent }) => streamOnce(agent, 'subagent-reasoning', 'research tides, think it through'),
  },
  {
    name: 'subagent-approval',
    description: "agent.stream('research and delete old-notes.txt'): the researcher sub-agent calls delete_file, which needs approval.",
    source: 'stream',
    run: async ({ agent }) => {
      const run = await requestApproval(agent, 'subagent-approval', 'research and delete old-notes.txt');
      approvalRuns.set('subagent', run);
      return run.chunks;
    },
  },
  {
    name: 'subagent-approval-approved',
    description:
      "Continuation of subagent-approval: agent.approveToolCall({ runId, memory }).fullStream: the sub-agent's call runs and the sub-agent answers (relayed), then the delegation's result and the agent's answer.",
    source: 'stream',
    run: async ({ agent }) => {
      const run = approvalRuns.get('subagent') ?? (await requestApproval(agent, 'subagent-approval', 'research and delete old-notes.txt'));
      const output = await agent.approveToolCall({ runId: run.runId, memory: memoryFor(run.thread) });
      return collect(output.fullStream as AsyncIterable<unknown>);
    },
  },
  {
    name: 'tripwire-input',
    description:
      "guarded.stream('tell me about the forbidden zone'): an input processor aborts before the model runs: a tripwire chunk with its reason, processorId and metadata.",
    source: 'stream',
    run: ({ guardedAgent }) => streamOnce(guardedAgent, 'tripwire-input', 'tell me about the forbidden zone'),
  },
  {
    name: 'tripwire-step',
    description:
      "guarded.stream('what is the secret'): the answer streams, then an output step processor aborts: a finish whose stepResult.reason is 'tripwire', the tripwire in its last step.",
    source: 'stream',
    run: ({ guardedAgent }) => streamOnce(guardedAgent, 'tripwire-step', 'what is the secret'),
  },
  {
    name: 'processor-retry',
    description:
      "guarded.stream('write a draft'), saved per step: an output step processor turns the first answer down with retry: a step-finish whose stepResult.reason is 'retry' (retryReason, retryProcessorId), then the same message's step again with the new answer ('Revised: write a draft'), which alone is stored.",
    source: 'stream',
    run: ({ guardedAgent }) => streamOnce(guardedAgent, 'processor-retry', 'write a draft', { savePerStep: true }),
  },
  {
    name: 'tripwire-stream',
    description:
      "guarded.stream('name the classified files'): an output stream processor aborts at the word 'classified': the text before it streamed, then a tripwire chunk; nothing is stored.",
    source: 'stream',
    run: ({ guardedAgent }) => streamOnce(guardedAgent, 'tripwire-stream', 'name the classified files'),
  },
  {
    name: 'reasoning',
    description: "agent.stream('think about it'): a reasoning block, then a text answer, in one step.",
    source: 'stream',
    run: ({ agent }) => streamOnce(agent, 'reasoning', 'think about it'),
  },
  {
    name: 'server-tool',
    description:
      "agent.stream('weather in Rome'): step 1 streams the get_weather call (input streaming, tool-call) and the server executes it (tool-result); step 2 answers with text.",
    source: 'stream',
    run: ({ agent }) => streamOnce(agent, 'server-tool', 'weather in Rome'),
  },
  {
    name: 'server-tool-error',
    description:
      "agent.stream('weather in Atlantis'): get_weather throws 'no weather station in Atlantis' (tool-error); the model then answers with text about the failure.",
    source: 'stream',
    run: ({ agent }) => streamOnce(agent, 'server-tool-error', 'weather in Atlantis'),
  },
  {
    name: 'model-error',
    description: "agent.stream('please fail'): the model's doStream throws 'demo model failure'.",
    source: 'stream',
    run: ({ agent }) => streamOnce(agent, 'model-error', 'please fail'),
  },
  {
    name: 'agent-workflow-suspend',
    description:
      "agent.stream('draft tea'): the demo agent calls its workflow draft-and-send as a tool (workflow-draft-and-send); the workflow's chunks come wrapped in tool-output, and its review step suspends the call (tool-call-suspended).",
    source: 'stream',
    run: async ({ agent }) => {
      const thread = newThread('agent-workflow');
      const output = await agent.stream('draft tea', { memory: memoryFor(thread) });
      const chunks = await collect(output.fullStream as AsyncIterable<unknown>);
      workflowCalls.set('drafted', { thread, runId: output.runId, toolCallId: toolCallIdOf(chunks, 'tool-call') });
      return chunks;
    },
  },
  {
    name: 'agent-workflow-resume',
    description:
      "Continuation of agent-workflow-suspend: agent.resumeStream({ approved: true, edit }, { runId, toolCallId }): the workflow resumes (its chunks in tool-output), its result is the call's, and the model answers 'Done: …'.",
    source: 'stream',
    run: async ({ agent }) => {
      const call = workflowCalls.get('drafted');
      if (!call) throw new Error('agent-workflow-suspend must run first');
      const output = await agent.resumeStream(
        { approved: true, edit: 'Tea, edited.' },
        { runId: call.runId, toolCallId: call.toolCallId, memory: memoryFor(call.thread) },
      );
      return collect(output.fullStream as AsyncIterable<unknown>);
    },
  },
  {
    name: 'approval-request',
    description: "agent.stream('delete notes.txt'): delete_file requires approval; the stream ends with tool-call-approval (run suspended, no finish).",
    source: 'stream',
    run: async ({ agent }) => {
      const run = await requestApproval(agent, 'approval');
      approvalRuns.set('approved', run);
      return run.chunks;
    },
  },
  {
    name: 'approval-approved',
    description: 'Continuation of approval-request: agent.approveToolCall({ runId, memory }).fullStream: the tool runs (tool-result) and the model answers.',
    source: 'stream',
    run: async ({ agent }) => {
      const run = approvalRuns.get('approved') ?? (await requestApproval(agent, 'approval'));
      const output = await agent.approveToolCall({ runId: run.runId, memory: memoryFor(run.thread) });
      return collect(output.fullStream as AsyncIterable<unknown>);
    },
  },
  {
    name: 'approval-declined',
    description: "A second 'delete notes.txt' thread, declined: agent.declineToolCall({ runId, reason: 'not today', memory }).fullStream.",
    source: 'stream',
    run: async ({ agent }) => {
      const run = await requestApproval(agent, 'approval-declined');
      const output = await agent.declineToolCall({ runId: run.runId, reason: 'not today', memory: memoryFor(run.thread) });
      return collect(output.fullStream as AsyncIterable<unknown>);
    },
  },
  {
    name: 'frontend-tool-return',
    description:
      "agent.stream('use pick_color', { clientTools: { pick_color } }): the model calls the client tool (no execute); the run ends after the call, with no tool-result.",
    source: 'stream',
    run: async ({ agent }) => {
      const thread = newThread('frontend');
      const output = await agent.stream('use pick_color', { memory: memoryFor(thread), clientTools });
      const chunks = await collect(output.fullStream as AsyncIterable<unknown>);
      frontendRuns.set('return', { thread, toolCallId: toolCallIdOf(chunks, 'tool-call') });
      return chunks;
    },
  },
  {
    name: 'frontend-tool-followup',
    description:
      "Same thread as frontend-tool-return: agent.stream([{ role: 'tool', content: [{ type: 'tool-result', toolCallId, toolName: 'pick_color', output: { type: 'text', value: 'teal' } }] }], { memory, clientTools }): the model answers from the result.",
    source: 'stream',
    run: async ({ agent }) => {
      let previous = frontendRuns.get('return');
      if (!previous) {
        const thread = newThread('frontend');
        const first = await agent.stream('use pick_color', { memory: memoryFor(thread), clientTools });
        previous = { thread, toolCallId: toolCallIdOf(await collect(first.fullStream as AsyncIterable<unknown>), 'tool-call') };
      }
      const output = await agent.stream(
        [
          {
            role: 'tool',
            content: [{ type: 'tool-result', toolCallId: previous.toolCallId, toolName: 'pick_color', output: { type: 'text', value: 'teal' } }],
          },
        ],
        { memory: memoryFor(previous.thread), clientTools },
      );
      return collect(output.fullStream as AsyncIterable<unknown>);
    },
  },
  {
    name: 'structured-output',
    description: "agent.stream('summarize this', { structuredOutput: { schema: z.object({ answer: z.string(), confidence: z.number() }) } }).",
    source: 'stream',
    run: ({ agent }) =>
      streamOnce(agent, 'structured', 'summarize this', {
        structuredOutput: { schema: z.object({ answer: z.string(), confidence: z.number() }) },
      }),
  },
  {
    name: 'aborted',
    description:
      "agent.stream('hello one two … ten', { abortSignal }) on a demo agent with delayMs 20; the AbortController is aborted right after the first text-delta.",
    source: 'stream',
    run: async ({ slowAgent }) => {
      const controller = new AbortController();
      const output = await slowAgent.stream('hello one two three four five six seven eight nine ten', {
        memory: memoryFor(newThread('aborted')),
        abortSignal: controller.signal,
      });
      return collect(output.fullStream as AsyncIterable<unknown>, (chunk) => {
        if (chunk.type === 'text-delta' && !controller.signal.aborted) controller.abort();
      });
    },
  },
  {
    name: 'background-task',
    description:
      "agent.stream('slow job please') with Mastra backgroundTasks enabled: slow_task (background, deferred, 100 ms) starts detached; fullStream recorded until it ends.",
    source: 'stream',
    run: async ({ agent }) => {
      const output = await agent.stream('slow job please', { memory: memoryFor(newThread('background')) });
      const chunks = await collect(output.fullStream as AsyncIterable<unknown>);
      await sleep(300); // let the detached task finish before the next scenario
      return chunks;
    },
  },
  {
    name: 'background-task-until-idle',
    description:
      "agent.stream('slow job please', { untilIdle: true, abortSignal }): the fullStream stays open across the detached slow_task; background-task-running/-completed arrive on it and the continuation turn streams as a new run (new runId, new start). Recorded up to the continuation's finish, then aborted: the demo script answers the continuation by calling slow_task again (it reads the last user text), so untilIdle would otherwise loop forever.",
    source: 'stream',
    run: async ({ agent }) => {
      const controller = new AbortController();
      const output = await agent.stream('slow job please', {
        memory: memoryFor(newThread('background-idle')),
        untilIdle: true,
        abortSignal: controller.signal,
      });
      let finishes = 0;
      const chunks = await collect(
        output.fullStream as AsyncIterable<unknown>,
        (chunk) => {
          if (chunk.type === 'finish') finishes += 1;
          if (finishes === 2 && !controller.signal.aborted) controller.abort();
        },
        (chunk) => chunk.type === 'finish' && finishes === 2,
      );
      await sleep(300); // let the task the continuation started finish before the next scenario
      return chunks;
    },
  },

  // ----- thread subscriptions: subscribeToThread() BEFORE anything is sent ---------------------
  {
    name: 'signal-wake',
    description:
      "subscribeToThread, then sendMessage('hello') on the idle thread: accepted {action:'wake'}; the woken run echoes the message (data-user-message echo of the signal).",
    source: 'subscription',
    run: ({ agent }) =>
      recordThread(agent, 'signal-wake', async (rec, threadId) => {
        const sent = agent.sendMessage('hello', { resourceId: RESOURCE, threadId });
        const accepted = await sent.accepted;
        expectAction(accepted, 'wake');
        await rec.until((c) => c.type === 'finish', 'finish');
      }),
  },
  {
    name: 'signal-deliver-during-run',
    description:
      "sendMessage('weather in Oslo') wakes a run; right after its first chunk: sendMessage('also Rome please') (ifActive deliver), sendSignal({ type: 'notification', contents: 'Build #42 finished', attributes: { source: 'ci' } }) and queueMessage('queued follow-up'). The two delivered signals are drained after the tool step; the queued message starts the next run.",
    source: 'subscription',
    run: ({ agent }) =>
      recordThread(agent, 'signal-deliver', async (rec, threadId) => {
        const target = { resourceId: RESOURCE, threadId };
        const first = agent.sendMessage('weather in Oslo', target);
        await rec.until(() => true, 'the first chunk');
        const steer = agent.sendMessage('also Rome please', target);
        const notify = agent.sendSignal({ type: 'notification', contents: 'Build #42 finished', attributes: { source: 'ci' } }, target);
        const queued = agent.queueMessage('queued follow-up', target);
        const woke = expectAction(await first.accepted, 'wake');
        const delivered = [expectAction(await steer.accepted, 'deliver'), expectAction(await notify.accepted, 'deliver')];
        for (const d of delivered) if (d.runId !== woke.runId) throw new Error(`delivered to ${d.runId}, not the active run ${woke.runId}`);
        const next = expectAction(await queued.accepted, 'deliver');
        if (next.runId === woke.runId) throw new Error('queueMessage joined the active run instead of queuing a new one');
        await rec.until((c) => c.type === 'finish' && c.runId === next.runId, `finish of the queued run ${next.runId}`);
      }),
  },
  {
    name: 'signal-persist',
    description:
      "sendSignal({ type: 'reactive', contents: 'fyi' }, { ifIdle: { behavior: 'persist' } }) on an idle thread: stored without a model run; subscribers get a synthetic start / data-signal / finish.",
    source: 'subscription',
    run: ({ agent }) =>
      recordThread(agent, 'signal-persist', async (rec, threadId) => {
        const sent = agent.sendSignal({ type: 'reactive', contents: 'fyi' }, { resourceId: RESOURCE, threadId, ifIdle: { behavior: 'persist' } });
        expectAction(await sent.accepted, 'persist');
        await sent.persisted;
        await rec.until((c) => c.type === 'finish', 'finish');
      }),
  },
  {
    name: 'signal-approval',
    description:
      "sendMessage('delete a.txt') wakes a run that suspends on tool-call-approval; then sendToolApproval({ threadId, resourceId, approved: true, toolCallId }): the same run continues on the subscription (no new start) until finish.",
    source: 'subscription',
    run: ({ agent }) =>
      recordThread(agent, 'signal-approval', async (rec, threadId) => {
        const sent = agent.sendMessage('delete a.txt', { resourceId: RESOURCE, threadId });
        expectAction(await sent.accepted, 'wake');
        const approval = await rec.until((c) => c.type === 'tool-call-approval', 'tool-call-approval');
        const toolCallId = approval.payload?.toolCallId;
        if (typeof toolCallId !== 'string') throw new Error('tool-call-approval without toolCallId');
        const result = await agent.sendToolApproval({ threadId, resourceId: RESOURCE, approved: true, toolCallId });
        if (!result.accepted) throw new Error('sendToolApproval was not accepted');
        await rec.until((c, all) => c.type === 'finish' && all.includes(approval), 'finish after the approval');
      }),
  },
  {
    name: 'signal-abort',
    description:
      "sendMessage('hello one two … twelve') on a demo agent with delayMs 20; sub.abort() right after the first text-delta: the subscription gets an abort chunk (recorded for 200 ms more to show nothing follows).",
    source: 'subscription',
    run: ({ slowAgent }) =>
      recordThread(slowAgent, 'signal-abort', async (rec, threadId) => {
        const sent = slowAgent.sendMessage('hello one two three four five six seven eight nine ten eleven twelve', {
          resourceId: RESOURCE,
          threadId,
        });
        expectAction(await sent.accepted, 'wake');
        await rec.until((c) => c.type === 'text-delta', 'the first text-delta');
        if (!rec.sub.abort()) throw new Error('sub.abort() returned false');
        await rec.until((c) => c.type === 'abort', 'abort');
        await sleep(200);
      }),
  },
  {
    name: 'signal-model-error',
    description:
      "sendMessage('please fail') wakes a run whose model throws: the subscription gets an error chunk (recorded for 200 ms more to show whether step-finish/finish follow).",
    source: 'subscription',
    run: ({ agent }) =>
      recordThread(agent, 'signal-error', async (rec, threadId) => {
        const sent = agent.sendMessage('please fail', { resourceId: RESOURCE, threadId });
        expectAction(await sent.accepted, 'wake');
        await rec.until((c) => c.type === 'error', 'error');
        await sleep(200);
      }),
  },
];

type Accepted = { action: string; runId?: string };
/** Asserts the routing decision of a send (`accepted` resolves at decision time). */
function expectAction<A extends Accepted>(accepted: A, action: string): A & { runId: string } {
  if (accepted.action !== action) throw new Error(`expected accepted.action '${action}', got ${JSON.stringify({ ...accepted, output: undefined })}`);
  return accepted as A & { runId: string };
}

// ---------------------------------------------------------------------------------------------
// Workflow runs: their own stream (`run.stream()` / `resumeStream()`), and the result the
// translator ends the run from. Written to `test/fixtures/workflow-chunks/`.

const WORKFLOW_OUT_DIR = join(ROOT, 'test', 'fixtures', 'workflow-chunks');

interface WorkflowScenario {
  name: string;
  description: string;
  run: (mastra: Mastra) => Promise<{ chunks: Chunk[]; result: unknown }>;
}

/** Streams a run of `workflowId` (or resumes `resume.runId`) and collects its chunks and result. */
async function streamWorkflow(
  mastra: Mastra,
  workflowId: string,
  how: { inputData: unknown; runId?: string } | { resume: { runId: string; step: string[]; resumeData: unknown } },
  onChunk?: (chunk: Chunk, cancel: () => Promise<void>) => void,
): Promise<{ chunks: Chunk[]; result: unknown; runId: string }> {
  const workflow = mastra.getWorkflow(workflowId);
  const runId = 'resume' in how ? how.resume.runId : (how.runId ?? newThread(`${workflowId}-run`));
  const run = await workflow.createRun({ runId, resourceId: RESOURCE });
  const output =
    'resume' in how
      ? run.resumeStream({ step: how.resume.step, resumeData: how.resume.resumeData, outputOptions: { includeState: true } })
      : run.stream({ inputData: how.inputData, outputOptions: { includeState: true } });
  const chunks = await collect(output.fullStream as AsyncIterable<unknown>, (chunk) => onChunk?.(chunk, () => run.cancel()));
  return { chunks, result: toPlain(await output.result), runId };
}

const WORKFLOW_SCENARIOS: WorkflowScenario[] = [
  {
    name: 'workflow-suspend',
    description: "draft-and-send with { topic: 'tea' }: draft (writes its text, counts a draft in the state), then review suspends.",
    run: (mastra) => streamWorkflow(mastra, DEMO_WORKFLOW_ID, { inputData: { topic: 'tea' } }),
  },
  {
    name: 'workflow-resume',
    description: 'draft-and-send suspended on review, resumed with { approved: true, edit }: review, then send (writes custom data), the result.',
    run: async (mastra) => {
      const first = await streamWorkflow(mastra, DEMO_WORKFLOW_ID, { inputData: { topic: 'tea' } });
      return streamWorkflow(mastra, DEMO_WORKFLOW_ID, {
        resume: { runId: first.runId, step: ['review'], resumeData: { approved: true, edit: 'Tea, edited.' } },
      });
    },
  },
  {
    name: 'workflow-fail',
    description: 'always-fails: its one step throws; the run fails.',
    run: (mastra) => streamWorkflow(mastra, 'always-fails', { inputData: { topic: 'tea' } }),
  },
  {
    name: 'workflow-shapes',
    description: 'shapes: parallel steps, a branch, then draft-and-send nested, which suspends (nested steps by their dotted path).',
    run: (mastra) => streamWorkflow(mastra, 'shapes', { inputData: { topic: 'tea' } }),
  },
  {
    name: 'workflow-loops',
    description:
      "loops with { topic: 'green tea' }: split, a foreach over the two words (shout), count, a dountil loop (up, until n >= 4), then a sleep of 10 ms.",
    run: (mastra) => streamWorkflow(mastra, 'loops', { inputData: { topic: 'green tea' } }),
  },
  {
    name: 'workflow-agent-step',
    description: 'agent-step: a step writes a prompt, then the demo agent runs as a step and streams its answer.',
    run: (mastra) => streamWorkflow(mastra, 'agent-step', { inputData: { topic: 'tea' } }),
  },
  {
    name: 'workflow-cancel',
    description: 'draft-and-send with 200 ms steps, cancelled as its first step starts.',
    run: (mastra) =>
      streamWorkflow(mastra, `${DEMO_WORKFLOW_ID}-slow`, { inputData: { topic: 'tea' } }, (chunk, cancel) => {
        if (chunk.type === 'workflow-step-start') void cancel();
      }),
  },
];

async function recordWorkflows(only: Set<string>, storage: InMemoryStore, demo: Agent): Promise<{ lines: string[]; failed: number }> {
  const slow = createDemoWorkflow({ delayMs: 200, id: `${DEMO_WORKFLOW_ID}-slow` });
  const mastra = new Mastra({
    agents: { demo },
    workflows: {
      [DEMO_WORKFLOW_ID]: createDemoWorkflow(),
      [`${DEMO_WORKFLOW_ID}-slow`]: slow,
      'always-fails': failingWorkflow(),
      shapes: shapesWorkflow(),
      loops: loopsWorkflow(),
      'agent-step': agentStepWorkflow(demo),
    },
    storage,
    logger: false,
  });
  await mkdir(WORKFLOW_OUT_DIR, { recursive: true });
  const lines: string[] = [];
  let failed = 0;
  for (const scenario of WORKFLOW_SCENARIOS) {
    if (only.size > 0 && !only.has(scenario.name)) continue;
    try {
      const { chunks, result } = await withTimeout(scenario.run(mastra), SCENARIO_TIMEOUT_MS, `scenario ${scenario.name}`);
      const fixture = { scenario: scenario.name, description: scenario.description, source: 'workflow', chunks, result };
      await writeFile(join(WORKFLOW_OUT_DIR, `${scenario.name}.json`), `${JSON.stringify(fixture, null, 2)}\n`);
      lines.push(`${scenario.name}: ${chunks.length} chunks: ${typeSequence(chunks)}; ${(result as { status?: string }).status}`);
    } catch (error) {
      failed += 1;
      lines.push(`${scenario.name}: FAILED: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return { lines, failed };
}

// ---------------------------------------------------------------------------------------------
// Main

async function main(): Promise<void> {
  const only = new Set(process.argv.slice(2));
  const names = [...SCENARIOS, ...WORKFLOW_SCENARIOS].map((s) => s.name);
  const unknown = [...only].filter((name) => !names.includes(name));
  if (unknown.length > 0) throw new Error(`unknown scenario(s): ${unknown.join(', ')}; known: ${names.join(', ')}`);
  const storage = new InMemoryStore();
  const demo = createDemoAgent({ storage, delayMs: 0, slowTaskMs: 100 });
  const guarded = createGuardedAgent(storage);
  const mastra = new Mastra({ agents: { demo, guarded }, storage, logger: false, backgroundTasks: { enabled: true } });
  const slowStorage = new InMemoryStore();
  const slowDemo = createDemoAgent({ storage: slowStorage, delayMs: 20, slowTaskMs: 100 });
  const slowMastra = new Mastra({ agents: { demo: slowDemo }, storage: slowStorage, logger: false });
  const ctx: Context = { agent: mastra.getAgent('demo'), slowAgent: slowMastra.getAgent('demo'), guardedAgent: mastra.getAgent('guarded') };

  await mkdir(OUT_DIR, { recursive: true });
  const lines: string[] = [];
  let failed = 0;
  for (const scenario of SCENARIOS) {
    if (only.size > 0 && !only.has(scenario.name)) continue;
    try {
      const chunks = await withTimeout(scenario.run(ctx), SCENARIO_TIMEOUT_MS, `scenario ${scenario.name}`);
      const fixture: Fixture = {
        scenario: scenario.name,
        description: scenario.description,
        source: scenario.source,
        chunks,
      };
      await writeFile(join(OUT_DIR, `${scenario.name}.json`), `${JSON.stringify(fixture, null, 2)}\n`);
      lines.push(`${scenario.name}: ${chunks.length} chunks: ${typeSequence(chunks)}`);
    } catch (error) {
      failed += 1;
      lines.push(`${scenario.name}: FAILED: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const workflows = await recordWorkflows(only, storage, ctx.agent);
  lines.push(...workflows.lines);
  failed += workflows.failed;
  console.log(lines.join('\n'));
  process.exit(failed > 0 ? 1 : 0);
}

await main();
