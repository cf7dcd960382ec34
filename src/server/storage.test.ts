import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MastraCompositeStore, ThreadStateStorage } from '@mastra/core/storage';
import { LibSQLStore } from '@mastra/libsql';
import { PostgresStore } from '@mastra/pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedPostgres, type IsolatedPostgres } from '../../test/support/services.js';
import { readServerEnv } from './env.js';
import { createStorage, parseDatabaseUrl } from './storage.js';

describe('parseDatabaseUrl', () => {
  it("takes file:, :memory: and the libSQL client's schemes as LibSQL, unchanged", () => {
    for (const url of [
      'file:.data/bridge.db',
      ':memory:',
      'file::memory:',
      'libsql://db.turso.io?authToken=t',
      'https://db.turso.io',
      'wss://db.example.com',
    ]) {
      expect(parseDatabaseUrl(url)).toEqual({ kind: 'libsql', url });
    }
  });

  it('takes postgres:// and postgresql:// as PostgreSQL, the connection string as written', () => {
    for (const url of ['postgres://app:secret@db:5432/bridge', 'postgresql://app@db/bridge?sslmode=require', 'POSTGRES://db/bridge']) {
      expect(parseDatabaseUrl(url)).toEqual({ kind: 'postgres', connectionString: url });
    }
  });

  it('takes ?schema= out of the connection string and keeps every other parameter as written', () => {
    expect(parseDatabaseUrl('postgres://app@db/bridge?schema=agui')).toEqual({
      kind: 'postgres',
      connectionString: 'postgres://app@db/bridge',
      schemaName: 'agui',
    });
    expect(parseDatabaseUrl('postgres://app@db/bridge?sslmode=require&schema=Tenant_7&application_name=a%20b')).toEqual({
      kind: 'postgres',
      connectionString: 'postgres://app@db/bridge?sslmode=require&application_name=a%20b',
      schemaName: 'Tenant_7',
    });
  });

  it('refuses a schema that is not a plain identifier, or one given twice', () => {
    for (const schema of ['', 'a-b', '1abc', 'x";drop schema public;--', 'x%22', `s${'x'.repeat(63)}`]) {
      expect(() => parseDatabaseUrl(`postgres://db/bridge?schema=${schema}`)).toThrow(/not a plain identifier/);
    }
    expect(() => parseDatabaseUrl('postgres://db/bridge?schema=a&schema=b')).toThrow(/more than once/);
  });

  it('refuses any other URL with the schemes it supports, and never repeats the URL (it may hold a password)', () => {
    for (const url of ['mysql://root:hunter2@db/bridge', 'redis://:hunter2@cache:6379', 'bridge.db', 'hunter2', '']) {
      let message = '';
      try {
        parseDatabaseUrl(url);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/file:<path>, :memory:, libsql:\/\/…, or postgres:\/\//);
      expect(message).not.toContain('hunter2');
    }
  });
});

describe('readServerEnv: DATABASE_URL and REDIS_URL', () => {
  it('keeps the default DATABASE_URL, and names the problem with an unsupported one', () => {
    expect(readServerEnv({}).DATABASE_URL).toBe('file:.data/bridge.db');
    expect(readServerEnv({ DATABASE_URL: 'postgres://db/bridge?schema=agui' }).DATABASE_URL).toBe('postgres://db/bridge?schema=agui');
    expect(() => readServerEnv({ DATABASE_URL: 'mysql://db/bridge' })).toThrow(/^Invalid environment: DATABASE_URL: its scheme "mysql:" is not supported/);
    expect(() => readServerEnv({ DATABASE_URL: '' })).toThrow(/^Invalid environment: DATABASE_URL: it is empty: use file:/);
    expect(() => readServerEnv({ DATABASE_URL: 'postgres://db/bridge?schema=a-b' })).toThrow(/DATABASE_URL: \?schema=a-b is not a plain identifier/);
  });

  it('reads REDIS_URL when set, as a redis:// or rediss:// URL only', () => {
    expect(readServerEnv({}).REDIS_URL).toBeUndefined();
    expect(readServerEnv({ REDIS_URL: 'redis://127.0.0.1:6379' }).REDIS_URL).toBe('redis://127.0.0.1:6379');
    expect(readServerEnv({ REDIS_URL: 'rediss://:pw@cache.example.com:6380/2' }).REDIS_URL).toBe('rediss://:pw@cache.example.com:6380/2');
    for (const REDIS_URL of ['', 'http://cache:6379', '127.0.0.1:6379', 'redis']) {
      expect(() => readServerEnv({ REDIS_URL })).toThrow(/REDIS_URL: must be a redis:\/\/host:6379 or rediss:\/\/host:6380 URL/);
    }
  });
});

/** A thread-state value set, read back, and deleted: what the durable inbox and idempotency records do. */
async function roundTrip(storage: MastraCompositeStore): Promise<void> {
  const state = (await storage.getStore('threadState')) as ThreadStateStorage;
  const slot = { threadId: 'thread-1', type: 'mastra-agui-bridge.inbox' };
  const value = [{ id: 'm1', kind: 'send', message: { text: 'hi' }, acceptedAt: 1_700_000_000_000 }];
  await state.setState({ ...slot, value });
  expect(await state.getState(slot)).toEqual(value);
  await state.deleteState(slot);
  expect(await state.getState(slot)).toBeUndefined();
}

describe('createStorage on LibSQL', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'agui-storage-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('creates the folder of a file: database, keeps thread state, and closes (twice is fine)', async () => {
    const storage = await createStorage(`file:${join(dir, 'nested', 'folder', 'bridge.db')}`);
    expect(storage).toBeInstanceOf(LibSQLStore);
    expect(existsSync(join(dir, 'nested', 'folder'))).toBe(true);
    await storage.init();
    await roundTrip(storage);
    await storage.close();
    await storage.close();
  });
});

describe('createStorage on PostgreSQL', () => {
  let db: IsolatedPostgres;
  beforeAll(async () => {
    db = await isolatedPostgres('storage');
  });
  afterAll(() => db?.cleanup());

  it('puts its tables in the ?schema= schema, has the domains the bridge uses, and closes its pool', async () => {
    const storage = (await createStorage(db.url)) as PostgresStore;
    expect(storage).toBeInstanceOf(PostgresStore);
    await storage.init();
    for (const domain of ['memory', 'workflows', 'backgroundTasks', 'notifications', 'threadState'] as const) {
      expect(await storage.getStore(domain), domain).toBeDefined();
    }
    await roundTrip(storage);
    const tables = await db.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [db.schema]);
    expect(tables.map((t) => t.table_name)).toEqual(
      expect.arrayContaining(['mastra_thread_state', 'mastra_messages', 'mastra_notifications', 'mastra_workflow_snapshot']),
    );
    await storage.close();
    expect(storage.pool.ended).toBe(true);
    await storage.close();
  });
});
