import type { Event, EventCallback } from '@mastra/core/events';
import type { InFlight } from './in-flight.js';

/** What a `RedisPubSub` writes its diagnostics to; Mastra's loggers fit. */
export interface PubSubLogger {
  debug?(message: string, ...args: unknown[]): void;
  warn?(message: string, ...args: unknown[]): void;
  error?(message: string, ...args: unknown[]): void;
}

/** What happens to a delivery once its subscriber settled it; each runs at most once. */
export interface Settlement {
  ack(): Promise<void>;
  nack(): Promise<void>;
}

/**
 * Hands one event to a callback. Whichever of `ack`, `nack` or the callback's rejection comes first
 * settles the delivery; later calls do nothing (an ack then a throw must not redeliver it). The
 * callback's promise is not awaited: the next event is delivered at once (the PubSub contract).
 *
 * @example
 * deliver(cb, event, { ack: () => xAck(id), nack: () => retry(id) }, logger, 'workflows');
 */
export function deliver(cb: EventCallback, event: Event, settlement: Settlement, logger: PubSubLogger, topic: string): void {
  let settled = false;
  const once = (step: () => Promise<void>) => async () => {
    if (settled) return;
    settled = true;
    await step();
  };
  const ack = once(() => settlement.ack());
  const nack = once(() => settlement.nack());
  let returned: unknown;
  try {
    returned = cb(event, ack, nack);
  } catch (error) {
    // A callback's throw is settled as its rejection would be, whatever it threw.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passed on as thrown
    returned = Promise.reject(error);
  }
  if (!isPromiseLike(returned)) return;
  Promise.resolve(returned)
    .then(
      () => undefined,
      (error: unknown) => {
        logger.warn?.(`[RedisPubSub] subscriber of ${topic} failed on ${event.type}; the delivery counts as a nack`, error);
        return nack();
      },
    )
    .catch((error: unknown) => logger.error?.(`[RedisPubSub] could not nack a delivery on ${topic}`, error));
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return !!value && typeof (value as { then?: unknown }).then === 'function';
}

export interface LocalRedelivery {
  maxDeliveryAttempts: number;
  inFlight: InFlight;
  logger: PubSubLogger;
}

/**
 * Settlement of a delivery with nothing to acknowledge in Redis (a fan-out read, or a `localOnly`
 * event): `ack` has nothing to do; `nack` hands the event to `again` with the next attempt, on a
 * later turn of the event loop, until `maxDeliveryAttempts` deliveries were made (then it is
 * dropped, with a warning). `flush()` waits for redeliveries still scheduled.
 *
 * @example
 * deliver(cb, event, localSettlement(event, (next) => deliver(cb, next, …), context, topic), logger, topic);
 */
export function localSettlement(event: Event, again: (next: Event) => void, context: LocalRedelivery, topic: string): Settlement {
  return {
    ack: async () => {},
    nack: async () => {
      const attempt = event.deliveryAttempt ?? 1;
      if (attempt >= context.maxDeliveryAttempts) {
        context.logger.warn?.(`[RedisPubSub] dropped ${event.type} on ${topic} after ${attempt} delivery attempts`);
        return;
      }
      const next: Event = { ...event, deliveryAttempt: attempt + 1 };
      context.inFlight.track(new Promise<void>((resolve) => setImmediate(() => resolve(again(next)))));
    },
  };
}
