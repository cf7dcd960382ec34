/**
 * The load generator, in a process of its own so that reading thousands of frames never shares
 * an event loop with the server under test. Driven over IPC by `bench/run.ts`:
 * `{ cmd: 'round', ...RoundSpec }` → `{ round: RoundResult }`.
 *
 * A round is closed-loop: `concurrency` workers each start a stream as soon as their last one
 * ended, until `streams` have run. Every stream asks the demo agent to echo `words` words (one
 * word per delta) on a thread of its own. With `origins`, the workers are dealt out over those
 * servers in turn (worker i always asks origin i mod n): one load split over several processes.
 * With `followOn` (the bridge only), each stream's thread is first followed on that server
 * (`GET …/events`), and the follower reads the run there until its `RUN_FINISHED`. With
 * `workflow`, each stream runs that workflow instead (`{ n: 0 }` in): the bridge's `/run` with
 * `forwardedProps.agentId`, or Mastra's `/api/workflows/:id/stream`.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { BENCH_RESOURCE } from './servers/shared.js';

export type Target = 'bridge' | 'mastra' | 'agui';

export interface RoundSpec {
  target: Target;
  /** Server origin, e.g. `http://127.0.0.1:41234`. */
  origin: string;
  /** Several servers sharing the round (each worker on one of them); `origin` is then unused. */
  origins?: string[];
  concurrency: number;
  streams: number;
  words: number;
  /** The bridge only: follow each stream's thread on this server before the run starts. */
  followOn?: string;
  /** Run this workflow (bridge and Mastra's route only) rather than ask the demo agent. */
  workflow?: string;
  /** Each stream as a resource of its own (many users), not all as `BENCH_RESOURCE` (one user's limits). */
  resourcePerStream?: boolean;
}

export interface StreamSample {
  /** Request sent → first complete SSE data frame, ms. */
  ttfe: number;
  /** Request sent → first frame carrying answer text (the first token a user sees), ms. */
  firstDelta: number;
  /** Request sent → end of the response body, ms. */
  ttlb: number;
  events: number;
  bytes: number;
  /** With `followOn`: the events the thread's follower got. */
  followerEvents?: number;
}

