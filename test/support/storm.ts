import type { RunAgentInput } from '@ag-ui/client';
import { checkRun } from './agui.js';
import { killIfRunning, startServerProcess, type ServerProcess } from './process.js';
import { sseEvents } from './run.js';
import { isolatedPostgres, isolatedRedisPrefix } from './services.js';
import { isTerminal, openSse, verifyThreadEvents, type AnyEvent, type IdEvent, type SseReader } from './sse.js';
import { errorMessage } from '../../src/text.js';

// Storms: many threads steered at once across the processes of a cluster, with every kind of input
// (runs that enqueue, interrupt or are refused, messages sent and queued, aborts, approvals
// answered, declined, left pending or aborted), then checked against the bridge's promises
// (docs/api.md "Acknowledged means committed"): every acknowledged message stored once and answered once, in the order it was
// acknowledged; no answer nobody asked for; every bracket a follower saw closed; no thread wedged.
// The harness counts what it finds and shows examples; it asserts nothing itself, so a test and
// the soak script (scripts/soak.ts) decide what fails.

/** One process of the cluster, by the name the report uses for it. */
export interface StormNode {
  name: string;
  /** Base URL, prefix included (`http://127.0.0.1:41234/agui`). */
  url: string;
}

/** Two bridge processes on an isolated Redis prefix and PostgreSQL schema. */
export interface StormCluster {
  nodes: StormNode[];
  processes: ServerProcess[];
  /** Kills the processes, drops the schema and the keys. */
  close(): Promise<void>;
}

/** The demo model's delay between streamed parts the storms use (ms): runs overlap, and last. */
export const STORM_DELAY_MS = '8';

/**
 * Starts `count` standalone bridge processes (A, B, …) on an isolated PostgreSQL schema and Redis
 * prefix, the first alone (it creates the tables). No vitest in here: the soak script uses it.
 */
export async function startStormCluster(label = 'storm', env: Record<string, string> = {}, count = 2): Promise<StormCluster> {
  const [db, redis] = await Promise.all([isolatedPostgres(label), isolatedRedisPrefix(label)]);
  const processes: ServerProcess[] = [];
  // The callers' caps (docs/security.md#limits) are not what a storm is about: off, so that a `429`
  // never stands in for an answer of the thread.
  const limits = { RATE_LIMIT_PER_MINUTE: '0', MAX_RUNS_PER_RESOURCE: '0', MAX_STREAMS_PER_RESOURCE: '0' };
  const shared = { DATABASE_URL: db.url, REDIS_URL: redis.url, REDIS_PREFIX: redis.prefix, DEMO_DELAY_MS: STORM_DELAY_MS, ...limits, ...env };
  const close = async () => {
    for (const p of processes) killIfRunning(p);
    await Promise.all(processes.map((p) => p.exited));
    await Promise.all([db.cleanup(), redis.cleanup()]);
  };
  try {
    for (let i = 0; i < count; i++) processes.push(await startServerProcess(shared));
  } catch (error) {
    await close();
    throw error;
  }
  return { nodes: processes.map((p, i) => ({ name: String.fromCharCode(65 + i), url: p.url })), processes, close };
}

// ---------------------------------------------------------------------------------------------
// Options, records and the report

