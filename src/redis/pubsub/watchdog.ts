/** The parts of a node-redis client the watchdog touches. */
export interface WatchedClient {
  readonly isReady: boolean;
  readonly socketEpoch: number;
  ping(): Promise<unknown>;
  destroy(): void;
  connect(): Promise<unknown>;
}

export interface WatchdogOptions {
  /** How often a ready connection is pinged. Default 500 ms. */
  intervalMs?: number;
  /** How long a ping may take before the connection counts as hung and is replaced. Default 1000 ms. */
  timeoutMs?: number;
  /** How much longer than its `BLOCK` a blocking read may take before its connection is replaced. Default 1500 ms. */
  blockGraceMs?: number;
  /** Told each time a hung connection was replaced (for the log and the metrics). */
  onReplaced?: (reason: string) => void;
}

/** A watchdog on one connection: `stop()` at close; blocking reads go through `blocking()`. */
export interface Watchdog {
  stop(): void;
  /** Runs a read that blocks up to `blockMs` (`XREAD … BLOCK`), replacing the connection if it takes much longer. */
  blocking<T>(blockMs: number, read: () => Promise<T>): Promise<T>;
}

/**
 * Replaces a connection that stays open but stops answering (a proxy or balancer whose backend went
 * away): node-redis itself never notices, its commands wait for ever, and its own pings stop at the
 * first that hangs. Every `intervalMs` a ready connection is pinged; one that does not answer
 * within `timeoutMs` is dropped and opened again on the same client object, so what it waited on
 * fails at once (`DisconnectsClientError`, an outage to its caller), subscriptions are made again
 * by node-redis, and whoever holds the client keeps it. A blocking read gets a deadline instead
 * (`blocking`).
 *
 * @example
 * const client = createClient({ url, disableOfflineQueue: true, socket: { socketTimeout: 2000, reconnectStrategy } });
 * await client.connect();
 * const watchdog = watchConnection(client, { onReplaced: (why) => logger.warn(`Redis connection replaced: ${why}`) });
 * await watchdog.blocking(5000, () => client.xRead(streams, { BLOCK: 5000 }));
 * watchdog.stop();
 */
export function watchConnection(client: WatchedClient, options: WatchdogOptions = {}): Watchdog {
  const { intervalMs = 500, timeoutMs = 1000, blockGraceMs = 1500, onReplaced } = options;
  let blocked = 0;
  let pinging = false;
  // Only a connection that is still the one that hung, and ready: while node-redis reconnects by
  // itself, a second connect would race its own.
  const replace = (epoch: number, reason: string) => {
    if (client.socketEpoch !== epoch || !client.isReady) return;
    client.destroy();
    client.connect().catch(() => {
      // node-redis goes on reconnecting by its strategy; its 'error' listener reports why
    });
    onReplaced?.(reason);
  };
  const check = async () => {
    if (!client.isReady || pinging) return;
    // Blocked, the connection answers only after its read: the ping is only written, to keep
    // `socketTimeout` from firing; the read's own deadline catches a hang.
    if (blocked > 0) return void client.ping().catch(() => undefined);
    pinging = true;
    const epoch = client.socketEpoch;
    const answered = await within(client.ping(), timeoutMs);
    pinging = false;
    if (!answered) replace(epoch, `no answer to PING within ${timeoutMs} ms`);
  };
  const timer = setInterval(() => void check(), intervalMs);
  timer.unref();
  return {
    stop: () => clearInterval(timer),
    async blocking(blockMs, read) {
      blocked++;
      const epoch = client.socketEpoch;
      const deadline = setTimeout(() => replace(epoch, `a blocking read took over ${blockMs + blockGraceMs} ms`), blockMs + blockGraceMs);
      try {
        return await read();
      } finally {
        clearTimeout(deadline);
        blocked--;
      }
    },
  };
}

/** Whether `promise` settled (either way) within `ms`. */
function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const settled = promise.then(
    () => true,
    () => true,
  );
  return Promise.race([settled, late]).finally(() => clearTimeout(timer));
}
