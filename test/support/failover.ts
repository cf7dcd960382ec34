import { expect } from 'vitest';
import { history, type Cluster, type StoredMessage } from './cluster.js';
import type { ServerProcess } from './process.js';
import { brackets, isTerminal, type AnyEvent, type SseReader } from './sse.js';

// What the failover tests (test/scale-out-failover.test.ts, test/scale-out-takeover.test.ts) share:
// their timings, and how they wait on a run, the durable inbox and the answers.

/** Mastra's thread lease where a test waits on it itself (`MASTRA_AGENT_THREAD_LEASE_TTL_MS`, read at start). */
export const LEASE_TTL_MS = 3000;
/** How soon, with the defaults a user gets, a follower elsewhere hears that a process running the run died. */
export const FAILOVER_MS = 5000;
/** With several processes, the durable inbox sends again what is this old and unanswered (`inbox-recovery.ts`). */
export const ORPHAN_AFTER_MS = 10_000;
export const DEMO_ENV = { DEMO_DELAY_MS: '20', SLOW_TASK_MS: '200' };
export const BASE_ENV = { ...DEMO_ENV, MASTRA_AGENT_THREAD_LEASE_TTL_MS: String(LEASE_TTL_MS) };

/** `work`, or a failure naming `what` once `ms` have passed; answers how long it took. */
export async function within<T>(ms: number, what: string, work: Promise<T>): Promise<{ value: T; tookMs: number }> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
  });
  try {
    return { value: await Promise.race([work, late]), tookMs: Date.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

/** A message the demo answers in `n` words after `Echo:`: with a `DEMO_DELAY_MS` of d, a run of about (n + 6) × d ms. */
export const words = (label: string, n: number) => `${label} ${Array.from({ length: n }, (_, i) => `w${i}`).join(' ')}`;

/** The run brackets `reader` saw for `runId` (each from RUN_STARTED through its terminal event, if any). */
export const bracketsOf = (reader: SseReader, runId: string) => brackets(reader.list).filter((r) => r[0].runId === runId);

/** Resolves with the first complete bracket of `runId` (a RUN_ERROR names no run: its bracket does). */
export async function wholeRun(reader: SseReader, runId: string): Promise<AnyEvent[]> {
  const done = () => bracketsOf(reader, runId).find((r) => isTerminal(r.at(-1) as AnyEvent));
  await reader.waitFor(() => done() !== undefined, `a whole run ${runId}`);
  return done() as AnyEvent[];
}

/** The durable inbox's entries of a thread, read from the schema (the table Mastra's `threadState` domain uses). */
export async function inboxOf(cluster: Cluster, threadId: string): Promise<Array<{ id: string; kind: string }>> {
  const rows = await cluster.db.query(`SELECT value FROM "${cluster.db.schema}".mastra_thread_state WHERE "threadId" = $1 AND type = $2`, [
    threadId,
    'mastra-agui-bridge.inbox',
  ]);
  return (rows[0]?.value as Array<{ id: string; kind: string }> | undefined) ?? [];
}

export const contentOf = (m: StoredMessage) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content));
/** Assistant messages of the history whose text includes `needle`. */
export const answersWith = (stored: StoredMessage[], needle: string) => stored.filter((m) => m.role === 'assistant' && contentOf(m).includes(needle));

/**
 * Waits until `message` is stored on the thread once, with an answer after it, and the durable
 * inbox no longer holds anything of the thread (so no process will send anything again); answers
 * the history then.
 */
export async function answeredOnce(cluster: Cluster, server: ServerProcess, threadId: string, id: string, needle: string, timeout: number) {
  await expect
    .poll(
      async () => {
        const stored = await history(server, threadId);
        const at = stored.findIndex((m) => m.id === id);
        return at >= 0 && stored.slice(at + 1).some((m) => m.role === 'assistant' && contentOf(m).includes(needle));
      },
      { timeout, interval: 250 },
    )
    .toBe(true);
  await expect.poll(() => inboxOf(cluster, threadId), { timeout, interval: 250 }).toEqual([]);
  const stored = await history(server, threadId);
  expect(stored.filter((m) => m.id === id)).toHaveLength(1);
  expect(answersWith(stored, needle)).toHaveLength(1);
  return stored;
}
