/** Keeps a ':' inside an id from making two names collide (`a:b` + `c` and `a` + `b:c`). */
const part = (id: string) => encodeURIComponent(id);

/**
 * The Redis key (and channel) names of the cross-process services, under one prefix. A name serves
 * both as a key and as the channel announcing its changes: Redis keeps the two apart.
 *
 * @example
 * const keys = redisKeys('bridge');
 * keys.lock('thread-7');          // 'bridge:lock:thread-7'
 * keys.tool('run-1', 'call-2');   // 'bridge:tool:run-1:call-2'
 */
export function redisKeys(prefix: string) {
  return {
    /** A lock's holder (its token), expiring unless renewed. Also the channel its release is published on. */
    lock: (id: string) => `${prefix}:lock:${part(id)}`,
    /** A lock's waiters, first come first served (score: arrival, in microseconds). */
    lockQueue: (id: string) => `${prefix}:lock:${part(id)}:queue`,
    /** When each waiter of a lock gives up its place unless it tries again (score: deadline, in ms). */
    lockAlive: (id: string) => `${prefix}:lock:${part(id)}:alive`,
    /** A frontend call's slot: `resource`, `state`, `answer`. Also the channel its answer is announced on. */
    tool: (runId: string, toolCallId: string) => `${prefix}:tool:${part(runId)}:${part(toolCallId)}`,
    announce: (runId: string) => `${prefix}:announce:${part(runId)}`,
    /** Requests of a resource in one window of the rate limit (expires with the window). */
    rate: (resourceId: string, window: number) => `${prefix}:rate:${part(resourceId)}:${window}`,
  };
}

export type RedisKeys = ReturnType<typeof redisKeys>;
