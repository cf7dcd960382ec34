/**
 * The fan-out client, in a process of its own: many SSE subscribers on one thread over raw TCP
 * sockets (no HTTP client per subscriber, so thousands cost little here), driven over IPC by
 * `bench/run.ts`.
 *
 * - `{ cmd: 'subscribe', origin, path, count, label? }` → `{ subscribed: { count, ms } }` once every
 *   subscriber has its `: connected` comment. Subscribers add up over calls (until `close`), so
 *   one thread can be followed on several servers; `label` (default the origin) names the group.
 * - `{ cmd: 'latency', origin, threadId, resourceId, messages }` → `{ latency: { samples, finished, postMs, byLabel, events } }`:
 *   for each message, `POST send-message` to `origin`, then the time until each subscriber (on
 *   whichever server) has the user echo (its `TEXT_MESSAGE_CONTENT`, in `samples`) and the run's
 *   `RUN_FINISHED` (in `finished`); the next message waits until every subscriber saw that run
 *   end. `byLabel` splits the echo samples by subscriber group; `events` counts the events the
 *   subscribers received for the counted messages (in all, and the fewest and most one got). One
 *   more message goes first, uncounted: the thread's first run also creates the thread.
 * - `{ cmd: 'close' }` → `{ closed: true }`.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';

interface Subscriber {
  socket: net.Socket;
  /** The group it was subscribed in (`subscribe`'s `label`). */
  label: string;
  connected: boolean;
  /** The last bytes seen, so that a needle split across two reads is still found. */
  tail: string;
  /** Needles this subscriber waits for, in order, each with what happens when it appears. */
  waits: Array<{ needle: string; found: (at: number) => void }>;
  /** SSE data frames received (events), and the last characters read, where a `data: ` may have begun. */
  events: number;
  carry: string;
}

const DATA = 'data: ';

/** Counts the `data: ` lines of a chunk, one split across two reads included. */
function countEvents(sub: Subscriber, chunk: string): void {
  const text = sub.carry + chunk;
  for (let at = text.indexOf(DATA); at !== -1; at = text.indexOf(DATA, at + DATA.length)) sub.events++;
  // What could be the start of a `data: ` cut at the end (never a whole one, already counted).
  sub.carry = text.slice(-(DATA.length - 1));
}

const TAIL_CHARS = 512;
let subscribers: Subscriber[] = [];

function openSubscriber(origin: URL, path: string, label: string): Promise<Subscriber> {
  return new Promise((resolve, reject) => {
    const sub: Subscriber = {
      socket: net.connect({ host: origin.hostname, port: Number(origin.port) }),
      label,
      connected: false,
      tail: '',
      waits: [],
      events: 0,
      carry: '',
    };
    sub.socket.setEncoding('utf8');
    sub.socket.setNoDelay(true);
    sub.socket.once('connect', () => {
      sub.socket.write(`GET ${path} HTTP/1.1\r\nHost: ${origin.host}\r\nAccept: text/event-stream\r\nConnection: keep-alive\r\n\r\n`);
    });
    sub.socket.on('data', (chunk: string) => {
      countEvents(sub, chunk);
      let text = sub.tail + chunk;
      if (!sub.connected && text.includes(': connected\n\n')) {
        sub.connected = true;
        resolve(sub);
      }
      // Each needle is looked for only after the previous one, so an older match never counts.
      for (let at = sub.waits.length > 0 ? text.indexOf(sub.waits[0].needle) : -1; at !== -1;) {
        const wait = sub.waits.shift() as Subscriber['waits'][number];
        text = text.slice(at + wait.needle.length);
        wait.found(performance.now());
        at = sub.waits.length > 0 ? text.indexOf(sub.waits[0].needle) : -1;
      }
      sub.tail = text.length > TAIL_CHARS ? text.slice(-TAIL_CHARS) : text;
    });
    sub.socket.once('error', reject);
  });
}

