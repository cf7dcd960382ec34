import { Mastra } from '@mastra/core';
import { InMemoryStore } from '@mastra/core/storage';
import { describe, expect, it } from 'vitest';
import { storageReady } from './registry.js';

/** A storage whose first `failures` inits fail, as the losers' do while another process creates the tables. */
class InitFails extends InMemoryStore {
  inits = 0;
  constructor(private failures: number) {
    super();
  }
  override async init(): Promise<void> {
    this.inits++;
    if (this.failures-- > 0) throw new Error('multiple primary keys for table "mastra_ai_spans" are not allowed');
    return super.init();
  }
}

describe('storageReady', () => {
  it("tries Mastra's storage init again, waiting twice as long each time, until it succeeds", async () => {
    const storage = new InitFails(2);
    const retries: number[] = [];
    await storageReady(new Mastra({ storage, logger: false }), { firstWaitMs: 1, onRetry: (_error, waitMs) => retries.push(waitMs) });
    expect(retries).toEqual([1, 2]);
    expect(storage.inits).toBe(3);
  });

  it('gives up with the last error after the attempts', async () => {
    const storage = new InitFails(5);
    await expect(storageReady(new Mastra({ storage, logger: false }), { attempts: 3, firstWaitMs: 1 })).rejects.toThrow(/multiple primary keys/);
    expect(storage.inits).toBe(3);
  });
});
