import type { Event } from '@ag-ui/core';
import { ContainerModule, injectable } from 'inversify';
import { describe, expect, it } from 'vitest';
import { TOKENS, type NumberedEvent, type NumberedListener, type ThreadEventLog, type ThreadEventLogs } from '../src/index.js';
import { useTestBridge } from './support/server.js';
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
