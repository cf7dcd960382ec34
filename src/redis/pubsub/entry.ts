import type { Event } from '@mastra/core/events';
import { deserialize, serialize } from './codec.js';

/**
 * The Redis key names of one `RedisPubSub`, all under its prefix.
 *
 * @example
 * const keys = pubsubKeys('mastra');
 * keys.topic('workflows');   // 'mastra:topic:workflows'
 * keys.lease('thread-7');    // 'mastra:lease:thread-7'
 */
export function pubsubKeys(prefix: string) {
  return {
    topic: (topic: string) => `${prefix}:topic:${topic}`,
    /** A lease: its value is the owner, its TTL the lease's. */
    lease: (key: string) => `${prefix}:lease:${key}`,
    /** The instance holding a lease (beside it, with the same TTL). */
    holder: (key: string) => `${prefix}:lease-holder:${key}`,
    /** What every instance's heartbeat key starts with (the scripts add the instance). */
    alivePrefix: `${prefix}:alive:`,
    /** An instance's heartbeat: there while it lives. */
    alive: (instanceId: string) => `${prefix}:alive:${instanceId}`,
    /** Set once when a run is first found to have lost its instance. */
    goneRun: (runId: string) => `${prefix}:gone-run:${runId}`,
    /** One instance's wake-up stream: an entry there ends its fan-out reader's blocking read. */
    wake: (instanceId: string) => `${prefix}:wake:${instanceId}`,
  };
}

export type PubSubKeys = ReturnType<typeof pubsubKeys>;

export type EntryFields = Record<string, string>;

/**
 * A stream entry's fields: `e` the event as JSON (see `codec.ts`), `a` its delivery attempt, and
 * `g` on a redelivery after a nack: the one consumer group it is meant for (the other groups of
 * the topic and its fan-out subscribers skip it; it was theirs already).
 */
export interface StoredEntry {
  event: Event;
  attempt: number;
  group?: string;
}

/**
 * The fields to `XADD` for an event (its first delivery). The event is serialised here, once;
 * its `deliveryAttempt` is the `a` field's to say.
 *
 * @example
 * await client.xAdd(key, '*', entryFields(event));
 */
export function entryFields(event: Event): EntryFields {
  const { deliveryAttempt: _attempt, ...stored } = event;
  return { e: serialize(stored), a: '1' };
}

/**
 * The fields of a redelivery of an entry read earlier: its event text as it was (not decoded and
 * encoded again), its next attempt, addressed to one group.
 */
export function retryFields(fields: EntryFields, attempt: number, group: string): EntryFields {
  return { e: fields.e, a: String(attempt), g: group };
}

/** XADD's trimming: `MAXLEN ~ max` (Redis trims whole nodes, cheaply); none for 0. */
export function trimming(maxStreamLength: number) {
  return maxStreamLength > 0 ? { TRIM: { strategy: 'MAXLEN' as const, strategyModifier: '~' as const, threshold: maxStreamLength } } : undefined;
}

/**
 * Reads an entry back; `undefined` when it is not one of ours (no or broken `e` field).
 *
 * @example
 * const entry = readEntry(message.message);
 * if (entry) deliver({ ...entry.event, deliveryAttempt: entry.attempt });
 */
export function readEntry(fields: EntryFields): StoredEntry | undefined {
  if (typeof fields.e !== 'string') return undefined;
  let event: Event;
  try {
    event = deserialize(fields.e) as Event;
  } catch {
    return undefined;
  }
  if (!event || typeof event !== 'object') return undefined;
  return { event, attempt: attemptOf(fields), group: fields.g };
}

function attemptOf(fields: EntryFields): number {
  const attempt = Number(fields.a);
  return Number.isInteger(attempt) && attempt > 0 ? attempt : 1;
}

/**
 * Orders two stream ids (`<ms>-<seq>`) as Redis does: negative when `a` comes first.
 *
 * @example
 * compareIds('1700000000000-2', '1700000000000-10'); // < 0
 */
export function compareIds(a: string, b: string): number {
  const [aMs, aSeq] = splitId(a);
  const [bMs, bSeq] = splitId(b);
  if (aMs !== bMs) return aMs < bMs ? -1 : 1;
  return aSeq === bSeq ? 0 : aSeq < bSeq ? -1 : 1;
}

/** Both parts can pass 2^53: compared as bigints. */
function splitId(id: string): [bigint, bigint] {
  const dash = id.indexOf('-');
  return dash === -1 ? [BigInt(id), 0n] : [BigInt(id.slice(0, dash)), BigInt(id.slice(dash + 1))];
}

/** The id before every entry. */
export const START_ID = '0-0';
