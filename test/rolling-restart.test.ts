import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInput, uid, userMessage } from './support/agui.js';
import { startBalancer, type Balancer } from './support/balancer.js';
import { createCluster, RESOURCE, text, type Cluster } from './support/cluster.js';
import type { ServerProcess } from './support/process.js';
import { postRun, sseEvents } from './support/run.js';
import { brackets, openSse, type AnyEvent, type IdEvent, type SseReader } from './support/sse.js';

/**
 * A rolling deploy: two processes behind a balancer, each replaced in turn (SIGTERM, wait for it
 * to exit, start a new one) while clients keep running `/run`s through the balancer. Each run is
 * far shorter than SHUTDOWN_GRACE_MS, so the drain lets every one finish: none is cut, none fails,
 * and the requests a draining process refused (503) went to the other. A follower of one of the
 * threads, whose stream ends with its process, comes back through the balancer with
 * `Last-Event-ID` and misses nothing.
 */
const CLIENTS = 6;
const origin = (server: ServerProcess) => new URL(server.url).origin;

/** Follows a thread as an EventSource does: when the stream ends, it comes back with the last id it got. */
function followAcross(url: string) {
  const done: IdEvent[] = [];
  let reader: SseReader | undefined;
  let stopped = false;
  let streams = 0;
  const all = () => [...done, ...(reader?.events ?? [])];
  const loop = (async () => {
    while (!stopped) {
      const last = all().at(-1)?.id;
      // Refused while a process restarts: tried again, as a browser's EventSource would.
      const opened = await openSse(url, last === undefined ? {} : { lastEventId: last }).catch(() => undefined);
      if (!opened) {
        // The balancer had no backend for a moment: again, shortly (as an EventSource's retry).
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      reader = opened;
      streams++;
      await reader.ended;
      done.push(...reader.events);
      reader = undefined;
    }
  })();
  return {
    events: all,
    /** How many streams it opened: one more than its reconnects. */
    streams: () => streams,
    stop: async () => {
      stopped = true;
      await reader?.close();
      await loop;
    },
  };
}

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
    const runs: Array<{ message: string; runId: string; events: AnyEvent[] }> = [];
    // Client 0 keeps to one thread, which a follower watches through the balancer.
    const watched = uid('rolling-watched');
    const follower = followAcross(`${lb.origin}/agui/threads/${watched}/events?resourceId=${RESOURCE}`);
    const client = async (c: number) => {
      for (let n = 0; deploying || n < 2; n++) {
        const message = `client ${c} run ${n} ${'word '.repeat(15)}`.trim();
        const input = runInput({
          threadId: c === 0 ? watched : uid(`rolling-${c}`),
          messages: [userMessage(message)],
          forwardedProps: { resourceId: RESOURCE },
        });
        const res = await postRun(`${lb.origin}/agui/run`, input);
        expect(res.status).toBe(200);
        const events: AnyEvent[] = [];
        for await (const event of sseEvents(res.body!)) events.push(event);
        runs.push({ message, runId: input.runId, events });
      }
    };
    const load = Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
    await replace(0);
    await replace(1);
    deploying = false;
    await load;

    expect(runs.length).toBeGreaterThanOrEqual(CLIENTS * 2);
    const cut = runs.filter(
      ({ message, events }) => events.at(-1)?.type !== 'RUN_FINISHED' || events.at(-1)?.outcome !== undefined || text(events) !== `Echo: ${message}`,
    );
    expect(cut.map(({ events }) => events.at(-1))).toEqual([]);

    // The follower: every run of its thread once and whole, ids one after the other across its reconnects, no snapshot needed.
    const watchedRuns = runs.filter((r) => r.message.startsWith('client 0 '));
    await expect
      .poll(() => brackets(follower.events().map((e) => e.event)).filter((b) => b.at(-1)?.type === 'RUN_FINISHED').length, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(watchedRuns.length);
    await follower.stop();
    expect(follower.streams()).toBeGreaterThan(1);
    const ids = follower.events().map((e) => e.id);
    expect(ids).toEqual(ids.map((_, i) => ids[0] + i));
    const seen = brackets(follower.events().map((e) => e.event));
    expect(seen.some((b) => b.some((e) => e.type === 'MESSAGES_SNAPSHOT'))).toBe(false);
    expect(seen.map((b) => b[0].runId)).toEqual(watchedRuns.map((r) => r.runId));
    console.info(
      `rolling restart: ${runs.length} runs, none cut; ${lb.retried} requests refused by a draining process went to the other; the follower came back ${follower.streams() - 1} time(s) and missed nothing`,
    );
  });
});