async function subscribe(origin: string, path: string, count: number, label = origin): Promise<{ count: number; ms: number }> {
  const url = new URL(origin);
  const start = performance.now();
  // In batches: thousands of simultaneous SYNs overflow the listen backlog and cost 1 s retransmits.
  for (let i = 0; i < count; i += 100) {
    const batch = Array.from({ length: Math.min(100, count - i) }, () => openSubscriber(url, path, label));
    subscribers.push(...(await Promise.all(batch)));
  }
  return { count: subscribers.length, ms: performance.now() - start };
}

/** Per subscriber, the arrival time of `needle`, then of `after` (both resolve once every subscriber saw each). */
function waitAll(needle: string, after: string): { first: Promise<number[]>; then: Promise<number[]> } {
  const first: Array<Promise<number>> = [];
  const then: Array<Promise<number>> = [];
  for (const sub of subscribers) {
    first.push(new Promise((resolve) => sub.waits.push({ needle, found: resolve })));
    then.push(new Promise((resolve) => sub.waits.push({ needle: after, found: resolve })));
  }
  return { first: Promise.all(first), then: Promise.all(then) };
}

function post(origin: string, path: string, body: unknown): Promise<number> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL(path, origin),
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 202 ? resolve(res.statusCode) : reject(new Error(`send-message: HTTP ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

interface LatencySpec {
  origin: string;
  /** The bridge's route prefix, e.g. `/agui`. */
  prefix: string;
  threadId: string;
  resourceId: string;
  messages: number;
}

async function latency(spec: LatencySpec) {
  const samples: number[] = [];
  const finished: number[] = [];
  const postMs: number[] = [];
  const byLabel: Record<string, number[]> = {};
  let counted: number[] = [];
  const nonce = randomUUID().slice(0, 8);
  // Message 0 is not counted: the thread's first run also creates it in Mastra's memory.
  for (let i = 0; i <= spec.messages; i++) {
    const text = `fanout ping-${i}-${nonce}`;
    // The user echo carries the whole message as one delta; the answer streams it word by word.
    // The next message waits for this run to end everywhere, so each one wakes an idle thread.
    const arrivals = waitAll(`"delta":"${text}"`, '"type":"RUN_FINISHED"');
    if (i === 1) counted = subscribers.map((sub) => sub.events);
    const start = performance.now();
    await post(spec.origin, `${spec.prefix}/threads/${spec.threadId}/send-message`, { resourceId: spec.resourceId, message: text });
    const posted = performance.now() - start;
    const arrived = (await arrivals.first).map((at) => at - start);
    const ended = (await arrivals.then).map((at) => at - start);
    if (i === 0) continue;
    postMs.push(posted);
    samples.push(...arrived);
    finished.push(...ended);
    arrived.forEach((ms, at) => (byLabel[subscribers[at].label] ??= []).push(ms));
  }
  // Every follower is sent the same frames: the fewest any got says whether one missed some.
  const received = subscribers.map((sub, at) => sub.events - (counted[at] ?? 0));
  const events = { total: received.reduce((a, b) => a + b, 0), fewest: Math.min(...received), most: Math.max(...received) };
  return { samples, finished, postMs, byLabel, events };
}

/** What `latency` answers (the phases import the type only: this file runs as a process of its own). */
export type LatencyReply = Awaited<ReturnType<typeof latency>>;

function closeAll(): void {
  for (const sub of subscribers) sub.socket.destroy();
  subscribers = [];
}

type Command =
  { cmd: 'subscribe'; origin: string; path: string; count: number; label?: string } | ({ cmd: 'latency' } & LatencySpec) | { cmd: 'close' | 'exit' };

process.on('message', (message: Command) => {
  const reply = (key: string, work: Promise<unknown>) =>
    void work.then(
      (value) => process.send?.({ [key]: value }),
      (error: Error) => process.send?.({ [key]: { error: error.message } }),
    );
  if (message.cmd === 'subscribe') reply('subscribed', subscribe(message.origin, message.path, message.count, message.label));
  if (message.cmd === 'latency') reply('latency', latency(message));
  if (message.cmd === 'close')
    reply(
      'closed',
      Promise.resolve(closeAll()).then(() => true),
    );
  if (message.cmd === 'exit') process.exit(0);
});
process.on('disconnect', () => process.exit(0));
process.send?.({ ready: true });
