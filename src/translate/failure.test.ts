import { describe, expect, it } from 'vitest';
import { isUnavailable, redactInternals, runFailure, UNAVAILABLE_MESSAGE } from './failure.js';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });
const named = (name: string, message = 'x') => Object.assign(new Error(message), { name });

describe('isUnavailable', () => {
  it.each([
    ['a refused socket', withCode('connect ECONNREFUSED 127.0.0.1:5433', 'ECONNREFUSED')],
    ['a reset socket', withCode('read ECONNRESET', 'ECONNRESET')],
    ['PostgreSQL shutting down (SQLSTATE 57P01)', withCode('terminating connection due to administrator command', '57P01')],
    ['a pg pool that could not connect in time', new Error('timeout exceeded when trying to connect')],
    ['a pg connection ended under a query', new Error('Connection terminated unexpectedly')],
    ["node-redis' closed client", named('ClientClosedError', 'The client is closed')],
    [
      "node-redis' client replaced under a command (its class tells, its name is Error)",
      new (class DisconnectsClientError extends Error {})('Disconnects client'),
    ],
    ["node-redis' client offline", new Error('The client is offline')],
    ['Redis loading its data after a restart', new Error('LOADING Redis is loading the dataset in memory')],
    ['pg: a query on a hung connection', new Error('Query read timeout')],
    ["node-redis' lost socket", named('SocketClosedUnexpectedlyError', 'Socket closed unexpectedly')],
    [
      'a refusal wrapped twice (Mastra wraps storage errors)',
      new Error('Failed to save', { cause: new Error('query failed', { cause: withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED') }) }),
    ],
    ['one of an AggregateError', new AggregateError([new Error('a'), withCode('connect ECONNREFUSED 127.0.0.1:6379', 'ECONNREFUSED')])],
  ])('%s is an outage', (_, error) => expect(isUnavailable(error)).toBe(true));

  it.each([
    ['a SQL error', withCode('relation "mastra_threads" does not exist', '42P01')],
    ['a constraint violation', withCode('duplicate key value violates unique constraint', '23505')],
    ['the model failing', new Error('demo model failure')],
    [
      'the model provider unreachable (the AI SDK names its errors AI_…)',
      Object.assign(new Error('Cannot connect to API', { cause: withCode('connect ECONNREFUSED 10.0.0.1:443', 'ECONNREFUSED') }), { name: 'AI_APICallError' }),
    ],
    ['a string', 'boom'],
    ['nothing', undefined],
  ])('%s is not', (_, error) => expect(isUnavailable(error)).toBe(false));

  it('stops on a cause chain that loops', () => {
    const a: Error & { cause?: unknown } = new Error('a');
    a.cause = a;
    expect(isUnavailable(a)).toBe(false);
  });
});

describe('redactInternals', () => {
  it.each([
    ['connect ECONNREFUSED 127.0.0.1:5433', 'connect ECONNREFUSED <address>'],
    ['connect ECONNREFUSED ::1:5432 via [::1]:5432', 'connect ECONNREFUSED ::1:5432 via <address>'],
    ['getaddrinfo ENOTFOUND db.internal.example:5432', 'getaddrinfo ENOTFOUND <address>'],
    ['could not open postgres://app:secret@db:5432/app?schema=x', 'could not open <address>'],
    ['redis://:pw@cache.internal:6379 is down', '<address> is down'],
    ['SQLITE_CANTOPEN: file:/srv/data/bridge.db', 'SQLITE_CANTOPEN: <address>'],
    ['ENOENT: no such file or directory, open /var/lib/app/x.json', 'ENOENT: no such file or directory, open <path>'],
    ['demo model failure', 'demo model failure'],
    ['a ratio of 3:4 and a time 10:30 stay', 'a ratio of 3:4 and a time 10:30 stay'],
  ])('%s', (message, redacted) => expect(redactInternals(message)).toBe(redacted));
});

describe('runFailure', () => {
  it('an outage is UNAVAILABLE with a plain sentence, whatever code was meant', () => {
    expect(runFailure(withCode('connect ECONNREFUSED 127.0.0.1:5433', 'ECONNREFUSED'), 'MODEL_ERROR')).toEqual({
      code: 'UNAVAILABLE',
      message: UNAVAILABLE_MESSAGE,
    });
  });

  it('anything else keeps its code and its message, internals taken out', () => {
    expect(runFailure(new Error('demo model failure'), 'MODEL_ERROR')).toEqual({ code: 'MODEL_ERROR', message: 'demo model failure' });
    expect(runFailure(new Error('bad key for https://api.internal:8443'), 'MODEL_ERROR').message).toBe('bad key for <address>');
  });
});
