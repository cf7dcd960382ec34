import { rateLimited } from '../errors.js';
import type { RateLimiter } from './rate-limiter.js';
import { Slots } from './slots.js';

/** The caps of `BridgeConfig.limits`; each one unset is no cap. */
export interface LimitsOptions {
  requestsPerMinute?: number;
  streamsPerResource?: number;
  streams?: number;
  runsPerResource?: number;
}

/** Which limit refused a request: the label of the refusal counter. */
export type LimitName = 'requests_per_minute' | 'streams_per_resource' | 'streams' | 'runs_per_resource';

/** How long a client refused a stream or run slot should wait: slots free as streams end, no clock to read. */
const SLOT_RETRY_SEC = 5;

/**
 * The bridge's limits on callers: requests per minute on `/run` and the steering routes, open
 * event streams (per resource and in total), runs streaming at once per resource. Each refusal is
 * a `429 RATE_LIMITED` with `Retry-After`, and is told to `onRefused` (the metrics).
 *
 * @example
 * await limits.admitRequest(resourceId);       // /run, send-message, …
 * const release = limits.openStream(resourceId); // GET …/events
 * out.onCancel(release);
 */
export class Limits {
  private readonly streams: Slots;
  private readonly runs: Slots;

  constructor(
    options: LimitsOptions,
    private readonly rate: RateLimiter | undefined,
    private readonly onRefused: (limit: LimitName) => void = () => {},
  ) {
    this.streams = new Slots({ perKey: options.streamsPerResource, total: options.streams });
    this.runs = new Slots({ perKey: options.runsPerResource });
  }

  /** Counts one rate-limited request of `resourceId`; throws `429` past the limit. */
  async admitRequest(resourceId: string): Promise<void> {
    if (!this.rate) return;
    const decision = await this.rate.take(resourceId);
    if (decision.allowed) return;
    this.onRefused('requests_per_minute');
    throw rateLimited('Too many requests for this resource: slow down', decision.retryAfterSec);
  }

  /** Takes an event-stream slot of `resourceId`: the release to call when the stream ends. */
  openStream(resourceId: string): () => void {
    const slot = this.streams.acquire(resourceId);
    if (typeof slot === 'function') return slot;
    const limit = slot === 'total' ? 'streams' : 'streams_per_resource';
    this.onRefused(limit);
    throw rateLimited(slot === 'total' ? 'Too many open event streams on this server' : 'Too many open event streams for this resource', SLOT_RETRY_SEC);
  }

  /** `/run`s held in this process, from their run slot until their stream ends: what a drain waits on. */
  get runsInProgress(): number {
    return this.runs.held();
  }

  /** Takes a run slot of `resourceId`: the release to call when the run ends. */
  startRun(resourceId: string): () => void {
    const slot = this.runs.acquire(resourceId);
    if (typeof slot === 'function') return slot;
    this.onRefused('runs_per_resource');
    throw rateLimited('Too many runs streaming at once for this resource', SLOT_RETRY_SEC);
  }
}