export interface StormOptions {
  nodes: StormNode[];
  /** Threads driven at once. */
  threads: number;
  /** Steps per thread. */
  steps: number;
  /** The PRNG's seed (printed; the same seed replays the same choices). Random when absent. */
  seed?: number;
  /** Tells thread ids of several storms on one cluster apart (the soak's round). */
  round?: number;
  /** Each thread acts as `<resourceId>-t<n>` (a user of its own); default `storm-user`. */
  resourceId?: string;
  /** The longest pause between two steps of a thread (ms); default 120. */
  maxPauseMs?: number;
  /** The chance, per step, that a thread's follower leaves and comes back with `Last-Event-ID`; default 0.08. */
  reconnectChance?: number;
  /** How long history must stay unchanged, every run closed, before a thread counts as idle (ms); default 2500. */
  settleMs?: number;
  /** How long a thread may take to become idle after the storm (ms); default 90 s. */
  settleTimeoutMs?: number;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

/** What the checks count as a failure of the bridge. */
export const FAILURE_KINDS = [
  'lost',
  'duplicated',
  'outOfOrder',
  'unasked',
  'unanswered',
  'openBrackets',
  'followerMissedRun',
  'wedged',
  'serverErrors',
] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

/** What the checks count, and explain, but do not hold against the bridge. */
export const INFO_KINDS = ['cutBeforeAnswering', 'answeredTogether', 'outOfSteps', 'snapshotOnReconnect'] as const;
export type InfoKind = (typeof INFO_KINDS)[number];

export interface StormExample {
  kind: FailureKind | InfoKind;
  threadId: string;
  seed: number;
  /** What was found. */
  detail: string;
  /** The thread's steps, in order (`#n +ms node op → answer`). */
  ops: string[];
  /** The thread's stored history, one line per row (`role: text`). */
  history: string[];
}

export interface StormReport {
  seed: number;
  threads: number;
  steps: number;
  nodes: StormNode[];
  durationMs: number;
  /** Counts of the steps taken, by operation and answer (`run/enqueue 200`, `send-message 202 deliver`, …). */
  ops: Record<string, number>;
  acknowledged: number;
  refused: Record<string, number>;
  failures: Record<FailureKind, number>;
  info: Record<InfoKind, number>;
  /** Up to `EXAMPLES` per kind. */
  examples: StormExample[];
}

/** How many examples the report keeps per kind. */
export const EXAMPLES = 10;

type Multitask = 'enqueue' | 'interrupt' | 'reject';

/** A message the bridge acknowledged: a `/run` that sent `RUN_STARTED`, a send/queue answered `wake`/`deliver`. */
interface Ack {
  seq: number;
  kind: 'run' | 'send' | 'queue';
  text: string;
  node: string;
  multitask?: Multitask;
  action?: string;
  /** The run it started, joined or will start. */
  runId?: string;
  /** Its message id (`/run`) or signal id. */
  id?: string;
  /** The path of `delete <path>`, for a delete run. */
  path?: string;
}

interface Approval {
  toolCallId: string;
  runId: string;
  path: string;
  choice: 'approve' | 'decline' | 'pending' | 'abort';
  status?: number;
  /** Set once acknowledged input or an abort came after a call left pending. */
  superseded?: boolean;
}

interface RunStream {
  runId: string;
  text: string;
  events: AnyEvent[];
  ended: boolean;
  error?: string;
  done: Promise<void>;
  controller: AbortController;
}

interface Segment {
  node: string;
  reader: SseReader;
  openedWith?: number;
  closedByUs: boolean;
}

/** A finding before it becomes a count and maybe an example. */
interface Finding {
  kind: FailureKind | InfoKind;
  detail: string;
}

/** A stored row, as the checks read it. */
interface Row {
  id: string;
  role: string;
  /** Each text part (a string content is one). */
  texts: string[];
  /** Paths of `delete_file` calls in the row. */
  deletePaths: string[];
  /** Any tool invocation in the row. */
  tools: number;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

/** mulberry32: a small seeded PRNG, enough to replay a storm's choices. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `work`, or `undefined` once `ms` passed. */
async function within<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

interface Answer {
  status: number;
  body: any;
  /** Set when no answer came (network error or timeout): `status` is then 0. */
  error?: string;
}

async function request(url: string, init: { method?: string; body?: unknown; timeoutMs?: number } = {}): Promise<Answer> {
  try {
    const res = await fetch(url, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: { 'content-type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: AbortSignal.timeout(init.timeoutMs ?? 35_000),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: the text is the answer
    }
    return { status: res.status, body };
  } catch (error) {
    return { status: 0, body: undefined, error: String((error as Error)?.message ?? error) };
  }
}

const short = (value: string, max = 90) => (value.length > max ? `${value.slice(0, max)}…` : value);

function rowOf(message: { id: string; role: string; content: unknown }): Row {
  const texts: string[] = [];
  const deletePaths: string[] = [];
  let tools = 0;
  if (typeof message.content === 'string') texts.push(message.content);
  else if (message.content && typeof message.content === 'object') {
    const content = message.content as { parts?: any[]; content?: unknown };
    for (const part of content.parts ?? []) {
      if (part?.type === 'text' && typeof part.text === 'string') texts.push(part.text);
      if (part?.type === 'tool-invocation') {
        tools++;
        const call = part.toolInvocation ?? {};
        if (call.toolName === 'delete_file' && typeof call.args?.path === 'string') deletePaths.push(call.args.path);
      }
    }
    if (texts.length === 0 && typeof content.content === 'string' && content.content) texts.push(content.content);
  }
  // The demo model never writes a line break: one in a stored text joins the answers of two steps.
  const lines = texts.flatMap((t) => t.split('\n'));
  return { id: message.id, role: message.role, texts: lines.filter((t) => t.trim() !== ''), deletePaths, tools };
}

function historyLines(rows: Row[]): string[] {
  return rows.map((r, i) => {
    const tools = r.tools > 0 ? ` [${r.tools} tool call${r.tools > 1 ? 's' : ''}${r.deletePaths.length ? `: delete ${r.deletePaths.join(', ')}` : ''}]` : '';
    return `${String(i).padStart(3)} ${r.role}: ${short(r.texts.join(' | '), 110)}${tools}`;
  });
}

// ---------------------------------------------------------------------------------------------
// One thread of the storm

export class StormThread {
  readonly id: string;
  readonly resourceId: string;
  readonly rng: () => number;
  readonly acks: Ack[] = [];
  readonly refusals: Array<{ op: string; text?: string; status: number; code?: string }> = [];
  readonly approvals: Approval[] = [];
  readonly runs: RunStream[] = [];
  readonly segments: Segment[] = [];
  readonly ops: string[] = [];
  readonly findings: Finding[] = [];
  readonly opCounts: Record<string, number> = {};
  /** Texts sent but not acknowledged (refused, or no answer): an answer to one is unasked. */
  readonly refusedTexts = new Set<string>();
  rows: Row[] = [];
  private n = 0;
  private readonly started = Date.now();

  constructor(
    readonly index: number,
    readonly seed: number,
    readonly storm: { nodes: StormNode[]; resourceId: string; round: number },
  ) {
    this.id = `storm-${seed}-${storm.round}-t${index}`;
    this.resourceId = `${storm.resourceId}-t${index}`;
    this.rng = prng((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.rng() * items.length)];
  }

  node(): StormNode {
    return this.pick(this.storm.nodes);
  }

  /** A unique text: `m<thread>-<n> w1 … wk` (3 to 20 words in all). */
  text(words = 3 + Math.floor(this.rng() * 18)): string {
    const n = ++this.n;
    return [`m${this.index}-${n}`, ...Array.from({ length: words - 1 }, (_, i) => `w${i + 1}`)].join(' ');
  }

  note(node: string, op: string, answer: string): void {
    this.ops.push(`#${this.ops.length + 1} +${Date.now() - this.started}ms ${node} ${op} → ${answer}`);
  }

  count(key: string): void {
    this.opCounts[key] = (this.opCounts[key] ?? 0) + 1;
  }

  find(kind: FailureKind | InfoKind, detail: string): void {
    this.findings.push({ kind, detail });
  }

  private ack(ack: Omit<Ack, 'seq'>): Ack {
    const full = { ...ack, seq: this.acks.length };
    this.acks.push(full);
    for (const approval of this.approvals) if (approval.choice === 'pending') approval.superseded = true;
    return full;
  }

  private url(node: StormNode, path: string): string {
    return `${node.url}/threads/${this.id}${path}`;
  }

  // -- the follower ----------------------------------------------------------------------------

  get follower(): Segment | undefined {
    return this.segments.at(-1);
  }

  /** The id a reconnect resumes from: the last event id any segment saw. */
  private lastId(): number | undefined {
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const id = this.segments[i].reader.events.at(-1)?.id;
      if (id !== undefined && Number.isFinite(id)) return id;
      if (this.segments[i].openedWith !== undefined) return this.segments[i].openedWith;
    }
    return undefined;
  }

  async openFollower(node = this.node()): Promise<void> {
    const previous = this.follower;
    if (previous && !previous.reader.end) {
      previous.closedByUs = true;
      await previous.reader.close();
    }
    if (previous?.reader.end && !previous.closedByUs) {
      this.find(
        'openBrackets',
        `the follower on ${previous.node} ended before the client left (${previous.reader.end.kind}: ${errorMessage(previous.reader.end.error ?? '')})`,
      );
      previous.closedByUs = true;
    }
    const lastEventId = this.lastId();
    const query = `?resourceId=${this.resourceId}`;
    for (let attempt = 0; ; attempt++) {
      try {
        const reader = await openSse(this.url(node, `/events${query}`), lastEventId === undefined ? {} : { lastEventId });
        if (reader.status !== 200) {
          const body = await reader.response.text().catch(() => '');
          throw new Error(`status ${reader.status} ${short(body)}`);
        }
        const connected = await within(reader.waitForComment('connected'), 10_000);
        if (connected === undefined && !reader.comments.includes('connected')) throw new Error('no ": connected" within 10 s');
        this.segments.push({ node: node.name, reader, openedWith: lastEventId, closedByUs: false });
        this.note(node.name, `follow${lastEventId === undefined ? '' : ` Last-Event-ID ${lastEventId}`}`, 'connected');
        return;
      } catch (error) {
        this.note(node.name, 'follow', `failed: ${String(error)}`);
        if (attempt >= 2) {
          this.find('serverErrors', `the events stream on ${node.name} could not be opened: ${String(error)}`);
          return;
        }
        await sleep(500);
      }
    }
  }

  /** Whether the current follower has a bracket open (or has not caught up with a run it must see). */
  followerBusy(): boolean {
    const events = this.follower?.reader.events ?? [];
    const last = [...events].reverse().find((e) => e.event.type === 'RUN_STARTED' || isTerminal(e.event));
    return last !== undefined && last.event.type === 'RUN_STARTED';
  }

  /** The events of every segment, one stream as a client that reconnects with `Last-Event-ID` keeps it. */
  followerStreams(): Array<{ events: IdEvent[]; from: string }> {
    const streams: Array<{ events: IdEvent[]; from: string }> = [];
    for (const [i, segment] of this.segments.entries()) {
      const events = segment.reader.events;
      const snapshot = events[0]?.event.type === 'RUN_STARTED' && events[1]?.event.type === 'MESSAGES_SNAPSHOT';
      if (i === 0 || snapshot || streams.length === 0) {
        if (i > 0 && snapshot) this.find('snapshotOnReconnect', `segment ${i} on ${segment.node} (Last-Event-ID ${segment.openedWith}) began with a snapshot`);
        streams.push({ events: [...events], from: `${segment.node}#${i}` });
      } else {
        streams.at(-1)!.events.push(...events);
        streams.at(-1)!.from += `+${segment.node}#${i}`;
      }
    }
    return streams;
  }

  // -- operations ------------------------------------------------------------------------------

  /** A `/run` with one new user message; acknowledged once it sent `RUN_STARTED`. */
  async run(node: StormNode, text: string, multitask: Multitask, op = 'run'): Promise<{ ack?: Ack; stream?: RunStream }> {
    const runId = `${this.id}-r${this.runs.length + this.refusals.length + 1}-${Math.floor(this.rng() * 1e6)}`;
    const input: RunAgentInput = {
      threadId: this.id,
      runId,
      messages: [{ id: `${runId}-u`, role: 'user', content: text }],
      tools: [],
      context: [],
      state: {},
      forwardedProps: { resourceId: this.resourceId, multitask },
    };
    const label = `${op}/${multitask} "${short(text, 40)}"`;
    const controller = new AbortController();
    const headers = setTimeout(() => controller.abort(), 40_000);
    let res: Response;
    try {
      res = await fetch(`${node.url}/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify(input),
        signal: controller.signal,
      });
    } catch (error) {
      clearTimeout(headers);
      this.refusedTexts.add(text);
      this.count(`${op}/${multitask} no answer`);
      this.note(node.name, label, `no answer: ${String(error)}`);
      this.find('serverErrors', `${label} on ${node.name}: no answer within 40 s (${String(error)})`);
      return {};
    }
    clearTimeout(headers);
    if (res.status !== 200) {
      const body = (await res.json().catch(() => ({}))) as { code?: string; error?: string };
      this.refusedTexts.add(text);
      this.refusals.push({ op: `${op}/${multitask}`, text, status: res.status, code: body.code });
      this.count(`${op}/${multitask} ${res.status} ${body.code ?? ''}`.trim());
      this.note(node.name, label, `${res.status} ${body.code ?? ''} ${short(body.error ?? '', 60)}`);
      if (res.status >= 500 && res.status !== 503) this.find('serverErrors', `${label} on ${node.name}: ${res.status} ${JSON.stringify(body)}`);
      return {};
    }
    const stream: RunStream = { runId, text, events: [], ended: false, done: Promise.resolve(), controller };
    this.runs.push(stream);
    const iterator = sseEvents(res.body!)[Symbol.asyncIterator]();
    const first = await within(iterator.next(), 15_000).catch((error: unknown) => ({ error }));
    if (!first || 'error' in first || first.done || first.value.type !== 'RUN_STARTED') {
      const what = !first ? 'no event within 15 s' : 'error' in first ? String(first.error) : first.done ? 'empty stream' : `first event ${first.value.type}`;
      stream.ended = true;
      stream.error = what;
      controller.abort();
      this.refusedTexts.add(text);
      this.count(`${op}/${multitask} 200 without RUN_STARTED`);
      this.note(node.name, label, `200 but ${what}`);
      this.find('serverErrors', `${label} on ${node.name}: 200 but ${what}`);
      return {};
    }
    stream.events.push(first.value);
    const path = /delete\s+(\S+)/.exec(text)?.[1];
    const ack = this.ack({ kind: 'run', text, node: node.name, multitask, runId, id: `${runId}-u`, ...(path && { path }) });
    this.count(`${op}/${multitask} 200`);
    this.note(node.name, label, `200 RUN_STARTED ${runId}`);
    stream.done = (async () => {
      try {
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) stream.events.push(next.value);
      } catch (error) {
        stream.error = String(error);
      } finally {
        stream.ended = true;
      }
    })();
    return { ack, stream };
  }

  /** `send-message` or `queue-message`; acknowledged by `202` with `wake` or `deliver`. */
  async signal(node: StormNode, route: 'send-message' | 'queue-message', text: string): Promise<void> {
    const answer = await request(this.url(node, `/${route}`), { body: { resourceId: this.resourceId, message: text } });
    const label = `${route} "${short(text, 40)}"`;
    const action = answer.body?.action as string | undefined;
    if (answer.status === 202 && (action === 'wake' || action === 'deliver')) {
      this.ack({ kind: route === 'send-message' ? 'send' : 'queue', text, node: node.name, action, runId: answer.body.runId, id: answer.body.signalId });
      this.count(`${route} 202 ${action}`);
      this.note(node.name, label, `202 ${action} run ${answer.body.runId} signal ${answer.body.signalId}`);
      return;
    }
    this.refusedTexts.add(text);
    this.refusals.push({ op: route, text, status: answer.status, code: answer.body?.code ?? action });
    this.count(`${route} ${answer.status} ${answer.body?.code ?? action ?? answer.error ?? ''}`.trim());
    this.note(node.name, label, `${answer.status} ${JSON.stringify(answer.body ?? answer.error)}`);
    if (answer.status === 0 || (answer.status >= 500 && answer.status !== 503)) {
      this.find('serverErrors', `${label} on ${node.name}: ${answer.status} ${JSON.stringify(answer.body ?? answer.error)}`);
    }
  }

  async abort(node: StormNode): Promise<void> {
    const answer = await request(this.url(node, '/abort'), { body: { resourceId: this.resourceId } });
    this.count(`abort ${answer.status}${answer.status === 200 ? ` ${answer.body?.aborted}` : ''}`);
    this.note(node.name, 'abort', `${answer.status} ${JSON.stringify(answer.body ?? answer.error)}`);
    if (answer.status === 200) for (const approval of this.approvals) if (approval.choice === 'pending') approval.superseded = true;
    if (answer.status === 0 || (answer.status >= 500 && answer.status !== 503))
      this.find('serverErrors', `abort on ${node.name}: ${answer.status} ${JSON.stringify(answer.body ?? answer.error)}`);
  }

  /** `delete f<k>.txt`: a run that stops on an approval, then approved, declined, left pending or aborted. */
  async deleteFlow(node: StormNode, multitask: Multitask): Promise<void> {
    const n = ++this.n;
    const path = `f${n}.txt`;
    const text = `m${this.index}-${n} delete ${path}`;
    const { stream } = await this.run(node, text, multitask, 'delete');
    if (!stream) return;
    await within(stream.done, 30_000);
    const terminal = stream.events.at(-1);
    const interrupt = terminal?.type === 'RUN_FINISHED' ? (terminal.outcome?.interrupts?.[0] as { toolCallId?: string } | undefined) : undefined;
    if (!interrupt?.toolCallId) {
      this.note(node.name, `delete ${path}`, `run ended ${terminal?.type ?? 'not'} ${JSON.stringify(terminal?.outcome ?? '')}: no approval to answer`);
      return;
    }
    const roll = this.rng();
    const choice: Approval['choice'] = roll < 0.35 ? 'approve' : roll < 0.6 ? 'decline' : roll < 0.85 ? 'pending' : 'abort';
    const approval: Approval = { toolCallId: interrupt.toolCallId, runId: stream.runId, path, choice };
    this.approvals.push(approval);
    if (choice === 'pending') {
      this.count('approval left pending');
      this.note('-', `approval ${interrupt.toolCallId}`, 'left pending');
      return;
    }
    await this.pause();
    const to = this.node();
    if (choice === 'abort') {
      await this.abort(to);
      return;
    }
    const body = {
      resourceId: this.resourceId,
      toolCallId: interrupt.toolCallId,
      approved: choice === 'approve',
      ...(choice === 'decline' && { reason: `keep ${path}` }),
    };
    const answer = await request(this.url(to, '/tool-approval'), { body });
    approval.status = answer.status;
    this.count(`tool-approval ${choice} ${answer.status}`);
    this.note(to.name, `tool-approval ${choice} ${interrupt.toolCallId}`, `${answer.status} ${JSON.stringify(answer.body ?? answer.error)}`);
    if (answer.status === 0 || (answer.status >= 500 && answer.status !== 503))
      this.find('serverErrors', `tool-approval on ${to.name}: ${answer.status} ${JSON.stringify(answer.body ?? answer.error)}`);
  }

  async pause(): Promise<void> {
    const roll = this.rng();
    await sleep(roll < 0.15 ? 0 : roll < 0.9 ? Math.floor(this.rng() * this.maxPause) : 300 + Math.floor(this.rng() * 400));
  }

  maxPause = 120;

  /** One random step. */
  async step(reconnectChance: number): Promise<void> {
    if (this.rng() < reconnectChance) await this.openFollower();
    const node = this.node();
    const roll = this.rng();
    const multitask = this.pick(['enqueue', 'interrupt', 'reject'] as const);
    if (roll < 0.3) await this.run(node, this.text(), multitask);
    else if (roll < 0.5) await this.signal(node, 'send-message', this.text());
    else if (roll < 0.7) await this.signal(node, 'queue-message', this.text());
    else if (roll < 0.8) await this.abort(node);
    else await this.deleteFlow(node, multitask);
    await this.pause();
  }

  // -- the end: idle, probe, history ----------------------------------------------------------

  async history(node: StormNode): Promise<Array<{ id: string; role: string; content: unknown }> | undefined> {
    const answer = await request(this.url(node, `/messages?resourceId=${this.resourceId}`), { timeoutMs: 10_000 });
    return answer.status === 200 && Array.isArray(answer.body) ? answer.body : undefined;
  }

  /**
   * Polls until no `/run` of the harness streams, the follower has no bracket open and the history
   * stayed the same for `settleMs`; false if that does not happen within `timeoutMs`.
   */
  async settle(settleMs: number, timeoutMs: number): Promise<string | undefined> {
    const deadline = Date.now() + timeoutMs;
    let signature = '';
    let stableSince = Date.now();
    let why = '';
    while (Date.now() < deadline) {
      if (this.follower?.reader.end) await this.openFollower();
      const rows = await this.history(this.node());
      const next = rows ? JSON.stringify(rows.map((r) => [r.id, JSON.stringify(r.content).length])) : 'unreadable';
      if (next !== signature) {
        signature = next;
        stableSince = Date.now();
      }
      const streaming = this.runs.filter((r) => !r.ended).map((r) => r.runId);
      why =
        streaming.length > 0
          ? `runs still streaming: ${streaming.join(', ')}`
          : this.followerBusy()
            ? 'the follower has a bracket open'
            : rows
              ? 'history still changing'
              : 'history unreadable';
      if (streaming.length === 0 && !this.followerBusy() && rows && Date.now() - stableSince >= settleMs) return undefined;
      await sleep(250);
    }
    return why;
  }

  async pendingApprovals(): Promise<Array<{ toolCallId: string }> | undefined> {
    const answer = await request(this.url(this.node(), `/pending-approvals?resourceId=${this.resourceId}`), { timeoutMs: 10_000 });
    return answer.status === 200 && Array.isArray(answer.body) ? answer.body : undefined;
  }

  /** After the storm: idle, then a `/run` with multitask reject must succeed within 10 s, then idle again. */
  async finish(settleMs: number, settleTimeoutMs: number): Promise<void> {
    const busy = await this.settle(settleMs, settleTimeoutMs);
    if (busy) this.find('wedged', `not idle ${settleTimeoutMs / 1000} s after the storm: ${busy}`);
    const expected = new Set(this.approvals.filter((a) => a.choice === 'pending' && !a.superseded).map((a) => a.toolCallId));
    const listed = await this.pendingApprovals();
    for (const { toolCallId } of listed ?? []) {
      if (!expected.has(toolCallId)) {
        const approval = this.approvals.find((a) => a.toolCallId === toolCallId);
        this.find(
          'wedged',
          `approval ${toolCallId} still listed as pending though ${approval ? `it was ${approval.choice === 'pending' ? 'superseded by later input' : `${approval.choice}d (${approval.status ?? 'no answer'})`}` : 'no step made it'}`,
        );
      }
    }
    const deadline = Date.now() + 10_000;
    let probe: { ack?: Ack; stream?: RunStream } = {};
    let attempts = 0;
    const text = this.text(5);
    while (Date.now() < deadline) {
      attempts++;
      probe = await this.run(this.node(), text, 'reject', 'probe');
      if (probe.ack) break;
      // A refused probe stored nothing: the same text may be sent again.
      this.refusedTexts.delete(text);
      await sleep(250);
    }
    if (!probe.ack) {
      this.refusedTexts.add(text);
      this.find('wedged', `a /run with multitask reject was refused for 10 s (${attempts} tries; last: ${JSON.stringify(this.refusals.at(-1))})`);
    }
    const after = await this.settle(settleMs, settleTimeoutMs);
    if (after) this.find('wedged', `not idle ${settleTimeoutMs / 1000} s after the probe: ${after}`);
    const left = await this.pendingApprovals();
    if (left && left.length > 0) this.find('wedged', `approvals still pending after the probe: ${left.map((a) => a.toolCallId).join(', ')}`);
    for (const run of this.runs) if (!run.ended) run.controller.abort();
    for (const segment of this.segments) {
      if (segment.reader.end && !segment.closedByUs)
        this.find(
          'openBrackets',
          `the follower on ${segment.node} ended before the client left (${segment.reader.end.kind}: ${errorMessage(segment.reader.end.error ?? '')})`,
        );
      segment.closedByUs = true;
      await segment.reader.close();
    }
    const rows = await this.history(this.node());
    if (!rows) this.find('serverErrors', 'the history could not be read after the storm');
    this.rows = (rows ?? []).map(rowOf);
  }

  /**
   * Reads the history again, long after the thread was checked idle: any row added since is a run
   * nobody asked for (or an answer that came far too late). Returns what it found.
   */
  async recheck(): Promise<Finding[]> {
    const rows = await this.history(this.node());
    if (!rows) return [];
    const known = new Set(this.rows.map((r) => r.id));
    const added = rows.map(rowOf).filter((r) => !known.has(r.id));
    if (added.length === 0) return [];
    const finding: Finding = {
      kind: 'unasked',
      detail: `history changed after the thread was checked idle: ${added.length} row(s) added: ${added.map((r) => `${r.role}: ${short(r.texts.join(' | '), 60)}`).join('; ')}`,
    };
    this.findings.push(finding);
    this.rows = rows.map(rowOf);
    return [finding];
  }

  // -- the checks ------------------------------------------------------------------------------

  /** Every check on what was recorded and stored; fills `findings`. */
  async check(): Promise<void> {
    const terminals = new Map<string, AnyEvent[]>();
    const steps = new Map<string, number>();
    const seenRuns = new Set<string>();
    const addTerminal = (runId: string, event: AnyEvent) => terminals.set(runId, [...(terminals.get(runId) ?? []), event]);

    // /run streams: one run each, RUN_STARTED first, one terminal last.
    for (const run of this.runs) {
      if (run.error && !run.events.some(isTerminal)) this.find('openBrackets', `/run ${run.runId} broke off before its terminal event: ${run.error}`);
      else {
        try {
          checkRun(run.events, { threadId: this.id, runId: run.runId });
        } catch (error) {
          this.find(
            'openBrackets',
            `/run ${run.runId}: ${String(error)} (last: ${run.events
              .slice(-3)
              .map((e) => e.type)
              .join(', ')})`,
          );
        }
      }
      const last = run.events.at(-1);
      if (last && isTerminal(last)) addTerminal(run.runId, last);
    }

    // Followers: ids only grow, brackets closed, the stream passes @ag-ui/client's verifier.
    const streams = this.followerStreams();
    const resumedWithSnapshot = streams.length > 1;
    for (const stream of streams) {
      let open: AnyEvent | undefined;
      let previousId = -Infinity;
      let runId: string | undefined;
      for (const { id, event } of stream.events) {
        if (Number.isFinite(id)) {
          if (id <= previousId) this.find('openBrackets', `follower ${stream.from}: event id ${id} after ${previousId} (${event.type})`);
          previousId = id;
        }
        if (event.type === 'RUN_STARTED') {
          if (open) this.find('openBrackets', `follower ${stream.from}: RUN_STARTED ${event.runId} while ${open.runId} was open`);
          open = event;
          runId = event.runId as string;
          seenRuns.add(runId);
        } else if (isTerminal(event)) {
          if (!open) this.find('openBrackets', `follower ${stream.from}: ${event.type} outside a bracket`);
          if (runId) addTerminal(runId, event);
          open = undefined;
        } else if (event.type === 'STEP_STARTED' && runId) steps.set(runId, (steps.get(runId) ?? 0) + 1);
      }
      if (open) this.find('openBrackets', `follower ${stream.from}: the bracket of ${open.runId} never closed`);
      try {
        const { verified, warnings } = await verifyThreadEvents(stream.events.map((e) => e.event));
        if (warnings.length > 0 || verified.length !== stream.events.length) {
          this.find(
            'openBrackets',
            `follower ${stream.from}: @ag-ui/client let ${verified.length} of ${stream.events.length} events through; warnings: ${short(warnings.join(' | '), 300)}`,
          );
        }
      } catch (error) {
        this.find('openBrackets', `follower ${stream.from}: verifyEvents failed: ${short(String(error), 300)}`);
      }
    }

    // Every run the bridge said it started is seen by the follower.
    for (const ack of this.acks) {
      const started = ack.kind === 'run' || ack.action === 'wake';
      if (started && ack.runId && !seenRuns.has(ack.runId)) {
        this.find(
          resumedWithSnapshot ? 'snapshotOnReconnect' : 'followerMissedRun',
          `the follower never saw run ${ack.runId} (${ack.kind}${ack.action ? ` ${ack.action}` : ''} "${short(ack.text, 40)}")`,
        );
      }
    }

    const rows = this.rows;
    const stored = (ack: Ack) => rows.filter((r) => (r.role === 'user' || r.role === 'signal') && r.texts.some((t) => t === ack.text));
    const ackOf = new Map(this.acks.map((a) => [a.text, a]));

    // Lost, stored twice.
    for (const ack of this.acks) {
      const at = stored(ack);
      if (at.length === 0) {
        const anywhere = rows.some((r) => r.texts.some((t) => t.includes(ack.text)));
        this.find(
          'lost',
          `${ack.kind}${ack.action ? ` ${ack.action}` : ''} on ${ack.node} "${short(ack.text, 50)}" (run ${ack.runId}) is not in history${anywhere ? ' (its text appears inside another row)' : ''}`,
        );
      } else if (at.length > 1) this.find('duplicated', `"${short(ack.text, 50)}" stored ${at.length} times (ids ${at.map((r) => r.id).join(', ')})`);
    }

    // The acknowledged messages in stored order.
    const order: Array<{ ack: Ack; row: number }> = [];
    rows.forEach((r, i) => {
      if (r.role !== 'user' && r.role !== 'signal') return;
      for (const t of r.texts) {
        const ack = ackOf.get(t);
        if (ack && !order.some((o) => o.ack === ack)) order.push({ ack, row: i });
      }
    });

    // Out of order: X acknowledged before Y but stored after it. A message sent into the active run
    // (`send-message` → `deliver`) joins that run, so it may be stored before messages queued for the
    // runs after it: the one inversion the routes promise.
    const late = new Map<Ack, Ack[]>();
    for (let i = 0; i < order.length; i++) {
      for (let j = i + 1; j < order.length; j++) {
        const y = order[i].ack;
        const x = order[j].ack;
        if (x.seq > y.seq) continue;
        const joinedAhead = y.kind === 'send' && y.action === 'deliver' && x.kind === 'queue' && x.action === 'deliver' && x.runId !== y.runId;
        if (!joinedAhead) late.set(x, [...(late.get(x) ?? []), y]);
      }
    }
    for (const [x, ys] of late) {
      this.find(
        'outOfOrder',
        `#${x.seq} ${x.kind}${x.action ? ` ${x.action}` : ''} "${short(x.text, 30)}" is stored after ${ys.map((y) => `#${y.seq} ${y.kind}${y.action ? ` ${y.action}` : ''} "${short(y.text, 30)}"`).join(', ')}; acknowledged order ${this.acks.map((a) => a.seq).join(',')}, stored order ${order.map((o) => o.ack.seq).join(',')}`,
      );
    }

    // What each assistant text answers. Every answer the demo model can give here is the echo of an
    // acknowledged text (`Echo: <text>`), or of an approval that was answered (`Deleted as requested:
    // {"deleted":"<path>"}` once approved, `I did not delete the file: keep <path>` once declined with
    // that reason); a cut answer is a prefix of one of them. Anything else answers nothing asked.
    interface Expected {
      key: string;
      full: string;
      ack?: Ack;
      approval?: Approval;
      complete: number;
      partial: number;
    }
    const expected: Expected[] = [
      ...this.acks.map((ack) => ({ key: `ack#${ack.seq}`, full: `Echo: ${ack.text}`, ack, complete: 0, partial: 0 })),
      ...this.approvals
        .filter((a) => a.status === 202 && (a.choice === 'approve' || a.choice === 'decline'))
        .map((approval) => ({
          key: `approval ${approval.toolCallId}`,
          full: approval.choice === 'approve' ? `Deleted as requested: {"deleted":"${approval.path}"}` : `I did not delete the file: keep ${approval.path}`,
          approval,
          complete: 0,
          partial: 0,
        })),
    ];
    const answers = new Map<number, Expected[]>();
    rows.forEach((row, i) => {
      if (row.role !== 'assistant') return;
      for (const raw of row.texts) {
        const t = raw.trim();
        const candidates = expected.filter((e) => e.full.startsWith(t));
        if (candidates.length === 0) {
          const refused = [...this.refusedTexts].find((r) => `Echo: ${r}`.startsWith(t) && t.length > 'Echo: '.length);
          this.find(
            'unasked',
            `row ${i}: "${short(t, 80)}" answers nothing acknowledged${refused ? ` (it echoes "${short(refused, 40)}", which was refused)` : ''}`,
          );
          continue;
        }
        // A prefix that several could start (a cut `Echo: `) goes to the latest acknowledged message stored before it.
        const before = order.filter((o) => o.row < i).map((o) => o.ack);
        const chosen = candidates.find((c) => c.full === t) ?? [...candidates].reverse().find((c) => c.ack && before.includes(c.ack)) ?? candidates[0];
        if (chosen.full === t) {
          if (chosen.complete > 0) this.find('duplicated', `row ${i}: "${short(t, 60)}" answered again (complete ${chosen.complete + 1} times)`);
          // A cut answer is an answer (docs/deployment.md: "it is not answered twice").
          else if (chosen.partial > 0) this.find('duplicated', `row ${i}: "${short(t, 60)}" answered again, in full, after a cut answer`);
          chosen.complete++;
        } else chosen.partial++;
        answers.set(i, [...(answers.get(i) ?? []), chosen]);
      }
    });

    // Unanswered: an acknowledged message with no answer of its own before the next one stored.
    const runEnd = (runId: string | undefined) => (runId ? (terminals.get(runId) ?? []) : []);
    const cut = (runId: string | undefined) => runEnd(runId).some((e) => e.type === 'RUN_FINISHED' && e.outcome?.type === 'cancelled');
    const failed = (runId: string | undefined) => runEnd(runId).some((e) => e.type === 'RUN_ERROR');
    const answeredOwn = order.map(({ ack, row }, k) => {
      const end = order[k + 1]?.row ?? rows.length;
      for (let i = row + 1; i < end; i++) {
        if (answers.get(i)?.some((e) => e.ack === ack)) return true;
        if (ack.path && rows[i].role === 'assistant' && rows[i].deletePaths.includes(ack.path)) return true;
        if (rows[i].role === 'assistant' && rows[i].texts.some((t) => 'Echo: '.startsWith(t.trim()))) return true;
      }
      return false;
    });
    // Stored back to back (no answer between) and the later one answered: one step read both and
    // gave one reply (the demo model echoes the last). "deliver" allows it: joined the active run,
    // or queued for the next, which a queued message may be read in too.
    const readWithNext = (k: number) =>
      k + 1 < order.length && answeredOwn[k + 1] && !rows.slice(order[k].row + 1, order[k + 1].row).some((r) => r.role === 'assistant');
    for (const [k, { ack }] of order.entries()) {
      const next = order[k + 1];
      if (answeredOwn[k]) continue;
      const what = `#${ack.seq} ${ack.kind}${ack.multitask ? `/${ack.multitask}` : ''}${ack.action ? ` ${ack.action}` : ''} on ${ack.node} "${short(ack.text, 40)}" (run ${ack.runId})`;
      if (cut(ack.runId)) {
        this.find('cutBeforeAnswering', `${what}: its run was cut before it answered`);
      } else if (next && ((next.ack.kind === 'send' && next.ack.action === 'deliver') || readWithNext(k))) {
        this.find(
          'answeredTogether',
          `${what}: the next message, #${next.ack.seq} (${next.ack.kind} into run ${next.ack.runId}), was read with it and answered`,
        );
      } else if (ack.kind === 'send' && ack.action === 'deliver' && (steps.get(ack.runId ?? '') ?? 0) >= 5) {
        this.find('outOfSteps', `${what}: delivered into run ${ack.runId}, which had taken ${steps.get(ack.runId ?? '')} steps`);
      } else {
        this.find(
          'unanswered',
          `${what}: no answer before ${next ? `#${next.ack.seq} "${short(next.ack.text, 30)}"` : 'the end of history'}${failed(ack.runId) ? ' (its run ended RUN_ERROR)' : ''}; its run ended ${
            runEnd(ack.runId)
              .map((e) => `${e.type}${e.outcome ? ` ${e.outcome.type}` : ''}`)
              .join(', ') || 'unseen'
          }`,
        );
      }
    }

    // An approved or declined call that got no answer (and was not cut, nor overtaken by a message
    // delivered into its run, which the model answers instead).
    for (const e of expected) {
      if (!e.approval || e.complete + e.partial > 0) continue;
      const overtaken = this.acks.some((a) => a.kind === 'send' && a.action === 'deliver' && a.runId === e.approval!.runId);
      if (cut(e.approval.runId)) this.find('cutBeforeAnswering', `${e.key} (${e.approval.choice}d): its run was cut before it answered`);
      else if (overtaken)
        this.find('answeredTogether', `${e.key} (${e.approval.choice}d): a message delivered into run ${e.approval.runId} was answered instead`);
      else this.find('unanswered', `${e.key} (${e.approval.choice}d, ${e.approval.status}) has no answer "${e.full}"`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The storm

export interface StormResult {
  report: StormReport;
  threads: StormThread[];
}

/**
 * Drives `threads` threads at once, `steps` random steps each (operations on one thread one after
 * another, each answered before the next), then waits until every thread is idle, probes it with
 * a `/run` that must not be refused, and checks what was acknowledged against history and the
 * followers' streams.
 */
export async function runStorm(options: StormOptions): Promise<StormResult> {
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const log = options.log ?? (() => {});
  const started = Date.now();
  const storm = { nodes: options.nodes, resourceId: options.resourceId ?? 'storm-user', round: options.round ?? 0 };
  const threads = Array.from({ length: options.threads }, (_, i) => new StormThread(i, seed, storm));
  log(
    `storm seed ${seed}${options.round ? ` round ${options.round}` : ''}: ${options.threads} threads × ${options.steps} steps on ${options.nodes.map((n) => `${n.name}=${n.url}`).join(', ')}`,
  );
  await Promise.all(
    threads.map(async (thread) => {
      thread.maxPause = options.maxPauseMs ?? 120;
      await thread.openFollower();
      for (let s = 0; s < options.steps; s++) await thread.step(options.reconnectChance ?? 0.08);
    }),
  );
  log(`storm seed ${seed}: steps done after ${((Date.now() - started) / 1000).toFixed(1)} s; waiting for the threads to be idle`);
  await Promise.all(threads.map((t) => t.finish(options.settleMs ?? 2500, options.settleTimeoutMs ?? 90_000)));
  for (const t of threads) await t.check();
  const report = summarize(threads, { seed, threads: options.threads, steps: options.steps, nodes: options.nodes, durationMs: Date.now() - started });
  return { report, threads };
}

/** Counts and examples of what the threads found. */
export function summarize(threads: StormThread[], meta: Pick<StormReport, 'seed' | 'threads' | 'steps' | 'nodes' | 'durationMs'>): StormReport {
  const failures = Object.fromEntries(FAILURE_KINDS.map((k) => [k, 0])) as Record<FailureKind, number>;
  const info = Object.fromEntries(INFO_KINDS.map((k) => [k, 0])) as Record<InfoKind, number>;
  const ops: Record<string, number> = {};
  const refused: Record<string, number> = {};
  const examples: StormExample[] = [];
  let acknowledged = 0;
  for (const t of threads) {
    acknowledged += t.acks.length;
    for (const [k, v] of Object.entries(t.opCounts)) ops[k] = (ops[k] ?? 0) + v;
    for (const r of t.refusals) refused[`${r.op} ${r.status} ${r.code ?? ''}`.trim()] = (refused[`${r.op} ${r.status} ${r.code ?? ''}`.trim()] ?? 0) + 1;
    for (const f of t.findings) {
      if (f.kind in failures) failures[f.kind as FailureKind]++;
      else info[f.kind as InfoKind]++;
      if (examples.filter((e) => e.kind === f.kind).length < EXAMPLES) {
        examples.push({ kind: f.kind, threadId: t.id, seed: t.seed, detail: f.detail, ops: t.ops, history: historyLines(t.rows) });
      }
    }
  }
  return { ...meta, ops, acknowledged, refused, failures, info, examples };
}

/** Adds the counts of `next` to `into` (the soak's rounds), keeping up to `EXAMPLES` examples per kind. */
export function mergeReports(into: StormReport | undefined, next: StormReport): StormReport {
  if (!into)
    return {
      ...next,
      ops: { ...next.ops },
      refused: { ...next.refused },
      failures: { ...next.failures },
      info: { ...next.info },
      examples: [...next.examples],
    };
  const add = (a: Record<string, number>, b: Record<string, number>) => {
    for (const [k, v] of Object.entries(b)) a[k] = (a[k] ?? 0) + v;
  };
  add(into.ops, next.ops);
  add(into.refused, next.refused);
  add(into.failures, next.failures);
  add(into.info, next.info);
  into.acknowledged += next.acknowledged;
  into.durationMs += next.durationMs;
  into.steps += next.steps;
  for (const e of next.examples) if (into.examples.filter((x) => x.kind === e.kind).length < EXAMPLES) into.examples.push(e);
  return into;
}

export const failureCount = (report: StormReport) => FAILURE_KINDS.reduce((sum, k) => sum + report.failures[k], 0);

/** The report as text: counts first, then the examples with each thread's steps and history. */
export function formatReport(report: StormReport, options: { examples?: boolean; history?: boolean } = {}): string {
  const lines: string[] = [];
  const list = (record: Record<string, number>) =>
    Object.entries(record)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ');
  lines.push(
    `storm seed ${report.seed}: ${report.threads} threads, ${report.steps} steps per thread, ${(report.durationMs / 1000).toFixed(1)} s, nodes ${report.nodes.map((n) => `${n.name}=${n.url}`).join(' ')}`,
  );
  lines.push(`  acknowledged ${report.acknowledged}; refused: ${list(report.refused) || 'none'}`);
  lines.push(`  steps: ${list(report.ops)}`);
  lines.push(`  FAILURES (${failureCount(report)}): ${FAILURE_KINDS.map((k) => `${k} ${report.failures[k]}`).join(', ')}`);
  lines.push(`  explained: ${INFO_KINDS.map((k) => `${k} ${report.info[k]}`).join(', ')}`);
  if (options.examples !== false) {
    for (const kind of [...FAILURE_KINDS, ...INFO_KINDS]) {
      const examples = report.examples.filter((e) => e.kind === kind);
      if (examples.length === 0) continue;
      lines.push(
        '',
        `== ${kind} (${examples.length} shown of ${(report.failures as Record<string, number>)[kind] ?? (report.info as Record<string, number>)[kind]})`,
      );
      for (const e of examples) {
        lines.push(`-- ${kind} on ${e.threadId} (seed ${e.seed}): ${e.detail}`);
        const failure = (FAILURE_KINDS as readonly string[]).includes(kind);
        if (failure && options.history !== false) {
          lines.push('   steps:', ...e.ops.map((o) => `     ${o}`), '   history:', ...e.history.map((h) => `     ${h}`));
        }
      }
    }
  }
  return lines.join('\n');
}
