import { ContainerModule } from 'inversify';
import type { ThreadEventLogs } from '../feed/event-log.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import type { RunAnnouncements } from '../runs/run-announcements.js';
import type { ToolProxy } from '../runs/tool-proxy.js';
import type { ThreadControl } from '../threads/thread-control.js';
import type { Resumer } from '../runs/resume.js';
import type { ThreadLocks } from '../threads/thread-locks.js';
import type { HolderWatch } from '../threads/thread-lease.js';
import { TOKENS } from '../tokens.js';
import type { RedisConnection } from './connection.js';
import { RedisEventLogs } from './redis-event-log.js';
import { RedisRateLimiter } from './redis-rate-limiter.js';
import { RedisRunAnnouncements } from './redis-run-announcements.js';
import { RedisThreadControl } from './redis-thread-control.js';
import type { LocalLeases } from './thread-holders.js';
import { RedisThreadLocks } from './redis-thread-locks.js';
import type { LocalThreadRuns } from './thread-runs.js';
import { RedisToolProxy } from './redis-tool-proxy.js';

/**
 * The container's ports shared by every process on one Redis, loaded in place of the in-process
 * bindings (`container.ts`). `createScaleOut` makes it: only then is this code loaded at all.
 */
export function redisBindings(redis: RedisConnection, leases: LocalLeases, runs: LocalThreadRuns, holders: HolderWatch): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind<RedisConnection>(TOKENS.Redis).toConstantValue(redis);
    bind<LocalLeases>(TOKENS.Leases).toConstantValue(leases);
    bind<LocalThreadRuns>(TOKENS.ThreadRuns).toConstantValue(runs);
    bind<HolderWatch>(TOKENS.HolderWatch).toConstantValue(holders);
    bind<ThreadEventLogs>(TOKENS.EventLogs).to(RedisEventLogs);
    bind<ToolProxy>(TOKENS.ToolProxy).to(RedisToolProxy);
    bind<ThreadLocks>(TOKENS.ThreadLocks).to(RedisThreadLocks);
    bind<RunAnnouncements>(TOKENS.RunAnnouncements).to(RedisRunAnnouncements);
    bind<ThreadControl>(TOKENS.ThreadControl).to(RedisThreadControl);
    // The process where a run stopped resumes it: one more request to a thread's holder.
    bind<Resumer>(TOKENS.Resumer).toService(TOKENS.ThreadControl);
    bind<RateLimiter>(TOKENS.RateLimiter).to(RedisRateLimiter);
  });
}
