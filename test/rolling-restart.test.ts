import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInput, uid, userMessage } from './support/agui.js';
import { startBalancer, type Balancer } from './support/balancer.js';
import { createCluster, RESOURCE, text, type Cluster } from './support/cluster.js';
import type { ServerProcess } from './support/process.js';
import { postRun, sseEvents } from './support/run.js';
import type { AnyEvent } from './support/sse.js';

/**
 * A rolling deploy: two processes behind a balancer, each replaced in turn (SIGTERM, wait for it
 * to exit, start a new one) while clients keep running `/run`s through the balancer. Each run is
 * far shorter than SHUTDOWN_GRACE_MS, so the drain lets every one finish: none is cut, none fails,
 * and the requests a draining process refused (503) went to the other.
 */
const CLIENTS = 6;
const origin = (server: ServerProcess) => new URL(server.url).origin;

describe('a rolling restart of two processes under load', { timeout: 120_000 }, () => {
  let cluster: Cluster;
  let lb: Balancer;
  let servers: ServerProcess[];

  beforeAll(async () => {
    cluster = await createCluster('rolling', { DEMO_DELAY_MS: '15' });
    servers = [await cluster.start()];
    servers.push(await cluster.start());
    lb = await startBalancer(servers.map(origin));
  }, 60_000);
  afterAll(async () => {
    await lb?.close();
    await cluster?.close();
  });

  /** Replaces process `i`: SIGTERM, its exit, a new process in its place in the balancer. */
  async function replace(i: number): Promise<void> {
    const old = servers[i];
    old.child.kill('SIGTERM');
    expect(await old.exited).toEqual({ code: 0, signal: null });
    lb.backends = lb.backends.filter((backend) => backend !== origin(old));
    servers[i] = await cluster.start();
    lb.backends = [...lb.backends, origin(servers[i])];
  }

  it('cuts no run: every run started through the balancer finishes with its whole answer', async () => {
    let deploying = true;
    const runs: Array<{ message: string; events: AnyEvent[] }> = [];
    const client = async (c: number) => {
      for (let n = 0; deploying || n < 2; n++) {
        const message = `client ${c} run ${n} ${'word '.repeat(15)}`.trim();
        const res = await postRun(`${lb.origin}/agui/run`, runInput({ threadId: uid(`rolling-${c}`), messages: [userMessage(message)], forwardedProps: { resourceId: RESOURCE } }));
        expect(res.status).toBe(200);
        const events: AnyEvent[] = [];
        for await (const event of sseEvents(res.body!)) events.push(event);
        runs.push({ message, events });
      }
    };
    const load = Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
    await replace(0);
    await replace(1);
    deploying = false;
    await load;

    expect(runs.length).toBeGreaterThanOrEqual(CLIENTS * 2);
    const cut = runs.filter(({ message, events }) => events.at(-1)?.type !== 'RUN_FINISHED' || events.at(-1)?.outcome !== undefined || text(events) !== `Echo: ${message}`);
    expect(cut.map(({ events }) => events.at(-1))).toEqual([]);
    console.info(`rolling restart: ${runs.length} runs, none cut; ${lb.retried} requests refused by a draining process went to the other`);
  });
});
