import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uid } from './support/agui.js';
import { createCluster, history, RESOURCE, type Cluster } from './support/cluster.js';
import type { ServerProcess } from './support/process.js';
import { http } from './support/server.js';

/**
 * Schedules across processes (docs/schedules.md "Where it runs"): every process's scheduler
 * ticks on the shared PostgreSQL, and each fire happens once; when a process dies (`kill -9`) the
 * others go on firing its schedules, and a process started again on the same database finds them.
 */
let cluster: Cluster;
let a: ServerProcess;
let b: ServerProcess;

beforeAll(async () => {
  cluster = await createCluster('schedules', { SCHEDULER_TICK_MS: '200', SCHEDULE_MIN_INTERVAL_S: '1', DEMO_DELAY_MS: '0' });
  a = await cluster.start();
  b = await cluster.start();
}, 60_000);
afterAll(() => cluster?.close());

type Trigger = { scheduledFireAt: string; kind: string; outcome: string; runId?: string };

const triggersOn = async (server: ServerProcess, id: string) =>
  (await http(`${server.url}/schedules/${id}/triggers?resourceId=${RESOURCE}&limit=500`)).body as Trigger[];

/** Polls `server` until the schedule has fired `count` times in all. */
async function firedTimes(server: ServerProcess, id: string, count: number): Promise<void> {
  await expect.poll(async () => (await triggersOn(server, id)).length, { timeout: 30_000, interval: 200 }).toBeGreaterThanOrEqual(count);
}

/** The fires that put their prompt on the thread: one that woke a run, joined the active one, or was kept for the next. */
const CARRIED = new Set(['succeeded', 'delivered', 'persisted']);

/**
 * Each tick fired once: no two fires for one scheduled time; one prompt in history per fire that
 * carried it; at most one answer per prompt (one that joined an active run may be answered in that
 * run's own message), and one for each run a fire woke but those `kills` may have cut short. The
 * schedule fires on while this reads, so the triggers and the history are read again until one
 * reading agrees.
 */
async function onceEach(server: ServerProcess, threadId: string, scheduleId: string, kills = 0): Promise<void> {
  const times = (await triggersOn(server, scheduleId)).filter((t) => t.kind === 'schedule').map((t) => t.scheduledFireAt);
  expect(new Set(times).size).toBe(times.length);
  await expect
    .poll(
      async () => {
        const triggers = await triggersOn(server, scheduleId);
        const messages = await history(server, threadId);
        const count = (role: string) => messages.filter((m) => m.role === role).length;
        const answers = count('assistant');
        const woke = triggers.filter((t) => t.outcome === 'succeeded').length;
        const carried = triggers.filter((t) => CARRIED.has(t.outcome)).length;
        return { prompts: count('signal') === carried, answered: answers >= woke - kills && answers <= carried };
      },
      { timeout: 20_000, interval: 200 },
    )
    .toEqual({ prompts: true, answered: true });
}

describe('a schedule on a cluster of two', { timeout: 120_000 }, () => {
  it('fires once per tick whichever process ticks; after a kill -9 the other fires on; a restart on the same database finds it and fires it', async () => {
    const { id: threadId } = (await http(`${a.url}/threads`, { body: { resourceId: RESOURCE, threadId: uid('scheduled') } })).body as { id: string };
    const created = await http(`${a.url}/threads/${threadId}/schedules`, { body: { resourceId: RESOURCE, cron: '*/2 * * * * *', prompt: 'tick' } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;

    await firedTimes(b, id, 3);
    await onceEach(b, threadId, id);

    await cluster.kill(a);
    const beforeKill = (await triggersOn(b, id)).length;
    await firedTimes(b, id, beforeKill + 2);
    await onceEach(b, threadId, id, 1);

    await cluster.kill(b);
    const c = await cluster.start();
    expect((await http(`${c.url}/schedules/${id}?resourceId=${RESOURCE}`)).body).toMatchObject({ id, status: 'active', threadId });
    const beforeRestart = (await triggersOn(c, id)).length;
    await firedTimes(c, id, beforeRestart + 2);
    await onceEach(c, threadId, id, 2);
  });
});
