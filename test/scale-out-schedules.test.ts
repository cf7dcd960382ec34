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

const scheduleAction = (server: ServerProcess, id: string, action: 'pause' | 'resume') =>
  http(`${server.url}/schedules/${id}/${action}`, { body: { resourceId: RESOURCE } });

/**
 * Each tick fired once: no two fires for one scheduled time; one prompt in history per fire that
 * carried it, and at most one answer per prompt (one that joined an active run is answered in a
 * message of its own), an answer for each run a fire woke. The schedule is paused while this reads
 * (under load a fire comes before the last one's run has stored its messages) and resumed after.
 * Each of the `kills` before may have cut one fire short: its trigger stored, its prompt or its
 * answer not yet.
 */
async function onceEach(server: ServerProcess, threadId: string, scheduleId: string, kills = 0): Promise<void> {
  expect((await scheduleAction(server, scheduleId, 'pause')).status).toBe(200);
  const times = (await triggersOn(server, scheduleId)).filter((t) => t.kind === 'schedule').map((t) => t.scheduledFireAt);
  expect(new Set(times).size).toBe(times.length);
  await expect
    .poll(
      async () => {
        const triggers = await triggersOn(server, scheduleId);
        const messages = await history(server, threadId);
        const count = (role: string) => messages.filter((m) => m.role === role).length;
        const [prompts, answers] = [count('signal'), count('assistant')];
        const woke = triggers.filter((t) => t.outcome === 'succeeded').length;
        const carried = triggers.filter((t) => CARRIED.has(t.outcome)).length;
        return { prompted: prompts >= carried - kills && prompts <= carried, answered: answers >= woke - kills && answers <= prompts };
      },
      { timeout: 20_000, interval: 200 },
    )
    .toEqual({ prompted: true, answered: true });
  expect((await scheduleAction(server, scheduleId, 'resume')).status).toBe(200);
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
