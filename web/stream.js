// Follows a thread's event stream with EventSource. The browser reconnects by itself after a
// dropped connection, sending Last-Event-ID; when it gives up (an error answer, a server that is
// gone for good), this reopens the stream with ?lastEventId= after a backoff.

/** @typedef {'connecting' | 'live' | 'reconnecting' | 'closed'} ConnectionState */

export class ThreadStream {
  /**
   * @param {object} options
   * @param {(query: Record<string, string>) => string} options.url builds the events URL for a query
   * @param {number | undefined} options.lastEventId resume after this id (a reloaded page)
   * @param {(event: object, id: number | undefined) => void} options.onEvent
   * @param {(state: ConnectionState, detail?: string) => void} options.onState
   */
  constructor({ url, lastEventId, onEvent, onState }) {
    this.url = url;
    this.lastEventId = lastEventId;
    this.onEvent = onEvent;
    this.onState = onState;
    this.source = undefined;
    this.timer = undefined;
    this.failures = 0;
    this.closed = false;
    this.state = undefined;
  }

  open() {
    this.setState(this.state === undefined ? 'connecting' : 'reconnecting');
    // First open: a snapshot run hydrates the history. After a reload (or when the browser gave
    // up): resume after the last id this page applied; EventSource cannot send headers on its
    // first request, hence the query parameter.
    const query = this.lastEventId === undefined ? { snapshot: '1' } : { lastEventId: String(this.lastEventId) };
    const source = new EventSource(this.url(query));
    this.source = source;
    source.onopen = () => {
      this.failures = 0;
      this.setState('live');
    };
    source.onmessage = (message) => {
      if (this.closed || source !== this.source) return;
      const id = message.lastEventId === '' ? undefined : Number(message.lastEventId);
      if (id !== undefined && Number.isFinite(id)) this.lastEventId = id;
      let event;
      try {
        event = JSON.parse(message.data);
      } catch {
        return;
      }
      this.onEvent(event, id);
    };
    source.onerror = () => {
      if (this.closed || source !== this.source) return;
      if (source.readyState === EventSource.CONNECTING) {
        // The browser reconnects by itself, with Last-Event-ID.
        this.setState('reconnecting', 'the connection dropped; resuming');
        return;
      }
      // CLOSED: the browser gave up. Reopen ourselves, backing off.
      source.close();
      this.failures++;
      const delay = Math.min(15000, 1000 * 2 ** (this.failures - 1));
      this.setState('reconnecting', `retrying in ${Math.round(delay / 1000)} s`);
      this.timer = setTimeout(() => this.open(), delay);
    };
  }

  /** Drops the connection as a network failure would (for demos and devtools). */
  drop() {
    if (!this.source) return;
    this.source.close();
    this.setState('reconnecting', 'dropped by hand');
    this.timer = setTimeout(() => this.open(), 200);
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    this.source?.close();
    this.setState('closed');
  }

  setState(state, detail) {
    this.state = state;
    this.onState(state, detail);
  }
}
