/**
 * What the three benchmarked servers share, so that they differ only in the layer under test:
 * the same demo agent (scripted model, `DEMO_DELAY_MS`, default 0 here = no timers) and 50-step
 * workflow (`steps-workflow.ts`), the same
 * memory setting (on: an in-memory store, each request on a thread of its own) and the same
 * Mastra options as the bridge's standalone server (Mastra's spans too, with an OTLP endpoint set).
 *
 * Each server runs in its own process, prints `READY <port>` once it listens, and answers the
 * orchestrator over IPC: `{ cmd: 'mem' }` → memory after a full GC, `{ cmd: 'exit' }` → exits
 * cleanly (so `--cpu-prof` can write its profile).
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Mastra } from '@mastra/core';
import type { Agent } from '@mastra/core/agent';
import { InMemoryStore, type MastraStorage } from '@mastra/core/storage';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDemoAgent } from '../../src/demo/agent.js';
import { mastraSpans, startTracing } from '../../src/server/tracing.js';
import { BENCH_WORKFLOW_ID, createStepsWorkflow } from './steps-workflow.js';

/** The resource every bench request runs as. */
export const BENCH_RESOURCE = 'bench';

/**
 * The shared Mastra: its storage in memory, or with `BENCH_STORAGE=libsql` a LibSQL file (what
 * `npm start` keeps its threads in), in a temporary folder removed at exit.
 */
export async function createBenchMastra(): Promise<{ mastra: Mastra; demo: Agent }> {
  const storage = process.env.BENCH_STORAGE === 'libsql' ? await libsqlFile() : new InMemoryStore();
  const delayMs = Number(process.env.DEMO_DELAY_MS ?? 0);
  const demo = createDemoAgent({ storage, delayMs, slowTaskMs: 100 });
  // The workflow phase's 50-step workflow, on the bridge's `/run` and Mastra's workflow route alike.
  const workflows = { [BENCH_WORKFLOW_ID]: createStepsWorkflow(50) };
  // The telemetry phase's traced Mastra route: the SDK and Mastra's spans as the bridge's server sets them up.
  const observability = (await startTracing(process.env)) ? await mastraSpans('on') : undefined;
  const mastra = new Mastra({
    agents: { demo },
    workflows,
    storage,
    logger: false,
    backgroundTasks: { enabled: true },
    ...(observability && { observability }),
  });
  return { mastra, demo };
}

async function libsqlFile(): Promise<MastraStorage> {
  const { LibSQLStore } = await import('@mastra/libsql');
  const dir = mkdtempSync(join(tmpdir(), 'bench-mastra-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  const store = new LibSQLStore({ id: 'bench', url: `file:${join(dir, 'mastra.db')}` });
  await store.init();
  return store;
}

type Fetch = (request: Request) => Response | Promise<Response>;

export async function serveBench(fetch: Fetch): Promise<void> {
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  // Thousands of idle SSE subscribers in the fan-out phase: no per-server connection cap.
  (server as { maxConnections?: number }).maxConnections = Infinity;
  // A loaded client can read a response's end seconds after the server wrote it; with Node's 5 s
  // keep-alive timeout the server has closed that socket by the time the client reuses it (ECONNRESET).
  Object.assign(server, { keepAliveTimeout: 120_000, headersTimeout: 121_000 });
  process.on('message', (message: { cmd?: string }) => {
    if (message.cmd === 'mem') return void process.send?.({ mem: memoryAfterGc() });
    if (message.cmd === 'exit') process.exit(0);
  });
  process.on('disconnect', () => process.exit(0));
  console.log(`READY ${(server.address() as AddressInfo).port}`);
}

function memoryAfterGc(): NodeJS.MemoryUsage {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  return process.memoryUsage();
}
