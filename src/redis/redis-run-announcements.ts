import { inject, injectable, unmanaged } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import type { BridgeLogger } from '../logger.js';
import type { RunAnnouncement, RunAnnouncements } from '../runs/run-announcements.js';
import { TOKENS } from '../tokens.js';
import { errorMessage } from '../text.js';
import type { RedisConnection } from './connection.js';
import { redisKeys, type RedisKeys } from './keys.js';

export interface RedisRunAnnouncementsOptions {
  /** How long an announcement outlives its run (a follower may read the run's chunks later than the run itself). Default 30 000, as in one process. */
  keepAfterRunMs?: number;
  /** How long an announcement lives while its run runs: only reached when the run's process died before `ended()`. Default 24 h. */
  runningTtlMs?: number;
}

/**
 * `RunAnnouncements` shared by every process on one Redis: announced where the run runs, read by
 * every process's feeds. Each is one JSON key, its TTL shortened to `keepAfterRunMs` when the run
 * ends; a newer one for the run id sets a fresh TTL, so an earlier `ended()` does not drop it.
 *
 * @example
 * const announcements = new RedisRunAnnouncements(await connectRedis(url, 'bridge'), config);
 * await announcements.announce(runId, { messages: [userMessage] }); // process A
 * await announcements.get(runId);                                   // process B: { messages: [userMessage] }
 */
@injectable()
export class RedisRunAnnouncements implements RunAnnouncements {
  private readonly keys: RedisKeys;
  private readonly keepAfterRunMs: number;
  private readonly runningTtlMs: number;
  private readonly logger: BridgeLogger;

  constructor(
    @inject(TOKENS.Redis) private readonly redis: RedisConnection,
    @inject(TOKENS.Config) config: ResolvedConfig,
    @unmanaged() options: RedisRunAnnouncementsOptions = {},
  ) {
    this.keys = redisKeys(redis.prefix);
    this.keepAfterRunMs = options.keepAfterRunMs ?? 30_000;
    this.runningTtlMs = options.runningTtlMs ?? 24 * 3600 * 1000;
    this.logger = config.logger;
  }

  async announce(runId: string, announcement: RunAnnouncement): Promise<void> {
    await this.redis.client.set(this.keys.announce(runId), JSON.stringify(announcement), { expiration: { type: 'PX', value: this.runningTtlMs } });
  }

  ended(runId: string): void {
    this.redis.client
      .pExpire(this.keys.announce(runId), this.keepAfterRunMs)
      .catch((error: unknown) =>
        this.logger.warn(`Run ${runId}: could not shorten its announcement's TTL (it expires within ${this.runningTtlMs} ms): ${errorMessage(error)}`),
      );
  }

  async get(runId: string): Promise<RunAnnouncement | undefined> {
    const json = await this.redis.client.get(this.keys.announce(runId));
    return json === null ? undefined : (JSON.parse(json) as RunAnnouncement);
  }
}
