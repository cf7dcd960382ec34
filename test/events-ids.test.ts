import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { http, startTestBridge, useTestBridge, type TestBridge } from './support/server.js';
import { brackets, openSse, type IdEvent, type SseReader } from './support/sse.js';
import { eventsUrl, expectValidStream, follow, newThread, post, type Thread } from './support/threads.js';

// The contract of the events stream's ids: an id names one event forever (across restarts and
// released feeds), ids only grow per thread, any id the stream cannot replay exactly gets a
// snapshot run and then live events, and no client's id changes what the other followers get.

const SNAPSHOT_RUN = ['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED'];

/** Sends a message and expects Mastra to wake the idle thread. */
async function wake(b: TestBridge, t: Thread, message: string): Promise<{ runId: string; signalId: string }> {
  const res = await post(b, t, 'send-message', { message });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expect(res.body.action).toBe('wake');
  return res.body;
}

/** Opens the stream with an id to resume from, in the header or in `?lastEventId=`. */
function openWithId(b: TestBridge, t: Thread, how: 'header' | 'query', id: number | string): Promise<SseReader> {
  return how === 'header' ? openSse(eventsUrl(b, t), { lastEventId: id }) : openSse(eventsUrl(b, t, `&lastEventId=${id}`));
}

/** Each id exactly one above the one before: the feed's own sequence, nothing skipped or moved. */
function expectContiguous(events: IdEvent[]): void {
  for (let i = 1; i < events.length; i++) expect(events[i].id, `frame ${i}`).toBe(events[i - 1].id + 1);
}

/** The stream opened with a snapshot run whose last frame alone carries the position (the others no id); returns it. */
function expectSnapshotFirst(sse: SseReader): number {
  expect(sse.list.slice(0, 3).map((e) => e.type)).toEqual(SNAPSHOT_RUN);
  const frames = sse.frames.filter((f) => f.event).slice(0, 3);
  expect(frames.map((f) => f.id)).toEqual([undefined, undefined, expect.any(Number)]);
  return frames[2].id!;
}

/** The texts of the messages in the stream's first `MESSAGES_SNAPSHOT`. */
function snapshotTexts(sse: SseReader): unknown[] {
  const snapshot = sse.list.find((e) => e.type === 'MESSAGES_SNAPSHOT');
  return (snapshot?.messages as Array<{ content?: unknown }>).map((m) => m.content);
}

describe('an id the feed cannot replay: a snapshot run, then live on the same open stream', () => {
  // A long linger: a feed whose only client left stays, with its events, for the "alone" cases.
  const b = useTestBridge({ config: { subscriptionLingerMs: 60_000 } });

  for (const how of ['header', 'query'] as const) {
    for (const stale of ['above', 'below'] as const) {
      for (const history of [false, true]) {
        for (const others of [false, true]) {
          const name = `${stale} what the feed handed out, by ${how}, ${history ? 'after' : 'before'} the feed has events, ${others ? 'with' : 'without'} other followers`;
          it(name, async () => {
            const t = newThread();
            // Two followers that stay: `reference` and `other` see the stale client arrive.
            const followers = others ? [await follow(b, t), await follow(b, t)] : [];
            let handedOut: number | undefined;
            if (history) {
              const first = followers[0] ?? (await follow(b, t));
              await wake(b, t, 'before the stale client');
              await Promise.all([first, ...followers].map((f) => f.waitForCount('RUN_FINISHED', 1)));
              handedOut = first.events.at(-1)?.id;
              if (!others) await first.close(); // the feed lingers with its events, and nobody follows
            }
            // Above: 500 past the newest id, or (no events yet) a minute ahead of the clock base.
            // Below: a small id such as a client kept from before ids came from the clock.
            const staleId = stale === 'below' ? 24 : handedOut !== undefined ? handedOut + 500 : (Date.now() + 60_000) * 1000;

            const client = await openWithId(b, t, how, staleId);
            expect(client.status).toBe(200);
            await client.waitForCount('RUN_FINISHED', 1);
            const position = expectSnapshotFirst(client);
            // The snapshot carries the feed's own position, not the client's id.
            if (handedOut !== undefined) expect(position).toBe(handedOut);
            expect(position).not.toBe(staleId);
            if (history) expect(snapshotTexts(client)).toEqual(['before the stale client', 'Echo: before the stale client']);
            else expect(snapshotTexts(client)).toEqual([]);

            // Live events arrive on the same open connection, right after the snapshot's position.
            const { runId } = await wake(b, t, 'after the stale client');
            await client.waitForCount('RUN_FINISHED', 2);
            expect(client.end).toBeUndefined();
            expect(client.events[3]).toEqual({ id: position + 1, event: expect.objectContaining({ type: 'RUN_STARTED', runId }) });
            expectContiguous(client.events.slice(3));
            await expectValidStream(client.list);

            if (others) {
              const [reference, other] = followers;
              await Promise.all(followers.map((f) => f.waitForCount('RUN_FINISHED', history ? 2 : 1)));
              // The followers' ids went on as if the stale client never came: one unbroken sequence.
              expectContiguous(reference.events);
              expect(other.events).toEqual(reference.events);
              expect(client.events.slice(3)).toEqual(reference.events.filter((e) => e.id > position));
            }
            await Promise.all([client, ...followers].map((s) => s.close()));
          });
        }
      }
    }
  }

  it('the bug report as filed: a live feed with events, Last-Event-ID: 500, and the stream stays open with a snapshot', async () => {
    const t = newThread();
    const following = await follow(b, t);
    await wake(b, t, 'so that events exist');
    await following.waitForCount('RUN_FINISHED', 1);
    const late = await openSse(eventsUrl(b, t), { lastEventId: 500 });
    await late.waitForCount('RUN_FINISHED', 1);
    expectSnapshotFirst(late);
    expect(late.end).toBeUndefined();
    await Promise.all([following.close(), late.close()]);
  });
});

