/**
 * The floor under every server: Mastra's agent loop alone, in one process, no HTTP. The same demo
 * agent and memory setting as the servers, each run's `fullStream` drained with a bare reader.
 * No server can deliver more chunks per second than this on one core; how close each gets is the
 * cost of its own layer. Driven over IPC like `bench/load.ts`: `{ cmd: 'round', concurrency, streams, words }`.
 */
import { AsyncResource, createHook } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { createScriptedModel } from '../src/demo/scripted-model.js';
import { BENCH_RESOURCE, createBenchMastra } from './servers/shared.js';

const { demo } = await createBenchMastra();

async function drain(text: string): Promise<number> {
  const output = await demo.stream([{ role: 'user', content: text }], { memory: { thread: `floor-${randomUUID()}`, resource: BENCH_RESOURCE } });
  const reader = output.fullStream.getReader();
  let chunks = 0;
  while (!(await reader.read()).done) chunks++;
  return chunks;
}

async function round(spec: { concurrency: number; streams: number; words: number }) {
  const text = Array.from({ length: spec.words }, (_, i) => `w${i}`).join(' ');
  let issued = 0;
  let chunks = 0;
  const worker = async () => {
    while (issued < spec.streams) {
      issued++;
      const drained = await drain(text); // not `chunks += await …`: that reads `chunks` before the await
      chunks += drained;
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: spec.concurrency }, worker));
  const elapsedMs = performance.now() - start;
  return { elapsedMs, events: chunks, eventsPerSec: (chunks * 1000) / elapsedMs };
}

/**
 * Timers (`setTimeout`, `setInterval`, `setImmediate`) the scripted model arms while it streams a
 * `words`-word answer with `delayMs`: the bench relies on 0 arming none. Only resources descending
 * from the check count, not the timers the rest of the process (Mastra's own) arms meanwhile.
 */
async function modelTimers(delayMs: number, words: number): Promise<number> {
  const scope = new AsyncResource('bench-model-timers');
  const ours = new Set([scope.asyncId()]);
  let timers = 0;
  const hook = createHook({
    init: (id, type, triggerId) => {
      if (!ours.has(triggerId)) return;
      ours.add(id);
      if (type === 'Timeout' || type === 'Immediate') timers++;
    },
  });
  const model = createScriptedModel({ delayMs });
  const text = Array.from({ length: words }, (_, i) => `w${i}`).join(' ');
  hook.enable();
  try {
    await scope.runInAsyncScope(async () => {
      const { stream } = await model.doStream({ prompt: [{ role: 'user', content: [{ type: 'text', text }] }] } as never);
      const reader = (stream as ReadableStream<unknown>).getReader();
      while (!(await reader.read()).done);
    });
  } finally {
    hook.disable();
  }
  return timers;
}

type Command = { cmd: 'round'; concurrency: number; streams: number; words: number } | { cmd: 'timers'; words: number } | { cmd: 'exit' };

process.on('message', (message: Command) => {
  if (message.cmd === 'round') void round(message).then((result) => process.send?.({ round: result }));
  if (message.cmd === 'timers') {
    void Promise.all([modelTimers(0, message.words), modelTimers(1, 20)]).then(([zero, oneMs]) => process.send?.({ timers: { zero, oneMs } }));
  }
  if (message.cmd === 'exit') process.exit(0);
});
process.on('disconnect', () => process.exit(0));
process.send?.({ ready: true });
