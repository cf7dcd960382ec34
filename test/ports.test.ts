import type { Event } from '@ag-ui/core';
import { ContainerModule, injectable } from 'inversify';
import { describe, expect, it } from 'vitest';
import {
  TOKENS,
  type IdempotencyRecord,
  type IdempotencyStore,
  type NumberedEvent,
  type NumberedListener,
  type ThreadEventLog,
  type ThreadEventLogs,
} from '../src/index.js';
import { http, useTestBridge } from './support/server.js';
import { follow, newThread, post } from './support/threads.js';

// The container's ports are a public seam: a host rebinds one with a class of its own through
// `createBridge({ modules })`, and the bridge uses it in place of the in-process one.

/** What the host's event log saw: the threads it opened, the events it numbered. */
const opened: string[] = [];
const appended: Event[] = [];

/** A port written as a user would: a thread's events in an array, numbered from 1000. */
@injectable()
class ArrayEventLogs implements ThreadEventLogs {
  async open(key: string): Promise<ThreadEventLog> {
    opened.push(key);
    const held: NumberedEvent[] = [];
    let listener: NumberedListener = () => {};
    return {
      baseId: 1000,
      get lastId() {
        return held.at(-1)?.id ?? 1000;
      },
      append: (events) => {
        const first = (held.at(-1)?.id ?? 1000) + 1;
        events.forEach((event, i) => held.push({ id: first + i, event }));
        appended.push(...events);
        listener(events, first);
      },
      onEvents: (next) => (listener = next),
      since: (id) => held.filter((e) => e.id > id),
      close: () => {},
    };
  }
}

describe('a port rebound by the host (createBridge({ modules }))', () => {
  const b = useTestBridge({
    config: { modules: [new ContainerModule(({ rebind }) => void rebind<ThreadEventLogs>(TOKENS.EventLogs).to(ArrayEventLogs))] },
  });

  it("the thread's events stream is numbered by the host's event log, and every event went through it", async () => {
    const t = newThread();
    const sse = await follow(b, t);
    const sent = await post(b, t, 'send-message', { message: 'hello' });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    await sse.waitForCount('RUN_FINISHED', 1);
    await sse.close();

    expect(opened).toEqual([expect.stringContaining(t.threadId)]);
    expect(sse.events.map((e) => e.id)).toEqual(sse.events.map((_, i) => 1001 + i));
    expect(appended.map((e) => e.type)).toEqual(sse.list.map((e) => e.type));
  });
});

/** The idempotency port written as a user would, from the package's exported interface: a map. */
const kept = new Map<string, IdempotencyRecord>();
@injectable()
class MapIdempotencyStore implements IdempotencyStore {
  async get(threadId: string, key: string) {
    return kept.get(`${threadId}/${key}`);
  }
  async put(threadId: string, key: string, record: IdempotencyRecord) {
    kept.set(`${threadId}/${key}`, record);
  }
  async delete(threadId: string, key: string) {
    kept.delete(`${threadId}/${key}`);
  }
}

describe('the idempotency store rebound by the host', () => {
  const b = useTestBridge({
    config: { modules: [new ContainerModule(({ rebind }) => void rebind<IdempotencyStore>(TOKENS.IdempotencyStore).to(MapIdempotencyStore))] },
  });

  it('keeps the first answer to an Idempotency-Key in the host’s store, and a retry gets it back from there', async () => {
    const t = newThread();
    const send = () =>
      http(`${b.base}/threads/${t.threadId}/send-message`, { body: { resourceId: t.resourceId, message: 'hello' }, headers: { 'Idempotency-Key': 'k-1' } });
    const first = await send();
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    expect([...kept.keys()]).toEqual([expect.stringContaining(t.threadId)]);
    expect([...kept.values()][0]).toMatchObject({ status: 202, body: first.body });
    expect(await send()).toMatchObject({ status: 202, body: first.body });
  });
});