describe('a client cut inside a snapshot bracket', () => {
  const b = useTestBridge({ config: { subscriptionLingerMs: 60_000 } });

  // Cut after each frame of the bracket, the client comes back with the id it holds then (as an
  // EventSource would): before the bracket's last frame that is its id from before, which gets the
  // whole snapshot again; after it, the position, which resumes live with nothing skipped.
  for (const opened of ['with an id the feed cannot replay', 'with ?snapshot=1 and no id'] as const) {
    for (const cutAfter of [1, 2, 3]) {
      it(`${opened}, cut after frame ${cutAfter} of ${SNAPSHOT_RUN.length}: back for the whole snapshot, or live after it`, async () => {
        const t = newThread();
        const following = await follow(b, t);
        await wake(b, t, 'history to snapshot');
        await following.waitForCount('RUN_FINISHED', 1);
        const stale = opened === 'with an id the feed cannot replay';
        const open = (id: number) =>
          Number.isNaN(id) ? openSse(eventsUrl(b, t, stale ? '' : '&snapshot=1')) : openSse(eventsUrl(b, t, stale ? '' : '&snapshot=1'), { lastEventId: id });
        const first = await open(stale ? 1 : Number.NaN);
        await first.waitFor(() => first.events.length >= cutAfter, `${cutAfter} frame(s)`);
        const held = first.events[cutAfter - 1].id;
        await first.close();
        expect(Number.isNaN(held) || held === 1).toBe(cutAfter < SNAPSHOT_RUN.length);

        const back = await open(held);
        await back.waitForComment('connected');
        await wake(b, t, 'and a live run');
        await back.waitForEvent((e) => e.type === 'TEXT_MESSAGE_CONTENT');
        await back.waitForEvent(
          (e) => e.type === 'RUN_FINISHED',
          back.list.findIndex((e) => e.type === 'TEXT_MESSAGE_CONTENT'),
        );
        const received = [...first.list.slice(0, cutAfter), ...back.list];
        if (cutAfter < SNAPSHOT_RUN.length) expectSnapshotFirst(back);
        else expect(back.list.map((e) => e.type)).not.toContain('MESSAGES_SNAPSHOT');
        // Either way the client holds one whole snapshot bracket, then the live run.
        const snapshots = brackets(received).filter((r) => r.some((e) => e.type === 'MESSAGES_SNAPSHOT'));
        expect(snapshots.at(-1)!.map((e) => e.type)).toEqual(SNAPSHOT_RUN);
        await Promise.all([following.close(), back.close()]);
      });
    }
  }
});

