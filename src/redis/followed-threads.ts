import { randomUUID } from 'node:crypto';
import { LuaScript } from './pubsub/index.js';
import type { RedisConnection } from './connection.js';

/** Redis's clock in milliseconds: every process reads one clock, however skewed the hosts are. */
const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * Marks a thread log followed by one process until now + ttl, forgets lapsed marks, and (on the
 * first mark) tells every process. KEYS: the thread's set. ARGV: member, ttl, channel, log key, announce.
 */
const FOLLOW = new LuaScript(`${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if ARGV[5] == '1' then redis.call('PUBLISH', ARGV[3], ARGV[4]) end
return 1
`);

/** The members whose mark has not lapsed. KEYS: the thread's set. */
const LIVE = new LuaScript(`${NOW}
return redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf')
`);

/** How long a process's mark lasts unless renewed (every third of it). */
const FOLLOW_TTL_MS = 15_000;

/** Mastra's key of the thread a log key (`agent \0 resource \0 thread`) belongs to: `resource \0 thread`. */
export const threadKeyOfLog = (logKey: string) => logKey.slice(logKey.indexOf('\0') + 1);

/**
 * Which thread logs are followed: a process with a client on a thread's stream marks the log
 * followed while it keeps the feed, so that whichever process runs a run on the thread writes it
 * into the log (`RedisEventLogs`). One sorted set per Mastra thread, a member per process and log
 * (`<process> <log key>`) scored by when its mark lapses: a dead process drops out within `ttlMs`.
 *
 * @example
 * const followed = new FollowedThreads(redis);
 * followed.onFollowed((logKey) => …); // a process started following a log
 * const mark = followed.follow('demo\0alice\0trip-7'); // renewed until mark.stop()
 * await other.logsOf('alice\0trip-7'); // ['demo\0alice\0trip-7'], in another process
 */
export class FollowedThreads {
  private readonly owner = randomUUID();
  private readonly channel: string;

  constructor(
    private readonly redis: RedisConnection,
    private readonly ttlMs = FOLLOW_TTL_MS,
  ) {
    this.channel = `${redis.prefix}:followed`;
  }

  /** Listens for logs that a process starts following (its first mark). */
  async onFollowed(listener: (logKey: string) => void): Promise<void> {
    await this.redis.subscriber.subscribe(this.channel, listener);
  }

  /**
   * Marks `logKey` followed by this process, now and every third of the TTL until `stop()`.
   * A failed mark (Redis away) is tried again at the next renewal; `onError` hears of it.
   */
  follow(logKey: string, onError: (error: unknown) => void): { stop(): void } {
    const member = `${this.owner} ${logKey}`;
    const mark = (announce: boolean) =>
      FOLLOW.run(this.redis.client, [this.keyOf(threadKeyOfLog(logKey))], [member, String(this.ttlMs), this.channel, logKey, announce ? '1' : '0']).catch(
        onError,
      );
    void mark(true);
    const timer = setInterval(() => void mark(false), this.ttlMs / 3);
    timer.unref();
    return {
      stop: () => {
        clearInterval(timer);
        void this.redis.client.zRem(this.keyOf(threadKeyOfLog(logKey)), member).catch(onError);
      },
    };
  }

  /** The logs of a Mastra thread (`resource \0 thread`) that another process follows now. */
  async logsOf(threadKey: string): Promise<string[]> {
    const members = (await LIVE.run(this.redis.client, [this.keyOf(threadKey)], [])) as string[];
    const others = members.filter((m) => !m.startsWith(`${this.owner} `));
    return [...new Set(others.map((m) => m.slice(m.indexOf(' ') + 1)))];
  }

  async followed(logKey: string): Promise<boolean> {
    return (await this.logsOf(threadKeyOfLog(logKey))).includes(logKey);
  }

  private keyOf(threadKey: string): string {
    return `${this.redis.prefix}:followed:${encodeURIComponent(threadKey)}`;
  }
}
