import type { Mastra } from '@mastra/core';
import { inject, injectable } from 'inversify';
import type { ResolvedConfig } from '../config.js';
import { TOKENS } from '../tokens.js';
import { threadStateStore, type ThreadStates } from '../mastra/index.js';

/**
 * The first successful answer to a request that carried an `Idempotency-Key`: what a retry with
 * the same key gets again.
 */
export interface IdempotencyRecord {
  /** The HTTP status of the first answer (2xx: errors are never remembered). */
  status: number;
  /** The JSON body of the first answer. */
  body: unknown;
  /** A hash of the first request's body: the same key with another body is a conflict. */
  fingerprint: string;
  /** When the record stops counting (epoch milliseconds): later, the key is free again. */
  expiresAt: number;
}

/**
 * Where the answers to idempotent requests are kept, by thread and record key (a hash of the
 * route, the caller's resource and the client's key). One binding in the container; the default,
 * `MastraIdempotencyStore`, keeps them in Mastra's storage, so a retry after a restart is still
 * recognised. It only stores: expiry, fingerprints and locking are the caller's.
 *
 * @example
 * await store.put(threadId, key, { status: 202, body, fingerprint, expiresAt: Date.now() + ttl });
 * await store.get(threadId, key); // the record, until it is overwritten
 */
export interface IdempotencyStore {
  get(threadId: string, key: string): Promise<IdempotencyRecord | undefined>;
  /** Writes the record, replacing any earlier one under the same key. */
  put(threadId: string, key: string, record: IdempotencyRecord): Promise<void>;
  delete(threadId: string, key: string): Promise<void>;
}

/** The `type` namespace of the bridge's records in Mastra's thread-state domain. */
export const IDEMPOTENCY_STATE_TYPE = 'mastra-agui-bridge.idempotency';

/** The thread-state slot (`threadId`, `type`) of a record. */
const slot = (threadId: string, key: string) => ({ threadId, type: `${IDEMPOTENCY_STATE_TYPE}:${key}` });

/**
 * Records kept in Mastra's `threadState` storage domain (the `mastra_thread_state` table with
 * LibSQL), one row per key under the type `mastra-agui-bridge.idempotency:<key>`: they survive a
 * restart with a durable storage, and every process on that database sees them. A Mastra without
 * that domain (no storage at all) gets records held in this process, with a warning.
 */
@injectable()
export class MastraIdempotencyStore implements IdempotencyStore {
  private records?: Promise<IdempotencyStore>;

  constructor(
    @inject(TOKENS.Mastra) private readonly mastra: Mastra,
    @inject(TOKENS.Config) private readonly config: ResolvedConfig,
  ) {}

  async get(threadId: string, key: string): Promise<IdempotencyRecord | undefined> {
    return (await this.store()).get(threadId, key);
  }

  async put(threadId: string, key: string, record: IdempotencyRecord): Promise<void> {
    return (await this.store()).put(threadId, key, record);
  }

  async delete(threadId: string, key: string): Promise<void> {
    return (await this.store()).delete(threadId, key);
  }

  /** The records over Mastra's thread-state domain, looked up once (by the first request with a key). */
  private store(): Promise<IdempotencyStore> {
    if (!this.records) {
      const records = (async (): Promise<IdempotencyStore> => {
        const domain = await threadStateStore(this.mastra);
        if (domain) return new ThreadStateRecords(domain);
        this.config.logger.warn(
          'Mastra has no storage with a threadState domain: Idempotency-Key records are kept in this process only, and forgotten on restart',
        );
        return new InProcessIdempotencyStore();
      })();
      this.records = records;
      // A lookup that failed (storage unreachable) is tried again by the next request.
      records.catch(() => {
        if (this.records === records) this.records = undefined;
      });
    }
    return this.records;
  }
}

/** The records as rows of Mastra's thread-state domain. */
class ThreadStateRecords implements IdempotencyStore {
  constructor(private readonly domain: ThreadStates) {}

  async get(threadId: string, key: string): Promise<IdempotencyRecord | undefined> {
    return (await this.domain.getState<IdempotencyRecord>(slot(threadId, key))) ?? undefined;
  }

  async put(threadId: string, key: string, record: IdempotencyRecord): Promise<void> {
    await this.domain.setState({ ...slot(threadId, key), value: record });
  }

  async delete(threadId: string, key: string): Promise<void> {
    await this.domain.deleteState(slot(threadId, key));
  }
}

/** Records held in a map of this process: lost on restart, not shared. For tests and storage-less setups. */
export class InProcessIdempotencyStore implements IdempotencyStore {
  private readonly records = new Map<string, IdempotencyRecord>();

  async get(threadId: string, key: string): Promise<IdempotencyRecord | undefined> {
    return structuredClone(this.records.get(JSON.stringify([threadId, key])));
  }

  async put(threadId: string, key: string, record: IdempotencyRecord): Promise<void> {
    this.records.set(JSON.stringify([threadId, key]), structuredClone(record));
  }

  async delete(threadId: string, key: string): Promise<void> {
    this.records.delete(JSON.stringify([threadId, key]));
  }
}