describe('Last-Event-ID: 999999999999999 moves nothing', () => {
  const b = useTestBridge({ config: { subscriptionLingerMs: 60_000 } });

  it('every follower can still reconnect with its own last id and is replayed exactly: no 400, no snapshot', async () => {
    const t = newThread();
    const [a, c] = [await follow(b, t), await follow(b, t)];
    await wake(b, t, 'one');
    await Promise.all([a, c].map((s) => s.waitForCount('RUN_FINISHED', 1)));
    await a.close();
    const lastOfA = a.events.at(-1)?.id as number;

    // Unknown ids, below and far above anything handed out: a snapshot each, at the feed's position.
    const poisons = [
      await openSse(eventsUrl(b, t), { lastEventId: '999999999999999' }),
      await openSse(eventsUrl(b, t, `&lastEventId=${Number.MAX_SAFE_INTEGER}`)),
    ];
    for (const p of poisons) {
      expect(p.status).toBe(200);
      await p.waitForCount('RUN_FINISHED', 1);
      expect(expectSnapshotFirst(p)).toBe(lastOfA);
    }

    const { runId } = await wake(b, t, 'two');
    await Promise.all([c, ...poisons].map((s) => s.waitForCount('RUN_FINISHED', 2)));
    expect(c.events.find((e) => e.event.type === 'RUN_STARTED' && e.event.runId === runId)?.id).toBe(lastOfA + 1);
    expectContiguous(c.events);

    // `a` comes back with its own id: exactly what it missed.
    const aBack = await openSse(eventsUrl(b, t), { lastEventId: lastOfA });
    expect(aBack.status).toBe(200);
    await aBack.waitForCount('RUN_FINISHED', 1);
    expect(aBack.events).toEqual(c.events.filter((e) => e.id > lastOfA));

    // `c` and the poisoned clients leave and come back with their own last ids: nothing missed, nothing twice.
    const lasts = [c, ...poisons].map((s) => s.events.at(-1)?.id as number);
    await Promise.all([c, ...poisons].map((s) => s.close()));
    const backs = await Promise.all(lasts.map((id, i) => openWithId(b, t, i % 2 === 0 ? 'header' : 'query', id)));
    for (const back of backs) expect(back.status).toBe(200);
    await wake(b, t, 'three');
    await Promise.all([aBack.waitForCount('RUN_FINISHED', 2), ...backs.map((s) => s.waitForCount('RUN_FINISHED', 1))]);
    for (const back of backs) {
      expect(back.list.map((e) => e.type)).not.toContain('MESSAGES_SNAPSHOT');
      expect(back.events).toEqual(aBack.events.slice(-back.events.length));
      expect(back.events[0].id).toBe(lasts[0] + 1);
    }
    await Promise.all([aBack, ...backs].map((s) => s.close()));
  });
});

describe('ids across a restart on the same LibSQL database', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'agui-ids-restart-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('new ids are above every id from before; a client with a pre-restart id gets a snapshot with the runs it missed', async () => {
    const databaseUrl = `file:${join(dir, 'ids.db')}`;
    const t = newThread();
    const before = await startTestBridge({ databaseUrl });
    let earlier: IdEvent[];
    let leftAt: number;
    try {
      const stayed = await follow(before, t);
      const left = await follow(before, t);
      await wake(before, t, 'first run');
      await Promise.all([stayed, left].map((s) => s.waitForCount('RUN_FINISHED', 1)));
      await left.close();
      leftAt = left.events.at(-1)?.id as number;
      await wake(before, t, 'missed before the restart');
      await stayed.waitForCount('RUN_FINISHED', 2);
      earlier = stayed.events;
      await stayed.close();
    } finally {
      await before.close();
    }

    const after = await startTestBridge({ databaseUrl });
    try {
      // The new feed hands out ids first (enough to cover the old numbering, were it to start over).
      const stayed = await follow(after, t);
      await wake(after, t, 'missed after the restart');
      await stayed.waitForCount('RUN_FINISHED', 1);
      const newest = Math.max(...earlier.map((e) => e.id));
      for (const { id } of stayed.events) expect(id).toBeGreaterThan(newest);

      const back = await openSse(eventsUrl(after, t), { lastEventId: leftAt });
      await back.waitForCount('RUN_FINISHED', 1);
      const position = expectSnapshotFirst(back);
      expect(position).toBe(stayed.events.at(-1)?.id);
      expect(snapshotTexts(back)).toEqual([
        'first run',
        'Echo: first run',
        'missed before the restart',
        'Echo: missed before the restart',
        'missed after the restart',
        'Echo: missed after the restart',
      ]);
      const { runId } = await wake(after, t, 'live again');
      await Promise.all([stayed.waitForCount('RUN_FINISHED', 2), back.waitForCount('RUN_FINISHED', 2)]);
      expect(back.events[3]).toEqual({ id: position + 1, event: expect.objectContaining({ type: 'RUN_STARTED', runId }) });
      expect(back.events.slice(3)).toEqual(stayed.events.filter((e) => e.id > position));
      await expectValidStream(back.list);
      await Promise.all([stayed.close(), back.close()]);
    } finally {
      await after.close();
    }
  });
});

