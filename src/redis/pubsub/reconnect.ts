/** Backoff between reconnects once connected: 50 ms doubling, at most 2 s. */
const backoff = (retries: number) => Math.min(50 * 2 ** retries, 2000);

/**
 * node-redis's `reconnectStrategy` for a client whose first connect fails at once when Redis is
 * not reachable (with the socket's error, rather than retrying for ever as node-redis would), and
 * that reconnects by itself once it was connected: call `connected()` then.
 *
 * @example
 * const reconnect = failFastThenReconnect();
 * const client = createClient({ url, socket: { reconnectStrategy: reconnect.strategy } });
 * await client.connect();
 * reconnect.connected();
 */
export function failFastThenReconnect(): { strategy: (retries: number, cause: Error) => number | Error; connected: () => void } {
  let up = false;
  return {
    strategy: (retries, cause) => (up ? backoff(retries) : cause),
    connected: () => {
      up = true;
    },
  };
}
