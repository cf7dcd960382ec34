/**
 * What a run costs on a long thread: the standalone server as `npm start` runs it (the demo agent,
 * its memory on a LibSQL file), one thread per size with 10, 100 and 1,000 stored messages, and
 * `/run`s on each sent two ways: as AG-UI clients send them (the whole conversation, then the new
 * message: the input grows with the thread) and with the new message alone (what the server reads
 * of the thread is then all that can grow). Time to first event and events/s per size and way,
 * interleaved in every repetition, so that the ratio of the longest thread to the shortest reads
 * from one run (each run adds its two messages: a size is where its thread starts). With `--baseline=<dir>`, that
 * checkout's server runs beside this one (A B, then B A).
 */
import { randomUUID } from 'node:crypto';
import { BENCH_RESOURCE } from '../servers/shared.js';
import { startStandalone, type BenchServer } from './procs.js';
import { median } from './stats.js';

export interface LongThreadPlan {
  /** Stored messages per thread (two per turn: the question and its answer). */
  sizes: number[];
  /** Measured runs per size and server (one per repetition, sizes interleaved). */
  reps: number;
  /** Words of each measured answer. */
  words: number;
  baselineDir?: string;
}

export interface LongThreadSize {
  messages: number;
  /** Median over the runs, ms. */
  ttfe: number;
  /** Median over the runs: the run's events over its time to last byte. */
  eventsPerSec: number;
}

/** One way of sending: its sizes, and the longest thread over the shortest (time to first event, events/s). */
export interface LongThreadSeries {
  sizes: LongThreadSize[];
  ttfeRatio: number;
  eventsPerSecRatio: number;
}

/** How a client sends a run: `whole`, the conversation so far and the new message; `new`, the new message alone. */
export type SendingWay = 'whole' | 'new';

export type LongThreadServerResult = Record<SendingWay, LongThreadSeries>;

export interface LongThreadResult {
  plan: LongThreadPlan;
  bridge: LongThreadServerResult;
  baseline?: LongThreadServerResult;
}

interface AguiMessage {
  id: string;
  role: string;
  content?: unknown;
}

interface RunSample {
  ttfe: number;
  events: number;
  ttlb: number;
}

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');

/** One `/run`: the conversation so far and a new user message; answers its timings and the text of the answer. */
async function run(server: BenchServer, threadId: string, conversation: AguiMessage[], text: string): Promise<RunSample & { answer: AguiMessage[] }> {
  const question = { id: randomUUID(), role: 'user', content: text };
  const body = JSON.stringify({
    threadId,
    runId: randomUUID(),
    messages: [...conversation, question],
    tools: [],
    context: [],
    state: {},
    forwardedProps: { resourceId: BENCH_RESOURCE },
  });
  const started = performance.now();
  const response = await fetch(`${server.origin}/agui/run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body,
  });
  if (!response.ok || !response.body) throw new Error(`${server.name}: /run answered ${response.status}: ${await response.text()}`);
  let ttfe = 0;
  let events = 0;
  let rest = '';
  const answers = new Map<string, string>();
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    rest += decoder.decode(read.value, { stream: true });
    const frames = rest.split('\n\n');
    rest = frames.pop() ?? '';
    for (const frame of frames) {
      if (!frame.startsWith('data:')) continue;
      if (events++ === 0) ttfe = performance.now() - started;
      const event = JSON.parse(frame.slice(5)) as { type: string; messageId?: string; delta?: string; message?: string };
      if (event.type === 'TEXT_MESSAGE_START' && event.messageId) answers.set(event.messageId, '');
      if (event.type === 'TEXT_MESSAGE_CONTENT' && event.messageId) answers.set(event.messageId, (answers.get(event.messageId) ?? '') + (event.delta ?? ''));
      if (event.type === 'RUN_ERROR') throw new Error(`${server.name}: RUN_ERROR ${event.message}`);
    }
  }
  const answer = [question, ...[...answers].map(([id, content]) => ({ id, role: 'assistant', content }))];
  return { ttfe, events, ttlb: performance.now() - started, answer };
}

/** A thread with `messages` stored messages, built turn by turn (each turn sends only its new message); answers the conversation as the client holds it. */
async function buildThread(server: BenchServer, messages: number): Promise<{ threadId: string; conversation: AguiMessage[] }> {
  const threadId = `long-${messages}-${randomUUID()}`;
  const conversation: AguiMessage[] = [];
  for (let turn = 0; turn < messages / 2; turn++) conversation.push(...(await run(server, threadId, [], `turn ${turn}`)).answer);
  return { threadId, conversation };
}

function series(samples: Map<number, RunSample[]>): LongThreadSeries {
  const sizes = [...samples].map(([messages, runs]) => ({
    messages,
    ttfe: median(runs.map((r) => r.ttfe)),
    eventsPerSec: median(runs.map((r) => (r.events * 1000) / r.ttlb)),
  }));
  const [first, last] = [sizes[0], sizes.at(-1) as LongThreadSize];
  return { sizes, ttfeRatio: last.ttfe / first.ttfe, eventsPerSecRatio: last.eventsPerSec / first.eventsPerSec };
}

export async function runLongThreadPhase(plan: LongThreadPlan): Promise<LongThreadResult> {
  log('long threads: starting the standalone server(s) on LibSQL files…');
  const servers = await Promise.all([startStandalone('bridge'), ...(plan.baselineDir ? [startStandalone('baseline', { baselineDir: plan.baselineDir })] : [])]);
  try {
    const threads = new Map<BenchServer, Array<{ messages: number; threadId: string; conversation: AguiMessage[] }>>();
    for (const server of servers) {
      log(`long threads: ${server.name}: storing ${plan.sizes.join(', ')} messages…`);
      const built = await Promise.all(plan.sizes.map(async (messages) => ({ messages, ...(await buildThread(server, messages)) })));
      threads.set(server, built);
    }
    const ways: SendingWay[] = ['new', 'whole'];
    const empty = () => new Map(plan.sizes.map((size) => [size, [] as RunSample[]]));
    const samples = new Map(servers.map((s) => [s, { whole: empty(), new: empty() }]));
    // One way after the other: the garbage a whole conversation leaves must not land on the new-message runs.
    for (const way of ways) {
      for (let rep = 0; rep < plan.reps; rep++) {
        for (const server of rep % 2 === 0 ? servers : [...servers].reverse()) {
          for (const thread of threads.get(server) ?? []) {
            const sample = await run(server, thread.threadId, way === 'whole' ? thread.conversation : [], words(plan.words));
            // As a client keeps it: each run adds its question and answer (a thread grows by 2 per run).
            thread.conversation.push(...sample.answer);
            samples.get(server)?.[way].get(thread.messages)?.push(sample);
          }
        }
        if ((rep + 1) % 10 === 0) log(`long threads: ${way}: rep ${rep + 1}/${plan.reps}`);
      }
    }
    const summarise = (server: BenchServer): LongThreadServerResult => {
      const { whole, new: fresh } = samples.get(server) as Record<SendingWay, Map<number, RunSample[]>>;
      return { whole: series(whole), new: series(fresh) };
    };
    const [bridge, baseline] = servers.map(summarise);
    return { plan, bridge, ...(baseline && { baseline }) };
  } finally {
    await Promise.all(servers.map((s) => s.process.stop()));
  }
}
