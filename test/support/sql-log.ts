import { createClient } from '@libsql/client';
import type { SqliteClient, SqliteStatement, SqliteTransaction } from '@mastra/libsql';

/** Every SQL statement a LibSQL client was given, in order, while recording. */
export interface SqlLog {
  /** The client to hand `new LibSQLStore({ id, client })`. */
  client: SqliteClient;
  /** Records from now on, forgetting what was recorded before. */
  start(): void;
  /** Stops recording and answers the statements recorded (whitespace collapsed). */
  stop(): string[];
  /** Resolves at the next statement (recorded from now) that `matches`. */
  next(matches: (sql: string) => boolean): Promise<void>;
}

/**
 * A LibSQL client on a file that logs the statements it runs: each `execute`, each statement of a
 * `batch`, each statement of a transaction. What a count of statements per run is made from.
 *
 * @example
 * const sql = sqlLog(`file:${dir}/test.db`);
 * const storage = new LibSQLStore({ id: 'test', client: sql.client });
 * sql.start(); await doSomething(); sql.stop().length; // statements issued
 */
export function sqlLog(url: string): SqlLog {
  const raw = createClient({ url }) as unknown as SqliteClient;
  let recorded: string[] | undefined;
  const waiters: Array<{ matches: (sql: string) => boolean; done: () => void }> = [];
  const record = (statement: string | SqliteStatement) => {
    const sql = (typeof statement === 'string' ? statement : statement.sql).replace(/\s+/g, ' ').trim();
    recorded?.push(sql);
    for (const waiter of waiters.splice(0)) {
      if (waiter.matches(sql)) waiter.done();
      else waiters.push(waiter);
    }
  };
  const transaction = (tx: SqliteTransaction): SqliteTransaction =>
    new Proxy(tx, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key);
        if (key === 'execute') return (statement: string | SqliteStatement) => (record(statement), target.execute(statement));
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  const client = new Proxy(raw, {
    get(target, key) {
      if (key === 'execute') return (statement: string | SqliteStatement) => (record(statement), target.execute(statement));
      if (key === 'batch')
        return (statements: Array<string | SqliteStatement>, mode?: Parameters<SqliteClient['batch']>[1]) => (
          statements.forEach(record),
          target.batch(statements, mode)
        );
      if (key === 'transaction') return async (mode?: Parameters<SqliteClient['transaction']>[0]) => transaction(await target.transaction(mode));
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return {
    client,
    start: () => void (recorded = []),
    stop: () => {
      const done = recorded ?? [];
      recorded = undefined;
      return done;
    },
    next: (matches) => new Promise<void>((done) => waiters.push({ matches, done })),
  };
}
