import { inject, injectable } from 'inversify';
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { ResolvedConfig } from '../config.js';
import type { BridgeMetrics } from '../observability/metrics.js';
import type { RunEnd, RunEndListener } from '../observability/run-tracker.js';
import { TOKENS } from '../tokens.js';
import { errorMessage } from '../text.js';
import { GIVE_UP_AFTER_MS, retryDelayMs } from './backoff.js';
import { runEndPayload } from './payload.js';
import { postJson } from './post.js';
import { type OutboxEntry, WebhookOutbox } from './webhook-outbox.js';

/** A receiver that has not answered by then has failed the attempt. */
const ATTEMPT_TIMEOUT_MS = 10_000;
/** How long a claim outlives the attempt's timeout: past it, another process sends the entry. */
const CLAIM_MS = ATTEMPT_TIMEOUT_MS + 5_000;
/** How often the outbox is read when nothing is due sooner: what another process left (it died) is found then. */
const POLL_MS = 5_000;
/** Attempts in flight at once from one process. */
const PARALLEL = 16;

/**
 * Sends the webhooks of run endings (`config.webhooks`): each end is written to the outbox, then
 * POSTed to every URL, signed (Standard Webhooks: `webhook-id`, `webhook-timestamp`,
 * `webhook-signature`), until a `2xx` answers, with backoff, for about a day. No run waits for it:
 * the end is told after its terminal event, and the outbox is written on its own time.
 *
 * @example
 * sender.start();           // with the bridge
 * sender.runEnded(end);     // by RunTracker, for every run
 * sender.stop();            // at shutdown: what is left is sent after the restart
 */
@injectable()
export class WebhookSender implements RunEndListener {
  private readonly settings: NonNullable<ResolvedConfig['webhooks']>;
  private readonly signer: Webhook;
  private timer?: NodeJS.Timeout;
  /** When the timer fires (epoch ms). */
  private timerAt = Infinity;
  private reading?: Promise<void>;
  private stopped = true;
  /** Run endings the outbox could not take yet (storage away), oldest first. */
  private readonly unstored: OutboxEntry[][] = [];
  /** Entries this process stored, claimed from birth, waiting for a free slot: sent with no outbox read. */
  private readonly ready: OutboxEntry[] = [];
  private readonly inFlight = new Set<string>();
  /** This process's name on its claims. */
  private readonly owner = randomUUID();

  constructor(
    @inject(TOKENS.Config) private readonly config: ResolvedConfig,
    @inject(WebhookOutbox) private readonly outbox: WebhookOutbox,
    @inject(TOKENS.Metrics) private readonly metrics: BridgeMetrics,
  ) {
    if (!config.webhooks) throw new Error('WebhookSender is bound only with config.webhooks');
    this.settings = config.webhooks;
    this.signer = new Webhook(config.webhooks.secret);
    metrics.trackOutboxDepth(() => this.outbox.depth);
  }

  runEnded(end: RunEnd): void {
    const now = Date.now();
    const webhookId = `msg_${randomUUID()}`;
    const body = JSON.stringify(runEndPayload(end, new Date(now)));
    // Claimed by this process as they are written: the other processes leave them to it.
    const entries = this.settings.urls.map((url, i): OutboxEntry => ({
      id: `${webhookId}.${i}`,
      threadId: end.threadId,
      webhookId,
      url,
      body,
      createdAt: now,
      attempts: 0,
      nextAt: now,
      claimedUntil: now + CLAIM_MS,
      claimedBy: this.owner,
    }));
    void this.store(entries);
  }

  /** Sends what the outbox holds (what a crash left too), then whatever comes. Idempotent. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.wakeBy(Date.now());
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timerAt = Infinity;
  }

  /** Into the outbox, then sent; with storage away, kept here and stored by a later read. */
  private async store(entries: OutboxEntry[]): Promise<void> {
    try {
      await this.outbox.add(entries);
      this.ready.push(...entries);
      this.dispatch();
    } catch (error) {
      this.unstored.push(entries);
      this.wakeBy(Date.now() + POLL_MS);
      this.config.logger.warn(`Webhook ${entries[0]?.webhookId}: the outbox could not be written (tried again in ${POLL_MS / 1000} s): ${errorMessage(error)}`);
    }
  }