export interface RoundResult {
  spec: RoundSpec;
  elapsedMs: number;
  events: number;
  eventsPerSec: number;
  samples: StreamSample[];
  errors: string[];
  /** With `origins`: events each origin sent. */
  eventsByOrigin?: Record<string, number>;
  /** With `followOn`: the events the followers got there. */
  followerEvents?: number;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

/** The echo prompt: `w0 w1 … w<n-1>` (no word trips another rule of the demo script). */
function prompt(words: number): string {
  return Array.from({ length: words }, (_, i) => `w${i}`).join(' ');
}

/** Path and body of one request: the same question, in each server's own input format. */
function request(target: Target, text: string, threadId: string, workflow?: string, resource = BENCH_RESOURCE): { path: string; body: string } {
  if (workflow) return workflowRequest(target, workflow, threadId);
  if (target === 'mastra') {
    return {
      path: '/api/agents/demo/stream',
      body: JSON.stringify({ messages: [{ role: 'user', content: text }], memory: { thread: threadId, resource } }),
    };
  }
  const input = {
    threadId,
    runId: randomUUID(),
    messages: [{ id: randomUUID(), role: 'user', content: text }],
    tools: [],
    context: [],
    state: {},
    forwardedProps: target === 'bridge' ? { resourceId: resource } : {},
  };
  return { path: target === 'bridge' ? '/agui/run' : '/agent', body: JSON.stringify(input) };
}

/** One run of `workflow` from `{ n: 0 }`: Mastra's workflow stream route, or the bridge's `/run`. */
function workflowRequest(target: Target, workflow: string, threadId: string): { path: string; body: string } {
  const inputData = { n: 0 };
  if (target === 'mastra')
    return { path: `/api/workflows/${workflow}/stream?runId=${randomUUID()}`, body: JSON.stringify({ inputData, resourceId: BENCH_RESOURCE }) };
  if (target !== 'bridge') throw new Error(`${target} serves no workflow`);
  const input = {
    threadId,
    runId: randomUUID(),
    messages: [],
    tools: [],
    context: [],
    state: {},
    forwardedProps: { resourceId: BENCH_RESOURCE, agentId: workflow, input: inputData },
  };
  return { path: '/agui/run', body: JSON.stringify(input) };
}

/** How a stream's records are told apart: SSE frames, or Mastra's workflow route's ASCII record separator. */
function framing(spec: RoundSpec): { separator: string; isEvent: (frame: string) => boolean; firstWork: RegExp; ended: (last: string) => boolean } {
  if (spec.workflow && spec.target === 'mastra') {
    return {
      separator: '\x1e',
      isEvent: (frame) => frame.length > 0,
      firstWork: /^\{"type":"workflow-step-start"/,
      ended: (last) => last.includes('"type":"workflow-finish"'),
    };
  }
  return {
    separator: '\n\n',
    isEvent: (frame) => frame.startsWith('data:') && !frame.startsWith('data: [DONE]'),
    firstWork: spec.workflow ? /^data: \{"type":"STEP_STARTED"/ : DELTA_FRAME[spec.target],
    ended: (last) => endedWell(spec.target, last),
  };
}

/** How each server's frames that carry answer text start. */
const DELTA_FRAME: Record<Target, RegExp> = {
  bridge: /^data: \{"type":"TEXT_MESSAGE_CONTENT"/,
  agui: /^data: \{"type":"TEXT_MESSAGE_CHUNK"/,
  mastra: /^data: \{"type":"text-delta"/,
};

/** Whether the last frame is the stream's proper end (so a truncated stream counts as an error). */
function endedWell(target: Target, lastFrame: string): boolean {
  if (target === 'mastra') return lastFrame.startsWith('data: [DONE]');
  return lastFrame.includes('"type":"RUN_FINISHED"');
}

/**
 * One stream. Events are SSE data frames: AG-UI events for the AG-UI servers, Mastra chunks for
 * Mastra's route (its closing `data: [DONE]` is not an event).
 */
async function runStream(spec: RoundSpec, text: string, origin = spec.origin): Promise<StreamSample> {
  const threadId = `bench-${randomUUID()}`;
  const follower = spec.followOn ? await followThread(spec.followOn, threadId) : undefined;
  const sample = await streamRun(spec, text, origin, threadId);
  return follower ? { ...sample, followerEvents: await follower.done } : sample;
}

/**
 * Follows the thread on `origin`, resolved once the stream said `connected`; then `done` gives
 * the events the follower got until the run's `RUN_FINISHED`.
 */
function followThread(origin: string, threadId: string): Promise<{ done: Promise<number> }> {
  const url = new URL(`/agui/threads/${threadId}/events?resourceId=${BENCH_RESOURCE}`, origin);
  return new Promise((connected, reject) => {
    let events = 0;
    let carry = '';
    let isConnected = false;
    let finished: (events: number) => void = () => {};
    let failDone: (error: Error) => void = () => {};
    const done = new Promise<number>((resolve, fail) => {
      finished = resolve;
      failDone = fail;
    });
    const failed = (error: Error) => (isConnected ? failDone(error) : reject(error));
    const req = http.get(url, { agent, headers: { accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new Error(`follower: HTTP ${res.statusCode}`));
      }
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const frames = (carry + chunk).split('\n\n');
        carry = frames.pop() ?? '';
        for (const frame of frames) {
          if (frame.includes(': connected')) {
            isConnected = true;
            connected({ done });
          }
          if (!frame.startsWith('id:') && !frame.startsWith('data:')) continue;
          events++;
          if (frame.includes('"type":"RUN_FINISHED"')) {
            req.destroy();
            return finished(events);
          }
        }
      });
      res.on('error', (error) => failed(error));
      res.on('end', () => failed(new Error(`follower: stream ended after ${events} events, before RUN_FINISHED`)));
    });
    req.on('error', (error) => failed(error));
  });
}

function streamRun(spec: RoundSpec, text: string, origin: string, threadId: string): Promise<StreamSample> {
  const resource = spec.resourcePerStream ? `${BENCH_RESOURCE}-${randomUUID()}` : BENCH_RESOURCE;
  const { path, body } = request(spec.target, text, threadId, spec.workflow, resource);
  const { separator, isEvent, firstWork, ended } = framing(spec);
  const url = new URL(path, origin);
  return new Promise((resolve, reject) => {
    const start = performance.now();
    let ttfe = Number.NaN;
    let firstDelta = Number.NaN;
    let events = 0;
    let bytes = 0;
    let carry = '';
    let lastFrame = '';
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return reject(new Error(`${spec.target}: HTTP ${res.statusCode}`));
        }
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          bytes += chunk.length;
          const buffer = carry + chunk;
          let from = 0;
          for (let end = buffer.indexOf(separator, from); end !== -1; end = buffer.indexOf(separator, from)) {
            lastFrame = buffer.slice(from, end);
            if (isEvent(lastFrame)) {
              if (events === 0) ttfe = performance.now() - start;
              if (Number.isNaN(firstDelta) && firstWork.test(lastFrame)) firstDelta = performance.now() - start;
              events++;
            }
            from = end + separator.length;
          }
          carry = buffer.slice(from);
        });
        res.on('end', () => {
          const ttlb = performance.now() - start;
          if (!ended(lastFrame)) return reject(new Error(`${spec.target}: stream ended on ${lastFrame.slice(0, 120)}`));
          resolve({ ttfe, firstDelta, ttlb, events, bytes });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export async function runRound(spec: RoundSpec): Promise<RoundResult> {
  const text = prompt(spec.words);
  const samples: StreamSample[] = [];
  const errors: string[] = [];
  const byOrigin: Record<string, number> = Object.fromEntries((spec.origins ?? []).map((o) => [o, 0]));
  let issued = 0;
  const worker = async (origin: string) => {
    while (issued < spec.streams) {
      issued++;
      try {
        const sample = await runStream(spec, text, origin);
        samples.push(sample);
        if (spec.origins) byOrigin[origin] += sample.events;
      } catch (error) {
        errors.push((error as Error).message);
      }
    }
  };
  const originOf = (i: number) => (spec.origins ? spec.origins[i % spec.origins.length] : spec.origin);
  const start = performance.now();
  await Promise.all(Array.from({ length: spec.concurrency }, (_, i) => worker(originOf(i))));
  const elapsedMs = performance.now() - start;
  const events = samples.reduce((n, s) => n + s.events, 0);
  const followerEvents = spec.followOn ? samples.reduce((n, s) => n + (s.followerEvents ?? 0), 0) : undefined;
  return {
    spec,
    elapsedMs,
    events,
    eventsPerSec: (events * 1000) / elapsedMs,
    samples,
    errors,
    ...(spec.origins && { eventsByOrigin: byOrigin }),
    ...(followerEvents !== undefined && { followerEvents }),
  };
}

process.on('message', (message: { cmd: string } & RoundSpec) => {
  if (message.cmd === 'round') void runRound(message).then((round) => process.send?.({ round }));
  if (message.cmd === 'exit') process.exit(0);
});
process.on('disconnect', () => process.exit(0));
process.send?.({ ready: true });