describe('a released feed and its successor (subscriptionLingerMs: 0)', () => {
  const b = useTestBridge({ config: { subscriptionLingerMs: 0 } });

  it('ids keep growing feed after feed, and the last id of a released feed gets a snapshot, never a replay', async () => {
    const t = newThread();
    const live: number[] = [];
    let last: number | undefined;
    for (let round = 0; round < 4; round++) {
      const sse = last === undefined ? await follow(b, t) : await openSse(eventsUrl(b, t), { lastEventId: last });
      await wake(b, t, `round ${round}`);
      await sse.waitForCount('RUN_FINISHED', last === undefined ? 1 : 2);
      let events = sse.events;
      if (last !== undefined) {
        // The feed was released with its ring: what came after `last` is unknown to the new one.
        // Its snapshot resumes at or above `last` (ids never go back for this client).
        expect(expectSnapshotFirst(sse)).toBeGreaterThanOrEqual(last);
        events = events.slice(3);
      }
      live.push(...events.map((e) => e.id));
      last = sse.events.at(-1)?.id;
      await sse.close();
      await vi.waitFor(() => expect(b.bridge.subscriptionCount()).toBe(0));
    }
    // Over all four feeds: every live id above the one before, so never the same id twice.
    for (let i = 1; i < live.length; i++) expect(live[i], `id ${i}`).toBeGreaterThan(live[i - 1]);
  });
});

describe('ids that are not ids: 400 INVALID_INPUT', () => {
  const b = useTestBridge();

  const bad = ['abc', '-1', '1.5', '1e3', '0x10', '12345678901234567', '99999999999999999999', String(Number.MAX_SAFE_INTEGER + 1)];
  for (const id of bad) {
    it(`Last-Event-ID: ${id}`, async () => {
      const t = newThread();
      const res = await http(eventsUrl(b, t), { headers: { 'last-event-id': id } });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'INVALID_INPUT', error: 'Invalid header' });
      expect(res.body.details[0].path).toBe('header.last-event-id');
    });

    it(`?lastEventId=${id}`, async () => {
      const t = newThread();
      const res = await http(eventsUrl(b, t, `&lastEventId=${encodeURIComponent(id)}`));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'INVALID_INPUT', error: 'Invalid query' });
      expect(res.body.details[0].path).toBe('query.lastEventId');
    });
  }

  it('a 16-digit id that is not a safe integer says what the limit is', async () => {
    const res = await http(eventsUrl(b, newThread()), { headers: { 'last-event-id': '9007199254740992' } });
    expect(res.body.details).toEqual([{ path: 'header.last-event-id', message: `must be at most ${Number.MAX_SAFE_INTEGER}` }]);
  });

  it('the largest safe integer, and 0, are valid ids: a snapshot', async () => {
    const t = newThread();
    for (const id of [String(Number.MAX_SAFE_INTEGER), '0']) {
      const sse = await openSse(eventsUrl(b, t), { lastEventId: id });
      expect(sse.status).toBe(200);
      await sse.waitForCount('RUN_FINISHED', 1);
      expectSnapshotFirst(sse);
      await sse.close();
    }
  });
});