  /** Sends the ready entries while fewer than `PARALLEL` are in flight: a receiver that hangs holds up its own slots only. */
  private dispatch(): void {
    if (this.stopped) return;
    while (this.inFlight.size < PARALLEL && this.ready.length > 0) this.launch(this.ready.shift()!);
  }

  private launch(entry: OutboxEntry): void {
    this.inFlight.add(entry.id);
    void this.send(entry).finally(() => {
      this.inFlight.delete(entry.id);
      this.dispatch();
    });
  }

  /** Reads the outbox at `at` at the latest (an earlier wake-up stands). */
  private wakeBy(at: number): void {
    if (this.stopped || at >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timerAt = Infinity;
        this.reading ??= this.read().finally(() => (this.reading = undefined));
      },
      Math.max(0, at - Date.now()),
    );
    this.timer.unref();
  }

  /**
   * Reads the outbox: stores what storage refused, and takes what is due and unclaimed (retries,
   * what a dead process left); then sleeps till the next is due, at most `POLL_MS`.
   */
  private async read(): Promise<void> {
    let next = Date.now() + POLL_MS;
    try {
      while (this.unstored.length > 0) {
        await this.outbox.add(this.unstored[0]);
        this.ready.push(...this.unstored.shift()!);
      }
      this.dispatch();
      const { due, nextAt } = await this.outbox.due(Date.now());
      const ready = new Set(this.ready.map((entry) => entry.id));
      const free = due.filter((entry) => !this.inFlight.has(entry.id) && !ready.has(entry.id));
      // Their claims have lapsed (`due`): each is claimed again at its attempt.
      for (const entry of free.slice(0, Math.max(0, PARALLEL - this.inFlight.size))) this.launch(entry);
      if (nextAt !== undefined) next = Math.min(next, nextAt);
    } catch (error) {
      this.config.logger.warn(`Webhooks: the outbox could not be read: ${errorMessage(error)}`);
    }
    this.wakeBy(next);
  }

  private async send(entry: OutboxEntry): Promise<void> {
    try {
      await this.attempt(entry);
    } catch (error) {
      // Storage away: the claim lapses and the entry is tried again.
      this.config.logger.warn(`Webhook ${entry.webhookId}: the outbox could not be written: ${errorMessage(error)}`);
    }
  }

  private async attempt(entry: OutboxEntry): Promise<void> {
    const now = Date.now();
    // Claimed at birth, if that claim still covers an attempt; else claimed now (or taken by another).
    const covered = (entry.claimedUntil ?? 0) - ATTEMPT_TIMEOUT_MS > now;
    if (!covered && !(await this.outbox.claim(entry, this.owner, now, now + CLAIM_MS))) return;
    const failure = await this.post(entry);
    // Each counted once the outbox holds what it means.
    if (failure === undefined) {
      await this.outbox.delivered(entry);
      this.metrics.webhookAttempt('delivered');
      return;
    }
    const nextAt = Date.now() + retryDelayMs(entry.attempts + 1);
    if (nextAt - entry.createdAt > GIVE_UP_AFTER_MS) {
      await this.outbox.delivered(entry);
      this.metrics.webhookAttempt('given_up');
      this.config.logger.error(`Webhook ${entry.webhookId} to ${entry.url} given up after ${entry.attempts + 1} attempts: ${failure}`);
      return;
    }
    await this.outbox.failed(entry, nextAt);
    this.wakeBy(nextAt);
    this.metrics.webhookAttempt('retried');
    this.config.logger.warn(
      `Webhook ${entry.webhookId} to ${entry.url} failed (${failure}); attempt ${entry.attempts + 2} in ${Math.round((nextAt - Date.now()) / 1000)} s`,
    );
  }

  /** One signed POST; undefined when a `2xx` answered, else why not. */
  private async post(entry: OutboxEntry): Promise<string | undefined> {
    const at = new Date();
    const headers = {
      'webhook-id': entry.webhookId,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': this.signer.sign(entry.webhookId, at, entry.body),
    };
    try {
      const status = await postJson(entry.url, headers, entry.body, ATTEMPT_TIMEOUT_MS);
      return status >= 200 && status < 300 ? undefined : `HTTP ${status}`;
    } catch (error) {
      return errorMessage(error);
    }
  }
}
