import type { Event } from '@ag-ui/core';

/** Where a feed writes one client's events: in the server, the SSE writer (`sse/EventStream`). */
export interface FeedSink {
  /** Queues events; with `firstId` each frame carries `id: <firstId + index>`, without it none does (the client keeps its last id). */
  send(events: readonly Event[], firstId?: number): void;
  /** Like `send`, for event objects that go to many clients: each is encoded once for all of them. */
  sendShared(events: readonly Event[], firstId: number): void;
  /** Writes raw protocol text (a keep-alive comment); ignored where the format has none. */
  raw(text: string): void;
  /** Bytes written that the client has not taken yet: how far behind it is. */
  readonly queuedBytes: number;
  /** Breaks the stream off (a client too slow to keep up); `onCancel` listeners run. */
  abort(reason: string): void;
  /** Ends the stream after what is queued. */
  close(): void;
  /** Runs `listener` once if the stream ends before `close()`: the client left, or was cut off. */
  onCancel(listener: () => void): void;
}
